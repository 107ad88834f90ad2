import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat

/// `vaultfile share`: real age v1 files of one value, opened by Debian's age 1.1.1.
@Suite struct ShareCLITests {
    static let age = "/usr/bin/age", keygen = "/usr/bin/age-keygen", sshKeygen = "/usr/bin/ssh-keygen"
    static let hasAge = FileManager.default.isExecutableFile(atPath: age) && FileManager.default.isExecutableFile(atPath: keygen)
    static let hasSSH = hasAge && FileManager.default.isExecutableFile(atPath: sshKeygen)

    /// Runs `tool arguments…` in the test's folder.
    static func tool(_ cli: CLI, _ tool: String, _ arguments: [String], stdin: [UInt8] = []) throws -> ChildProcess.Output {
        try ChildProcess(executable: tool, arguments: arguments, environment: ["PATH": "/usr/bin:/bin"], directory: cli.directory.url.path,
                         stdin: stdin).finish()
    }

    /// A new age identity in `name`; returns its recipient.
    static func ageKey(_ cli: CLI, _ name: String) throws -> String {
        #expect(try tool(cli, keygen, ["-o", name]).ending == .exit(0))
        return String(decoding: try tool(cli, keygen, ["-y", name]).stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new ssh-ed25519 key in `name` (no passphrase); returns its public line.
    static func sshKey(_ cli: CLI, _ name: String) throws -> String {
        #expect(try tool(cli, sshKeygen, ["-q", "-t", "ed25519", "-N", "", "-C", "colleague", "-f", name]).ending == .exit(0))
        return String(decoding: try cli.read(name + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A new 2,048-bit ssh-rsa key in `name` (no passphrase), as `ssh-keygen -t rsa -b 2048 -N ''` makes it; returns its public line.
    static func rsaKey(_ cli: CLI, _ name: String) throws -> String {
        #expect(try tool(cli, sshKeygen, ["-q", "-t", "rsa", "-b", "2048", "-N", "", "-C", "rsa colleague", "-f", name]).ending == .exit(0))
        return String(decoding: try cli.read(name + ".pub"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `age -d -i identity` of `file`'s bytes.
    static func ageDecrypt(_ cli: CLI, identity: String, _ bytes: [UInt8]) throws -> ChildProcess.Output {
        try tool(cli, age, ["-d", "-i", identity], stdin: bytes)
    }

    // MARK: - share: success

    @Test(.enabled(if: hasAge, "age is not installed (apt-get install age): skipped"))
    func test_share_toAnAgeRecipientOpensWithAgeDashDAndIsPrivate() throws {
        let cli = try CLI.withVault(["db/password": "s3cret value\n"])
        let recipient = try Self.ageKey(cli, "key.txt")
        let result = try cli.run(["share", "db/password", "--recipient", recipient, "--out", cli.path("out.age")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let file = try cli.read("out.age")
        #expect(file.starts(with: bytes("age-encryption.org/v1\n-> X25519 ")))
        let opened = try Self.ageDecrypt(cli, identity: "key.txt", file)
        #expect(opened.ending == .exit(0))
        #expect(opened.stdout == bytes("s3cret value\n"))
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("out.age"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test(.enabled(if: hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_share_toAnSSHEd25519KeyOpensWithAgeDashD() throws {
        let cli = try CLI.withVault(["api/token": "tok-123"])
        let line = try Self.sshKey(cli, "id")
        let result = try cli.run(["share", "api/token", "--recipient", line] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.starts(with: bytes("age-encryption.org/v1\n-> ssh-ed25519 ")))
        let opened = try Self.ageDecrypt(cli, identity: "id", result.stdout)
        #expect(opened.stdout == bytes("tok-123"))
    }

    @Test(.enabled(if: hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_share_toAnSSHRSAKeyOpensWithAgeDashDOnlyWithThatKey() throws {
        let cli = try CLI.withVault(["api/token": "rsa-tok-456"])
        let line = try Self.rsaKey(cli, "id_rsa")
        _ = try Self.rsaKey(cli, "other_rsa")
        let result = try cli.run(["share", "api/token", "--recipient", line, "--out", cli.path("t.age")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let file = try cli.read("t.age")
        #expect(file.starts(with: bytes("age-encryption.org/v1\n-> ssh-rsa ")))
        let opened = try Self.ageDecrypt(cli, identity: "id_rsa", file)
        #expect(opened.ending == .exit(0), "\(String(decoding: opened.stderr, as: UTF8.self))")
        #expect(opened.stdout == bytes("rsa-tok-456"))
        let wrong = try Self.ageDecrypt(cli, identity: "other_rsa", file)
        #expect(wrong.ending != .exit(0))
        #expect(wrong.stdout.isEmpty)
    }

    @Test(.enabled(if: hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_share_fieldToARecipientsFileArmoredOpensForEveryone() throws {
        let cli = try CLI.withVault(["web/login": "pw-value"])
        #expect(try cli.run(["set", "web/login", "--field", "user"] + cli.unlock(), stdin: bytes("alice@example.org")).status == 0)
        let alice = try Self.ageKey(cli, "alice.txt"), bob = try Self.sshKey(cli, "bob")
        try cli.write("team.txt", bytes("# Alice\n\(alice)\n\n# Bob\n\(bob)\n"))
        let result = try cli.run(["share", "web/login", "--field", "user", "--recipients-file", cli.path("team.txt"), "--armor"] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"))
        for identity in ["alice.txt", "bob"] {
            #expect(try Self.ageDecrypt(cli, identity: identity, result.stdout).stdout == bytes("alice@example.org"), "\(identity)")
        }
    }

    @Test(.enabled(if: hasAge && CLI.hasScript, "age or script (util-linux) is not installed: skipped"))
    func test_share_withAPassphraseFileOpensWithAgeDashDOnATerminal() throws {
        let cli = try CLI.withVault(["wifi": "hunter2"])
        try cli.write("phrase", bytes("long shared phrase\n"))
        let result = try cli.run(["share", "wifi", "--passphrase-file", cli.path("phrase"), "--out", cli.path("wifi.age")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.read("wifi.age").starts(with: bytes("age-encryption.org/v1\n-> scrypt ")))
        // age reads a passphrase only from its terminal: util-linux script gives it one.
        let command = "(sleep 1; printf 'long shared phrase\\n'; sleep 3) | script -qec \"age -d -o wifi.txt wifi.age\" /dev/null >/dev/null"
        let opened = try Self.tool(cli, "/bin/sh", ["-c", command])
        #expect(opened.ending == .exit(0))
        #expect(try cli.read("wifi.txt") == bytes("hunter2"))
    }

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
    func test_share_asksForThePassphraseTwiceOnTheTerminal() throws {
        let cli = try CLI.withVault(["wifi": "hunter2"])
        let (status, screen) = try cli.interactive(["share", "wifi", "--passphrase", "--out", cli.path("wifi.age")] + cli.unlock(),
                                                   answers: [("Passphrase for the age file of wifi", "typed phrase"), ("Repeat the passphrase", "typed phrase")])
        #expect(status == 0, "\(screen)")
        let limits = KDFLimits(maxMemoryBytes: 1 << 30, maxArgon2WorkKiB: 1, maxPBKDF2Iterations: 1)
        let opened = try AgeFile.decrypt(try cli.read("wifi.age"), identities: [], passphrase: SecureBytes(copying: bytes("typed phrase")), limits: limits)
        #expect(opened.withUnsafeBytes { Array($0) } == bytes("hunter2"))
    }

    // MARK: - share: failure

    @Test func test_share_refusesAPassphraseBesideRecipientsAndNoRecipientAtAll() throws {
        let cli = try CLI.withVault(["a": "1"])
        let recipient = AgeIdentity.generate().recipient.description
        try cli.write("phrase", bytes("x"))
        let mixed = try cli.run(["share", "a", "--recipient", recipient, "--passphrase-file", cli.path("phrase")] + cli.unlock())
        #expect(mixed.status == 64)
        #expect(mixed.stderr.contains("only recipient"))
        #expect(try cli.run(["share", "a"] + cli.unlock()).status == 64)
    }

    @Test func test_share_refusesAMalformedOrUnsupportedRecipientBeforeUnlocking() throws {
        let cli = try CLI.withVault(["a": "1"])
        let bad = try cli.run(["share", "a", "--recipient", "age1notakey", "--vault", cli.path("t.vault")])
        #expect(bad.status == 2)
        #expect(!bad.stderr.contains("Password"))
        let rsa = try cli.run(["share", "a", "--recipient", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ me"] + cli.unlock())
        #expect(rsa.status != 0)
        #expect(rsa.stderr.contains("ssh-rsa"))
    }

    @Test func test_share_failsForAMissingEntryAndWritesNothing() throws {
        let cli = try CLI.withVault(["a": "1"])
        let result = try cli.run(["share", "b", "--recipient", AgeIdentity.generate().recipient.description, "--out", cli.path("b.age")] + cli.unlock())
        #expect(result.status == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.path("b.age")))
    }

    @Test func test_share_neverReplacesAnExistingFileWithoutOverwrite() throws {
        let cli = try CLI.withVault(["a": "1"])
        let identity = AgeIdentity.generate()
        try cli.write("a.age", bytes("keep me"))
        let refused = try cli.run(["share", "a", "--recipient", identity.recipient.description, "--out", cli.path("a.age")] + cli.unlock())
        #expect(refused.status != 0)
        #expect(try cli.read("a.age") == bytes("keep me"))
        let replaced = try cli.run(["share", "a", "--recipient", identity.recipient.description, "--out", cli.path("a.age"), "--overwrite"] + cli.unlock())
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try AgeFile.decrypt(try cli.read("a.age"), identities: [identity]).withUnsafeBytes { Array($0) } == bytes("1"))
    }

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal tests skipped"))
    func test_share_refusesABinaryFileOnATerminalButWritesArmor() throws {
        let cli = try CLI.withVault(["a": "1"])
        let recipient = AgeIdentity.generate().recipient.description
        let (status, screen) = try cli.interactive(["share", "a", "--recipient", recipient] + cli.unlock(), answers: [])
        #expect(status == 2)
        #expect(screen.contains("--armor"))
        let (armored, text) = try cli.interactive(["share", "a", "--recipient", recipient, "--armor"] + cli.unlock(), answers: [])
        #expect(armored == 0)
        #expect(text.contains("-----BEGIN AGE ENCRYPTED FILE-----"))
    }

    // MARK: - share: edge cases

    @Test func test_share_carriesABinaryValueOfSeveralChunksExactly() throws {
        let value = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let cli = try CLI.withEntriesSet([("blob", value)])
        let identity = AgeIdentity.generate()
        let result = try cli.run(["share", "blob", "--recipient", identity.recipient.description] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try AgeFile.decrypt(result.stdout, identities: [identity]).withUnsafeBytes { Array($0) } == value)
    }
}
