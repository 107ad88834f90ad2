import Foundation
import TestSupport
import Testing

/// Passphrase-protected identities through the binary: OpenSSH ed25519 keys of `ssh-keygen -N`
/// (aes256-ctr, aes256-gcm) and age identity files of `age -p` (Fixtures/protected-identities,
/// made once by the real tools), with each passphrase source, the prompt, and the refusals.
@Suite struct ProtectedIdentityCLITests {
    static let folder = ProjectPaths.fixtures.appendingPathComponent("protected-identities")
    static let sshPassphrase = "fixture ssh pässphrase"
    static let agePassphrase = "fixture age-p passphrase"
    static let ageRecipient = "age1vzdqk72zzst9rs2tk4n2fm4uzhxvsklrj6n74a4eum2ssgg2690sv6axgk"
    static let hasSSHKeygen = FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")

    static func fixture(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A vault (password "pw") holding db/password, with a slot for `recipient` when given.
    static func vault(_ cli: CLI, slotFor recipient: String?) throws {
        try cli.initVault()
        #expect(try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array("s3cret".utf8)).status == 0)
        if let recipient {
            let added = try cli.run(["slot", "add", "recipient", recipient, "--label", "member"] + cli.unlock())
            #expect(added.status == 0, "\(added.stderr)")
        }
    }

    static func publicLine(_ key: String) throws -> String {
        try String(contentsOfFile: key + ".pub", encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    func get(_ cli: CLI, _ extra: [String], env: [String: String] = [:]) throws -> CLI.Result {
        try cli.run(["get", "db/password", "--vault", cli.path("t.vault")] + extra, extra: env)
    }

    // MARK: - OpenSSH keys, each source

    @Test(arguments: ["ssh-ed25519-ctr.key", "ssh-ed25519-gcm.key"])
    func test_identity_protectedSshKeyOpensWithEachPassphraseSource(key: String) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.vault(cli, slotFor: try Self.publicLine(Self.fixture(key)))
        try cli.write("pass", Array((Self.sshPassphrase + "\n").utf8))
        let identity = ["--identity", Self.fixture(key)]
        let sources: [(String, CLI.Result)] = [
            ("file", try get(cli, identity + ["--identity-passphrase-file", cli.path("pass")])),
            ("variable", try get(cli, identity, env: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": cli.path("pass")])),
            ("descriptor", try cli.shell("\"$VF\" get db/password --vault t.vault --identity '\(Self.fixture(key))' --identity-passphrase-fd 3 3<pass")),
        ]
        for (name, result) in sources {
            #expect(result.status == 0 && result.text == "s3cret", "\(name): \(result.stderr)")
            #expect(!result.stderr.contains(Self.sshPassphrase), "\(name): the passphrase in a message")
        }
    }

    @Test(.enabled(if: hasSSHKeygen, "ssh-keygen is not installed: keys made now are skipped (the fixtures still run)"))
    func test_identity_keysOfTheRealSshKeygenMadeNowOpen() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        _ = try cli.shell("ssh-keygen -q -t ed25519 -N 'made now' -f ctr && ssh-keygen -q -t ed25519 -N 'made now' -Z aes256-gcm@openssh.com -f gcm")
        try Self.vault(cli, slotFor: try Self.publicLine(cli.path("ctr")))
        #expect(try cli.run(["slot", "add", "recipient", try Self.publicLine(cli.path("gcm"))] + cli.unlock()).status == 0)
        try cli.write("pass", Array("made now".utf8))
        for key in ["ctr", "gcm"] {
            let result = try get(cli, ["--identity", cli.path(key), "--identity-passphrase-file", cli.path("pass")])
            #expect(result.status == 0 && result.text == "s3cret", "\(key): \(result.stderr)")
        }
    }

    // MARK: - Failures

    @Test func test_identity_wrongPassphraseExits3NamingTheKeyNeverThePassphrase() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-ctr.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        try cli.write("wrong", Array("not the passphrase".utf8))
        let before = try cli.read("t.vault")
        let result = try get(cli, ["--identity", key, "--identity-passphrase-file", cli.path("wrong")])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("does not decrypt the protected key of --identity \(key)") && result.stderr.contains("hint:"), "\(result.stderr)")
        #expect(!result.stderr.contains("not the passphrase") && result.stdout.isEmpty)
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_identity_noTerminalAndNoPassphraseSourceFailsAtOnceNamingTheOptions() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-gcm.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        let start = Date()
        // setsid: no controlling terminal, as under cron or CI.
        let result = try cli.run(["--wait", CLI.binary, "get", "db/password", "--vault", cli.path("t.vault"), "--identity", key],
                                 executable: "/usr/bin/setsid")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("is protected by a passphrase, and there is no passphrase source and no terminal"), "\(result.stderr)")
        #expect(result.stderr.contains("--identity-passphrase-file") && result.stderr.contains("--identity-passphrase-fd"), "\(result.stderr)")
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test func test_identity_notAskedForAVaultWithoutASlotOfItsKind() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.vault(cli, slotFor: Self.ageRecipient)
        // An ssh key for a vault of a password and an age recipient: never asked, even with no source and no terminal.
        let ssh = try cli.run(["--wait", CLI.binary, "get", "db/password", "--vault", cli.path("t.vault"), "--identity", Self.fixture("ssh-ed25519-ctr.key")],
                              executable: "/usr/bin/setsid")
        #expect(ssh.status == 3 && ssh.stderr.contains("no keyslot of the vault opens with --identity"), "\(ssh.stderr)")
        #expect(!ssh.stderr.contains("passphrase"), "\(ssh.stderr)")
        // The same for an age -p file and a vault of a password and an ssh key.
        let other = try CLI(); defer { other.directory.remove() }
        try Self.vault(other, slotFor: try Self.publicLine(Self.fixture("ssh-ed25519-ctr.key")))
        let age = try other.run(["--wait", CLI.binary, "get", "db/password", "--vault", other.path("t.vault"), "--identity", Self.fixture("identity.age")],
                                executable: "/usr/bin/setsid")
        #expect(age.status == 3 && !age.stderr.contains("passphrase"), "\(age.stderr)")
    }

