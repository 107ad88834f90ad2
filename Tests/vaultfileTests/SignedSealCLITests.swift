import Foundation
import TestSupport
import Testing

/// Signed seals (issue 40) through the real binary: `init` makes a signed vault and says so,
/// `--unsigned` one that older releases open, `rekey --sign` converts, and an open refuses a seal
/// changed after signing.
@Suite struct SignedSealCLITests {
    private func cli() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        try cli.write("pw", Array("pw".utf8))
        return cli
    }

    /// The `format:` line of `info`.
    private func format(_ cli: CLI, _ name: String = "t.vault") throws -> String {
        let info = try cli.run(["info", "--vault", cli.path(name)])
        return info.text.split(separator: "\n").first { $0.hasPrefix("format:") }.map(String.init) ?? info.stderr
    }

    @Test func test_init_makesASignedVaultThatSetAndGetUse() throws {
        let cli = try cli(); defer { cli.directory.remove() }
        let created = try cli.run(["init"] + CLI.fastKDF + cli.unlock())
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stderr.contains("signed (format 1.3; vaultfile 0.2.0 and older cannot open it)"), "\(created.stderr)")
        #expect(try format(cli).hasSuffix("vaultfile 1.3"))
        let file = try cli.read("t.vault")
        #expect(file[9] == 3 && file[37] & 0x0A == 0x0A, "minor 3, flags 0x08 and 0x02")
        for round in 0..<3 {
            let set = try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("value \(round)".utf8))
            #expect(set.status == 0, "\(set.stderr)")
        }
        let got = try cli.run(["get", "db/password"] + cli.unlock())
        #expect(got.status == 0 && got.text == "value 2", "\(got.stderr)")
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
    }

    /// A signed vault's payload hash is of its chunks read in order: a payload long enough for the
    /// two-thread decryption (32 chunks and more) must still be read in order, or every read of
    /// a vault past about 2 MiB was refused as damaged (exit 4) right after a write succeeded.
    @Test func test_set_aSignedVaultPastTwoMiBReadsBackWhole() throws {
        let cli = try cli(); defer { cli.directory.remove() }
        #expect(try cli.run(["init"] + CLI.fastKDF + cli.unlock()).status == 0)
        var generator = SplitMix(seed: 41)
        let hex = Array("0123456789abcdef".utf8)
        let value = (0..<(3 << 20)).map { _ in hex[Int(generator.nextByte() & 15)] }
        let set = try cli.run(["set", "big"] + cli.unlock(), stdin: value)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try cli.read("t.vault").count > 3 << 20)
        for verb in [["get", "big"], ["list"], ["verify"]] {
            let read = try cli.run(verb + cli.unlock())
            #expect(read.status == 0, "\(verb): \(read.stderr)")
            if verb[0] == "get" { #expect(read.stdout == value, "the value read back whole") }
        }
        let again = try cli.run(["set", "small"] + cli.unlock(), stdin: Array("v".utf8))
        #expect(again.status == 0, "a write after it: \(again.stderr)")
    }

    @Test func test_init_unsignedMakesAVaultOlderReleasesOpenAndSaysSo() throws {
        let cli = try cli(); defer { cli.directory.remove() }
        let created = try cli.run(["init", "--unsigned"] + CLI.fastKDF + cli.unlock())
        #expect(created.status == 0 && created.stderr.contains(", unsigned (format 1.2"), "\(created.stderr)")
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        #expect(try format(cli).hasSuffix("vaultfile 1.2"))
        #expect(try cli.read("t.vault")[37] & 0x08 == 0)
    }

    @Test func test_init_ofRecipientsOnlySaysUnsignedAndHowToSign() throws {
        // No slot's secret is at hand to sign a vault of recipients only: init says so and names rekey --sign.
        let cli = try cli(); defer { cli.directory.remove() }
        let recipient = try cli.run(["keygen", "-o", cli.path("id.txt")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let created = try cli.run(["init", "--vault", cli.path("t.vault"), "--recipient", recipient])
        #expect(created.status == 0 && created.stderr.contains("unsigned (format 1.2; no slot's secret is at hand to sign it)"), "\(created.stderr)")
        #expect(created.stderr.contains(": vaultfile rekey --sign --vault \(cli.path("t.vault"))\n"), "\(created.stderr)")
        let signed = try cli.run(["rekey", "--sign", "--vault", cli.path("t.vault"), "--identity", cli.path("id.txt")])
        #expect(signed.status == 0 && signed.stderr.contains("is now signed"), "\(signed.stderr)")
    }

    @Test func test_rekeySign_withAnIdentityGivesNoWarningAboutWhoeverLostAccess() throws {
        // The warning that a rotation opened with an identity minted no key is about unsigned vaults,
        // where a removed member's re-keyed copy opens: a signed result refuses it anyway.
        let cli = try cli(); defer { cli.directory.remove() }
        let recipient = try cli.run(["keygen", "-o", cli.path("id.txt")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try cli.run(["init", "--unsigned", "--recipient", recipient] + CLI.fastKDF + cli.unlock()).status == 0)
        let rekeyed = try cli.run(["rekey", "--sign", "--vault", cli.path("t.vault"), "--identity", cli.path("id.txt")])
        #expect(rekeyed.status == 0 && rekeyed.stderr.contains("is now signed"), "\(rekeyed.stderr)")
        #expect(!rekeyed.stderr.contains("gave no slot a new key"), "\(rekeyed.stderr)")
    }

    @Test func test_slotRm_ofASignedVaultWithAnIdentityGivesNoMintedNothingWarning() throws {
        // README: the warning is for unsigned vaults; a signed one refuses a removed member's re-keyed copy by its signature.
        let cli = try cli(); defer { cli.directory.remove() }
        let owner = try cli.run(["keygen", "-o", cli.path("id.txt")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try cli.run(["keygen", "-o", cli.path("other.txt")]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let made = try cli.run(["init", "--recipient", owner, "--recipient", other] + CLI.fastKDF + cli.unlock())
        #expect(made.status == 0 && made.stderr.contains("signed (format 1.3"), "\(made.stderr)")
        let rm = try cli.run(["slot", "rm", other, "--vault", cli.path("t.vault"), "--identity", cli.path("id.txt")])
        #expect(rm.status == 0 && rm.stderr.contains("removed keyslot"), "\(rm.stderr)")
        #expect(!rm.stderr.contains("gave no slot a new key") && !rm.stderr.contains("protects nothing"), "\(rm.stderr)")
    }

    @Test func test_rekeySign_convertsAnUnsignedVaultAndSaysOlderReleasesRefuseIt() throws {
        let cli = try cli(); defer { cli.directory.remove() }
        #expect(try cli.run(["init", "--unsigned"] + CLI.fastKDF + cli.unlock()).status == 0)
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        let rekeyed = try cli.run(["rekey", "--sign"] + cli.unlock())
        #expect(rekeyed.status == 0, "\(rekeyed.stderr)")
        #expect(rekeyed.stderr.contains("is now signed (format 1.3)") && rekeyed.stderr.contains("0.2.0 and older now refuse"), "\(rekeyed.stderr)")
        #expect(try format(cli).hasSuffix("vaultfile 1.3"))
        #expect(try cli.run(["get", "k"] + cli.unlock()).text == "v")
        let again = try cli.run(["rekey", "--sign"] + cli.unlock())
        #expect(again.status == 2 && again.stderr.contains("signed already"), "\(again.stderr)")
    }

    @Test func test_get_refusesASignedVaultWhoseHeaderWasChangedWithExit4() throws {
        let cli = try cli(); defer { cli.directory.remove() }
        #expect(try cli.run(["init"] + CLI.fastKDF + cli.unlock()).status == 0)
        var file = try cli.read("t.vault")
        let length = Int(file[10]) | Int(file[11]) << 8
        file[length - 64 - 200] ^= 1  // inside the encrypted signature block
        try cli.write("t.vault", file)
        let got = try cli.run(["get", "k"] + cli.unlock())
        #expect(got.status == 4, "\(got.stderr)")
    }
}
