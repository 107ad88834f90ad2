import Foundation
import TestSupport
import Testing
import VaultFormat

/// Post-quantum members through the binary (issue 41, after the PQ branch landed): `init`'s
/// no-mixing rule (`--allow-classical`, as `slot add`), and who can write a signed vault when a
/// member's only slot is post-quantum or a plugin (neither signs): the vault is never made or
/// rotated into one no member can write, and such a member is told why and what works.
@Suite struct PostQuantumMembersCLITests {
    /// A folder with a post-quantum key `pq.txt` (its recipient returned) and a keyfile `kf`.
    static func keys(_ cli: CLI) throws -> String {
        let recipient = try PostQuantumCLITests.pqKey(cli, "pq.txt")
        #expect(try cli.run(["keygen", "--keyfile", cli.path("kf")]).status == 0)
        return recipient
    }

    static func vault(_ cli: CLI, _ name: String = "s.vault") -> [String] { ["--vault", cli.path(name), "--no-agent"] }

    // MARK: - init: age's no-mixing rule

    @Test func test_init_ofPostQuantumAndClassicalRecipientsIsRefusedWithoutAllowClassical() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        let classical = AgeIdentity.generate().recipient.description
        let refused = try cli.run(["init", "--recipient", recipient, "--recipient", classical] + Self.vault(cli))
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("post-quantum") && refused.stderr.contains("\(classical) is a classical key")
                && refused.stderr.contains("no mixing") && refused.stderr.contains("--allow-classical"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("s.vault")))
        // The same with the classical key first, or from a recipients file.
        try cli.write("team.txt", Array("\(classical)\n\(recipient)\n".utf8))
        let fromFile = try cli.run(["init", "--recipients-file", cli.path("team.txt")] + Self.vault(cli))
        #expect(fromFile.status == 2 && fromFile.stderr.contains("--allow-classical"), "\(fromFile.stderr)")
        let allowed = try cli.run(["init", "--recipient", recipient, "--recipient", classical, "--allow-classical"] + Self.vault(cli))
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(!(try PostQuantumCLITests.info(cli, "s.vault")).contains("post-quantum"))
        // A copy keeps its source's slots: the option does not go with --copy-of.
        let copy = try cli.run(["init", "--copy-of", cli.path("s.vault"), "--allow-classical"] + Self.vault(cli, "c.vault"))
        #expect(copy.status == 64 && copy.stderr.contains("--allow-classical cannot go with it"), "\(copy.stderr)")
    }

    @Test func test_init_refusesAClassicalKeyBesidePostQuantumBeforeAskingAPassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        let ssh = try ProtectedIdentityCLITests.publicLine(ProtectedIdentityCLITests.fixture("ssh-ed25519-ctr.key"))
        // A password source that cannot be read: the refusal comes first, so it is never read.
        let refused = try cli.run(["init", "--recipient", recipient, "--recipient", ssh, "--password-file", cli.path("missing")]
                                  + Self.vault(cli))
        #expect(refused.status == 2 && refused.stderr.contains("is a classical key") && !refused.stderr.contains("missing"), "\(refused.stderr)")
    }

    @Test func test_init_ofAKeyfileBesidePostQuantumIsAllowedAndPostQuantumAgainstOutsiders() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        let made = try cli.run(["init", "--recipient", recipient, "--with-keyfile", cli.path("kf")] + Self.vault(cli))
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try PostQuantumCLITests.info(cli, "s.vault").contains("post-quantum against outsiders"))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_init_andSlotAdd_countAPluginRecipientAsClassical() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        let plugin = try PluginHarness(cli)
        let refused = try plugin.runBounded(["init", "--recipient", recipient, "--recipient", plugin.recipient] + Self.vault(cli),
                                            extra: plugin.environment())
        #expect(refused.status == 2 && refused.stderr.contains("age plugin recipient, counted as classical"), "\(refused.stderr)")
        #expect(!plugin.takeLog().contains("argv"), "the plugin ran for a refused init")
        // A post-quantum vault (keyfile beside) refuses a plugin slot the same way in 'slot add'.
        #expect(try cli.run(["init", "--recipient", recipient, "--with-keyfile", cli.path("kf")] + Self.vault(cli)).status == 0)
        let added = try plugin.runBounded(["slot", "add", "recipient", plugin.recipient, "--keyfile", cli.path("kf")] + Self.vault(cli),
                                          extra: plugin.environment())
        #expect(added.status == 2 && added.stderr.contains("counted as classical"), "\(added.stderr)")
        // A vault with a plugin slot is never called post-quantum: the plugin's labels are unknown to it.
        let mixed = try plugin.runBounded(["slot", "add", "recipient", plugin.recipient, "--allow-classical", "--keyfile", cli.path("kf")]
                                          + Self.vault(cli), extra: plugin.environment())
        #expect(mixed.status == 0, "\(mixed.stderr)")
        #expect(!(try PostQuantumCLITests.info(cli, "s.vault")).contains("post-quantum"))
    }

    // MARK: - Signed vaults: who can write

    @Test func test_init_ofPostQuantumRecipientsOnlyIsUnsignedAndEveryMemberWrites() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        let made = try cli.run(["init", "--recipient", recipient] + Self.vault(cli))
        #expect(made.status == 0 && made.stderr.contains("unsigned"), "\(made.stderr)")
        // The hint does not send the user to 'rekey --sign' with an identity that cannot sign.
        #expect(made.stderr.contains("cannot sign seals") && made.stderr.contains("slot add password"), "\(made.stderr)")
        let byMember = Self.vault(cli) + ["--identity", cli.path("pq.txt")]
        #expect(try cli.run(["set", "a"] + byMember, stdin: Array("v".utf8)).status == 0)
        let signing = try cli.run(["rekey", "--sign"] + byMember)
        #expect(signing.status == 2 && signing.stderr.contains("cannot sign seals") && signing.stderr.contains("keyfile"), "\(signing.stderr)")
        #expect(try cli.run(["get", "a"] + byMember).stdout == Array("v".utf8))
    }

    @Test func test_set_byAPostQuantumMemberOfASignedVaultSaysWhoCanWrite() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        #expect(try cli.run(["init", "--recipient", recipient, "--with-keyfile", cli.path("kf")] + Self.vault(cli)).status == 0)
        let before = try cli.read("s.vault")
        let refused = try cli.run(["set", "a", "--identity", cli.path("pq.txt")] + Self.vault(cli), stdin: Array("v".utf8))
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("keyslot 0, which opened it, is post-quantum (mlkem768x25519)")
                && refused.stderr.contains("1 of its slots can") && refused.stderr.contains("slot list"), "\(refused.stderr)")
        // The old hint sent the member to --identity, which is what it used.
        #expect(!refused.stderr.contains("--identity"), "\(refused.stderr)")
        #expect(try cli.read("s.vault") == before)
    }

    @Test func test_rotation_neverLeavesASignedVaultWithoutAWriter() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let recipient = try Self.keys(cli)
        #expect(try cli.run(["init", "--recipient", recipient, "--with-keyfile", cli.path("kf")] + Self.vault(cli)).status == 0)
        let before = try cli.read("s.vault")
        // The post-quantum member cannot remove the one slot that signs (it cannot sign the seal)…
        let byMember = try cli.run(["slot", "rm", "1", "--identity", cli.path("pq.txt")] + Self.vault(cli))
        #expect(byMember.status == 2 && byMember.stderr.contains("cannot sign seals"), "\(byMember.stderr)")
        // …and the keyfile cannot remove itself, so a writer always stays.
        let bySigner = try cli.run(["slot", "rm", "1", "--keyfile", cli.path("kf")] + Self.vault(cli))
        #expect(bySigner.status == 2 && bySigner.stderr.contains("cannot remove itself"), "\(bySigner.stderr)")
        #expect(try cli.read("s.vault") == before)
        // A copy made through the post-quantum slot would be a signed vault it cannot sign.
        let copy = try cli.run(["init", "--copy-of", cli.path("s.vault"), "--identity", cli.path("pq.txt")] + Self.vault(cli, "c.vault"))
        #expect(copy.status == 2 && copy.stderr.contains("post-quantum") && !FileManager.default.fileExists(atPath: cli.path("c.vault")),
                "\(copy.stderr)")
        // The keyfile member still writes, and the post-quantum member reads what it wrote.
        #expect(try cli.run(["set", "a", "--keyfile", cli.path("kf")] + Self.vault(cli), stdin: Array("w".utf8)).status == 0)
        #expect(try cli.run(["get", "a", "--identity", cli.path("pq.txt")] + Self.vault(cli)).stdout == Array("w".utf8))
    }

    @Test(.enabled(if: PluginHarness.hasPython, "python3 is not installed: skipped"))
    func test_set_byAPluginMemberOfASignedVaultSaysWhoCanWrite() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let made = try cli.run(["init"] + cli.unlock() + CLI.fastKDF)
        #expect(made.status == 0 && made.stderr.contains("signed"), "\(made.stderr)")
        let plugin = try PluginHarness(cli)
        #expect(try plugin.runBounded(["slot", "add", "recipient", plugin.recipient] + cli.unlock(), extra: plugin.environment()).status == 0)
        let before = try cli.read("t.vault")
        let refused = try plugin.runBounded(["set", "k", "--vault", cli.path("t.vault"), "--no-agent", "--identity", cli.path("id.txt")],
                                            stdin: Array("w".utf8), extra: plugin.environment())
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("keyslot 1, which opened it, is an age plugin slot") && refused.stderr.contains("1 of its slots can"),
                "\(refused.stderr)")
        #expect(!refused.stderr.contains("--identity"), "\(refused.stderr)")
        #expect(try cli.read("t.vault") == before)
    }
}
