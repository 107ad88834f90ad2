import Foundation
import TestSupport
import Testing
import VaultFormat

/// What a new age or ssh user met in issue 41's cold review (reviews/cold41.md): a second identity
/// beside the default one, `unlock` of a signed vault through a default identity that cannot sign,
/// `rekey --sign` taking write access from post-quantum members, `receive` of an `age -p` file
/// without a terminal, and hints that offer a prompt an explicit source switched off.
@Suite struct ColdReviewCLITests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - M1: a second identity beside the default one

    @Test func test_keygen_onTheDefaultIdentityFileSaysWhereASecondIdentityGoes() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let file = cli.configDirectory + "/vaultfile/identity.txt"
        let first = try cli.run(["keygen", "-o", file])
        #expect(first.status == 0, "\(first.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let second = try cli.run(["keygen", "--pq", "-o", file])
        #expect(second.status == 2 && second.stderr.contains("exists already"), "\(second.stderr)")
        #expect(second.stderr.contains("/vaultfile/identities/") && second.stderr.contains("append its line"), "\(second.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        // The way the hint names works: the identities/ folder is tried by default.
        let pq = try cli.run(["keygen", "--pq", "-o", cli.configDirectory + "/vaultfile/identities/pq.txt"])
        #expect(pq.status == 0, "\(pq.stderr)")
        let recipient = Self.text(pq.stdout).trimmingCharacters(in: .newlines)
        let made = try cli.run(["init", "--vault", cli.path("q.vault"), "--recipient", recipient, "--no-agent"])
        #expect(made.status == 0, "\(made.stderr)")
        let set = try cli.run(["set", "a", "--vault", cli.path("q.vault"), "--no-agent"], stdin: bytes("v"))
        #expect(set.status == 0, "\(set.stderr)")
        // Another path keeps the plain hint.
        let other = try cli.run(["keygen", "-o", cli.configDirectory + "/vaultfile/identities/pq.txt"])
        #expect(other.status == 2 && other.stderr.contains("choose another path") && !other.stderr.contains("append"), "\(other.stderr)")
    }

    // MARK: - M2: unlock of a signed vault through a default identity that cannot sign

    @Test(.enabled(if: CLI.hasScript, "script (util-linux) is not installed: skipped"))
    func test_unlock_onATerminalAsksThePasswordSoThatTheAgentWrites() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        try PostQuantumSigningCLITests.signedVault(cli)
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", try cli.read("pq.txt"))
        let path = cli.path("s.vault")
        let session = try cli.interactive(["unlock", "--vault", path], answers: [("Password for", "pw")])
        #expect(session.status == 0 && session.screen.contains("cannot sign the seals"), "\(session.screen)")
        #expect(!session.screen.contains("unlocked for reading"), "\(session.screen)")
        // The agent signs by delegation: a write through it succeeds with no source given.
        let set = try cli.run(["set", "b", "--vault", path], stdin: bytes("w"))
        #expect(set.status == 0, "\(set.stderr)")
        let got = try cli.run(["get", "b", "--vault", path, "--no-agent"])
        #expect(got.status == 0 && got.stdout == bytes("w"), "\(got.stderr)")
    }

    @Test func test_unlock_withoutATerminalSaysHowToUnlockForWriting() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        try PostQuantumSigningCLITests.signedVault(cli)
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", try cli.read("pq.txt"))
        let path = cli.path("s.vault")
        let unlocked = try cli.run(["unlock", "--vault", path])
        #expect(unlocked.status == 0 && unlocked.stderr.contains("unlocked for reading"), "\(unlocked.stderr)")
        #expect(unlocked.stderr.contains("vaultfile lock --vault") && unlocked.stderr.contains("--password-fd 0"), "\(unlocked.stderr)")
        // No prompt follows without a terminal, so the line that announces it is not printed.
        #expect(!unlocked.stderr.contains("its password can, to write it"), "\(unlocked.stderr)")
        let refused = try cli.run(["set", "b", "--vault", path], stdin: bytes("w"))
        #expect(refused.status == 2 && refused.stderr.contains("ssh-rsa identity"), "\(refused.stderr)")
        // The way the warning names: lock, then unlock with the password; the agent then writes.
        #expect(try cli.run(["lock", "--vault", path]).status == 0)
        let again = try cli.run(["unlock", "--vault", path, "--password-fd", "0"], stdin: bytes("pw"))
        #expect(again.status == 0 && !again.stderr.contains("unlocked for reading"), "\(again.stderr)")
        let set = try cli.run(["set", "b", "--vault", path], stdin: bytes("w"))
        #expect(set.status == 0, "\(set.stderr)")
    }

    // MARK: - M3: rekey --sign names who loses write access

    @Test func test_rekeySign_namesThePostQuantumSlotsThatCanNoLongerWrite() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let pq = try PostQuantumCLITests.pqKey(cli, "pq.txt")
        let made = try cli.run(["keygen", "-o", cli.path("x.txt")])
        let classical = Self.text(made.stdout).trimmingCharacters(in: .newlines)
        let created = try cli.run(["init", "--vault", cli.path("t.vault"), "--recipient", classical, "--recipient", pq,
                                   "--allow-classical", "--no-agent"])
        #expect(created.status == 0 && created.stderr.contains("unsigned"), "\(created.stderr)")
        // init's hint that recommends the signing says what it costs the post-quantum member.
        #expect(created.stderr.contains("rekey --sign") && created.stderr.contains("no longer write"), "\(created.stderr)")
        let signed = try cli.run(["rekey", "--sign", "--vault", cli.path("t.vault"), "--identity", cli.path("x.txt"), "--no-agent"])
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr.contains("keyslot 1 (mlkem768x25519) cannot sign seals") && signed.stderr.contains("no longer write"),
                "\(signed.stderr)")
        // L7: a vault with long slot keys is format 1.4, as info says.
        #expect(signed.stderr.contains("is now signed (format 1.4)"), "\(signed.stderr)")
        #expect(!signed.stderr.contains("keyslot 0 (recipient) cannot sign"), "\(signed.stderr)")
        let write = try cli.run(["set", "b", "--vault", cli.path("t.vault"), "--identity", cli.path("pq.txt"), "--no-agent"], stdin: bytes("w"))
        #expect(write.status == 2 && write.stderr.contains("cannot sign"), "\(write.stderr)")
    }

    // MARK: - M4: receive of an age -p file without a terminal

    @Test func test_receive_ofAPassphraseFileWithoutATerminalNamesThePassphraseOptions() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("pp", bytes("file passphrase"))
        #expect(try cli.run(["set", "a"] + cli.unlock() + ["--no-agent"], stdin: bytes("v")).status == 0)
        let shared = try cli.run(["share", "a", "--passphrase-file", cli.path("pp"), "--out", cli.path("p.age")] + cli.unlock() + ["--no-agent"])
        #expect(shared.status == 0, "\(shared.stderr)")
        for (arguments, stdin) in [([cli.path("p.age")], [UInt8]()), ([], try cli.read("p.age"))] {
            let received = try cli.run(["receive", "b"] + arguments + cli.unlock() + ["--no-agent"], stdin: stdin)
            #expect(received.status == 2, "\(received.stderr)")
            #expect(received.stderr.contains("encrypted with a passphrase") && received.stderr.contains("--passphrase-file"), "\(received.stderr)")
            #expect(!received.stderr.contains("--password-file") && !received.stderr.contains("password source"), "\(received.stderr)")
        }
        // L14: nothing on standard input is said as such, not as a damaged age header.
        let empty = try cli.run(["receive", "b"] + cli.unlock() + ["--no-agent"])
        #expect(empty.status == 2 && empty.stderr.contains("standard input is empty"), "\(empty.stderr)")
        let given = try cli.run(["receive", "b", cli.path("p.age"), "--passphrase-file", cli.path("pp")] + cli.unlock() + ["--no-agent"])
        #expect(given.status == 0, "\(given.stderr)")
    }

    // MARK: - M5: no prompt offered when an explicit source switched it off

    @Test func test_nothingOpens_withAnIdentityGivenSaysThePromptIsNotShown() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        _ = try cli.run(["keygen", "-o", cli.path("other.txt")])
        let given = try cli.run(["get", "a", "--vault", cli.path("t.vault"), "--identity", cli.path("other.txt"), "--no-agent"])
        #expect(given.status == 3, "\(given.stderr)")
        #expect(given.stderr.contains("the prompt is not shown when --identity") && !given.stderr.contains("else the prompt on a terminal"),
                "\(given.stderr)")
        let none = try cli.run(["get", "a", "--vault", cli.path("t.vault"), "--no-agent"])
        #expect(none.status == 2 && none.stderr.contains("no terminal to ask on"), "\(none.stderr)")
    }

    @Test func test_set_withAPostQuantumIdentityGivenDoesNotOfferAPrompt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try PostQuantumSigningCLITests.signedVault(cli)
        let set = try cli.run(["set", "b", "--identity", cli.path("pq.txt")] + PostQuantumSigningCLITests.vault(cli), stdin: bytes("w"))
        #expect(set.status == 2 && set.stderr.contains("shown only when no other source is given"), "\(set.stderr)")
    }

    // MARK: - Lows: recipients that are plainly something else

    @Test func test_recipient_aSecretKeyOrAnotherSSHKindIsNamedForWhatItIs() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.setEntries(["a": "v"])
        _ = try cli.run(["keygen", "-o", cli.path("id.txt")])
        let secret = try #require(Self.text(try cli.read("id.txt")).split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") }).description
        let ecdsa = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEx= me@host"
        let sk = "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIE= me@host"
        for (text, words) in [(secret, "this is a secret key (an identity), not a recipient"), (ecdsa, "'ecdsa-sha2-nistp256' keys are not supported"),
                              (sk, "'sk-ssh-ed25519@openssh.com' keys are not supported")] {
            let added = try cli.run(["slot", "add", "recipient", text] + cli.unlock() + ["--no-agent"])
            #expect(added.status == 2 && added.stderr.contains(words), "\(added.stderr)")
            let shared = try cli.run(["share", "a", "--recipient", text, "--out", cli.path("o.age")] + cli.unlock() + ["--no-agent"])
            #expect(shared.status == 2 && shared.stderr.contains(words), "\(shared.stderr)")
            // A secret key is never echoed.
            #expect(!added.stderr.contains(secret) && !shared.stderr.contains(secret))
        }
    }

    // MARK: - Lows: receive names the identities it tried

    @Test func test_receive_forAnotherKeyNamesTheDefaultIdentityItTried() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.setEntries(["a": "v"])
        let made = try cli.run(["keygen", "-o", cli.path("someone.txt")])
        let someone = Self.text(made.stdout).trimmingCharacters(in: .newlines)
        let shared = try cli.run(["share", "a", "--recipient", someone, "--out", cli.path("x.age")] + cli.unlock() + ["--no-agent"])
        #expect(shared.status == 0, "\(shared.stderr)")
        let file = cli.configDirectory + "/vaultfile/identity.txt"
        #expect(try cli.run(["keygen", "-o", file]).status == 0)
        let received = try cli.run(["receive", "b", cli.path("x.age")] + cli.unlock() + ["--no-agent"])
        #expect(received.status == 3, "\(received.stderr)")
        #expect(received.stderr.contains("note: tried on the age file: the default identity \(file)"), "\(received.stderr)")
        #expect(received.stderr.contains("no identity tried opens the age file") && !received.stderr.contains("no identity given"), "\(received.stderr)")
    }

    // MARK: - Lows: help in receive's words

    @Test func test_receiveHelp_saysWhatItsPassphraseAndIdentityOptionsDo() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let help = try cli.run(["receive", "--help"])
        let text = Self.text(help.stdout).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.status == 0)
        #expect(text.contains("receive: the file was made with one"), "\(text)")
        #expect(text.contains("OpenSSH ed25519 or RSA key") && text.contains("the default identities"), "\(text)")
    }

    // MARK: - Lows: agent status of an unsigned vault; a wrong identity passphrase

    @Test func test_agentStatus_ofAnUnsignedVaultSaysItNeedsNoSigning() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        let status = try cli.run(["agent", "status"])
        #expect(status.status == 0 && status.text.contains("unsigned vault: writes need no signing"), "\(status.text)")
        #expect(!status.text.contains("cannot sign writes"), "\(status.text)")
    }

    @Test func test_wrongIdentityPassphrase_hintNeverPrintsTheSecretKey() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let made = try cli.run(["keygen", "-o", cli.path("id.txt")])
        let recipient = Self.text(made.stdout).trimmingCharacters(in: .newlines)
        #expect(try cli.run(["slot", "add", "recipient", recipient] + cli.unlock() + ["--no-agent"]).status == 0)
        // The identity, encrypted with a passphrase (age -p), as share writes it.
        try cli.setEntries(["key": Self.text(try cli.read("id.txt"))])
        try cli.write("pp", bytes("right"))
        try cli.write("wrong", bytes("wrong"))
        let shared = try cli.run(["share", "key", "--passphrase-file", cli.path("pp"), "--out", cli.path("id.age")] + cli.unlock() + ["--no-agent"])
        #expect(shared.status == 0, "\(shared.stderr)")
        let refused = try cli.run(["list", "--vault", cli.path("t.vault"), "--identity", cli.path("id.age"),
                                   "--identity-passphrase-file", cli.path("wrong"), "--no-agent"])
        #expect(refused.status == 3 && refused.stderr.contains("age -d KEY > /dev/null"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("prints the identity"), "\(refused.stderr)")
        // L4: as the default identity, without a terminal, it is skipped, and the refusal says so (not "tried").
        try DefaultIdentityCLITests.writeDefault(cli, "identity.txt", try cli.read("id.age"))
        let skipped = try cli.run(["list", "--vault", cli.path("t.vault"), "--no-agent"])
        #expect(skipped.stderr.contains("vaultfile: note: ") && skipped.stderr.contains("was skipped: protected by a passphrase"), "\(skipped.stderr)")
        #expect(!skipped.stderr.contains("no keyslot of the vault opens with the default identity"), "\(skipped.stderr)")
        #expect(skipped.stderr.contains("VAULTFILE_IDENTITY_PASSPHRASE_FILE"), "\(skipped.stderr)")
        let given = try cli.run(["list", "--vault", cli.path("t.vault"), "--no-agent"], extra: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": cli.path("pp")])
        #expect(given.status == 0, "\(given.stderr)")
    }
}