    @Test func test_identity_roundsOverTheCapExit6BeforeAnyWork() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-ctr.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        // The fixture with its rounds (after magic 15, cipher 4+10, kdf 4+6, options' length 4, salt 4+16) set to 100,000.
        let text = try String(contentsOfFile: key, encoding: .utf8).split(separator: "\n").dropFirst().dropLast().joined()
        var blob = [UInt8](try #require(Data(base64Encoded: text)))
        #expect(Array(blob[63..<67]) == [0, 0, 0, 16], "the fixture's rounds")
        blob.replaceSubrange(63..<67, with: [0, 0x01, 0x86, 0xA0])
        try cli.write("slow.key", Array(("-----BEGIN OPENSSH PRIVATE KEY-----\n" + Data(blob).base64EncodedString(options: .lineLength64Characters)
                                          + "\n-----END OPENSSH PRIVATE KEY-----\n").utf8))
        try cli.write("pass", Array(Self.sshPassphrase.utf8))
        let start = Date()
        let result = try get(cli, ["--identity", cli.path("slow.key"), "--identity-passphrase-file", cli.path("pass")])
        #expect(result.status == 6, "\(result.stderr)")
        #expect(result.stderr.contains("asks for 100000 bcrypt-pbkdf rounds") && result.stderr.contains("at most 1024"), "\(result.stderr)")
        #expect(Date().timeIntervalSince(start) < 3, "refused before any round ran")
    }

    // MARK: - age -p identity files

    @Test(arguments: ["identity.age", "identity-armored.age"])
    func test_identity_agePassphraseFileOpensARecipientSlot(file: String) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.vault(cli, slotFor: Self.ageRecipient)
        try cli.write("pass", Array(Self.agePassphrase.utf8))
        let result = try get(cli, ["--identity", Self.fixture(file), "--identity-passphrase-file", cli.path("pass")])
        #expect(result.status == 0 && result.text == "s3cret", "\(result.stderr)")
        try cli.write("wrong", Array("nope".utf8))
        let wrong = try get(cli, ["--identity", Self.fixture(file), "--identity-passphrase-file", cli.path("wrong")])
        #expect(wrong.status == 3 && wrong.stderr.contains("does not decrypt the protected key"), "\(wrong.stderr)")
    }

    @Test func test_identity_agePassphraseFileOverTheMemoryCapExit6BeforeAsking() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.vault(cli, slotFor: Self.ageRecipient)
        // The work factor raised from 2^18 to 2^20 (1 GiB for scrypt): over a 512 MiB cap, refused before the passphrase is read.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("identity.age"))))
        let marker = Array(" 18\n".utf8)
        let offset = try #require((0...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
        bytes.replaceSubrange((offset + 1)..<(offset + 3), with: Array("20".utf8))
        try cli.write("big.age", bytes)
        let result = try cli.run(["--wait", CLI.binary, "get", "db/password", "--vault", cli.path("t.vault"), "--identity", cli.path("big.age"),
                                  "--kdf-max-memory", "512M"], executable: "/usr/bin/setsid")
        #expect(result.status == 6 && result.stderr.contains("2^20"), "\(result.stderr)")
    }

    // MARK: - The prompt (util-linux script)

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
    func test_identity_promptAsksAgainAfterAWrongPassphrase() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-gcm.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        let session = try cli.interactive(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", key],
                                          answers: [("Passphrase for \(key): ", "typo"), ("Passphrase for \(key): ", Self.sshPassphrase)])
        #expect(session.status == 0 && session.screen.contains("s3cret"), "\(session.screen)")
        #expect(session.screen.contains("Sorry, that passphrase does not decrypt \(key); try again (2 of 3)."), "\(session.screen)")
        #expect(!session.screen.contains(Self.sshPassphrase) && !session.screen.contains("typo"), "no echo: \(session.screen)")
    }

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
    func test_identity_promptGivesUpAfterThreeWrongPassphrases() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.vault(cli, slotFor: Self.ageRecipient)
        let file = Self.fixture("identity.age")
        let session = try cli.interactive(["get", "db/password", "--vault", cli.path("t.vault"), "--identity", file],
                                          answers: [("Passphrase for", "one"), ("Passphrase for", "two"), ("Passphrase for", "three")])
        #expect(session.status == 3, "\(session.screen)")
        #expect(session.screen.contains("(3 tries)") && !session.screen.contains("(4 of 3)"), "\(session.screen)")
    }

    // MARK: - A protected default identity is passed over, never a stop

    /// A vault (password "pw") with slots for the protected ssh key and for a plain age identity;
    /// the key is `a-protected.key` and the age identity `b-age.txt` in the default folder.
    static func defaultsOfBothKinds(_ cli: CLI) throws {
        let plain = try DefaultIdentityCLITests.newIdentity(cli)
        try vault(cli, slotFor: try publicLine(fixture("ssh-ed25519-gcm.key")))
        let added = try cli.run(["slot", "add", "recipient", plain.recipient, "--label", "plain"] + cli.unlock())
        #expect(added.status == 0, "\(added.stderr)")
        try DefaultIdentityCLITests.writeDefault(cli, "identities/a-protected.key",
                                                 Array(try Data(contentsOf: URL(fileURLWithPath: fixture("ssh-ed25519-gcm.key")))))
        try DefaultIdentityCLITests.writeDefault(cli, "identities/b-age.txt", plain.text)
    }

    @Test func test_defaultIdentity_protectedWithNoTerminalIsSkippedAndTheNextOneOpens() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.defaultsOfBothKinds(cli)
        let result = try cli.run(["--wait", CLI.binary, "get", "db/password", "--vault", cli.path("t.vault")], executable: "/usr/bin/setsid")
        #expect(result.status == 0 && result.text == "s3cret", "\(result.stderr)")
        #expect(result.stderr.contains("no terminal to ask it on; this default identity is skipped"), "\(result.stderr)")
        #expect(result.stderr.contains("VAULTFILE_IDENTITY_PASSPHRASE_FILE"), "\(result.stderr)")
    }

    @Test func test_defaultIdentity_aWrongPassphraseFileSkipsItAndTheNextOneOpens() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.defaultsOfBothKinds(cli)
        let wrong = cli.path("wrong.txt")
        #expect(FileManager.default.createFile(atPath: wrong, contents: Data("not it\n".utf8)))
        let result = try cli.run(["get", "db/password", "--vault", cli.path("t.vault")], extra: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": wrong])
        #expect(result.status == 0 && result.text == "s3cret", "\(result.stderr)")
        #expect(result.stderr.contains("does not decrypt") && result.stderr.contains("this default identity is skipped"), "\(result.stderr)")
        #expect(!result.stderr.contains("not it"), "\(result.stderr)")
    }

    /// Issue 41's re-check: a wrong passphrase for the only protected default identity ended in "no
    /// keyslot of the vault opens with the default identity …", which was never tried. It is said
    /// to be the wrong passphrase, with where it came from, beside a wrong password too.
    @Test func test_defaultIdentity_aWrongPassphraseIsSaidWrongNotThatNoKeyslotOpens() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-gcm.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        try DefaultIdentityCLITests.writeDefault(cli, "identities/a-protected.key", Array(try Data(contentsOf: URL(fileURLWithPath: key))))
        try cli.write("wrong.txt", Array("not it\n".utf8))
        try cli.write("wrong-pw", Array("not the password\n".utf8))
        for (extra, status) in [([String](), Int32(2)), (["--password-file", cli.path("wrong-pw")], Int32(3))] {
            let result = try cli.run(["--wait", CLI.binary, "get", "db/password", "--vault", cli.path("t.vault"),
                                      "--identity-passphrase-file", cli.path("wrong.txt")] + extra, executable: "/usr/bin/setsid")
            #expect(result.status == status, "\(extra): \(result.stderr)")
            #expect(result.stderr.contains("wrong passphrase: the passphrase from --identity-passphrase-file \(cli.path("wrong.txt")) does not decrypt "
                                           + "the default identity"), "\(extra): \(result.stderr)")
            #expect(result.stderr.contains("so it was not tried") && result.stderr.contains("--identity-passphrase-file FILE"), "\(extra): \(result.stderr)")
            #expect(!result.stderr.contains("opens with the default identity"), "\(extra): said as not opening a keyslot: \(result.stderr)")
            #expect(!result.stderr.contains("not it") && !result.stderr.contains("not the password"), "\(extra): \(result.stderr)")
            if !extra.isEmpty { #expect(result.stderr.contains("no keyslot of the vault opens with the password"), "\(result.stderr)") }
        }
    }

    @Test func test_defaultIdentity_anUnreadablePassphraseFileSkipsItSayingWhyAndTheNextOneOpens() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try Self.defaultsOfBothKinds(cli)
        let missing = cli.path("no-such-passphrase.txt")
        let result = try cli.run(["get", "db/password", "--vault", cli.path("t.vault")], extra: ["VAULTFILE_IDENTITY_PASSPHRASE_FILE": missing])
        #expect(result.status == 0 && result.text == "s3cret", "\(result.stderr)")
        #expect(result.stderr.contains(missing) && result.stderr.contains("this default identity"), "\(result.stderr)")
    }

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
    func test_defaultIdentity_enterAtItsPromptSkipsItAndThePasswordPromptFollows() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let key = Self.fixture("ssh-ed25519-gcm.key")
        try Self.vault(cli, slotFor: try Self.publicLine(key))
        try DefaultIdentityCLITests.writeDefault(cli, "identities/a-protected.key", Array(try Data(contentsOf: URL(fileURLWithPath: key))))
        let session = try cli.interactive(["get", "db/password", "--vault", cli.path("t.vault")],
                                          answers: [("(Enter skips it): ", ""), ("Password for", "pw")])
        #expect(session.status == 0 && session.screen.contains("s3cret"), "\(session.screen)")
        #expect(!session.screen.contains("(2 of 3)"), "Enter skips at once: \(session.screen)")
    }

    @Test func test_defaultIdentity_anAgeDashPFileOverTheMemoryCapIsSkippedAndTheNextOneOpens() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let plain = try DefaultIdentityCLITests.newIdentity(cli)
        try Self.vault(cli, slotFor: Self.ageRecipient)
        #expect(try cli.run(["slot", "add", "recipient", plain.recipient] + cli.unlock()).status == 0)
        // identity.age with its work factor raised from 2^18 to 2^20: over a 512 MiB cap.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("identity.age"))))
        let marker = Array(" 18\n".utf8)
        let offset = try #require((0...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
        bytes.replaceSubrange((offset + 1)..<(offset + 3), with: Array("20".utf8))
        try DefaultIdentityCLITests.writeDefault(cli, "identities/a-big.age", bytes)
        try DefaultIdentityCLITests.writeDefault(cli, "identities/b-age.txt", plain.text)
        let result = try cli.run(["get", "db/password", "--vault", cli.path("t.vault"), "--kdf-max-memory", "512M"])
        #expect(result.status == 0 && result.text == "s3cret", "\(result.stderr)")
        #expect(result.stderr.contains("2^20") && result.stderr.contains("a-big.age) is skipped"), "\(result.stderr)")
    }
}
