import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat

/// `vaultfile receive`: an age file shared with the user stored as an entry, and nothing stored
/// from a file that fails.
@Suite struct ReceiveCLITests {
    static let vectors = ProjectPaths.fixtures.appendingPathComponent("vectors/age-cctv")
    /// The identity of the CCTV vectors.
    static let cctvIdentity = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"

    /// The age file of a CCTV vector (after its textual header), uncompressed ones only.
    static func vectorFile(_ name: String) throws -> [UInt8] {
        let bytes = Array(try Data(contentsOf: vectors.appendingPathComponent(name)))
        var index = 0
        while index + 1 < bytes.count, !(bytes[index] == 0x0A && bytes[index + 1] == 0x0A) { index += 1 }
        return Array(bytes[(index + 2)...])
    }

    /// `get NAME` of t.vault.
    static func get(_ cli: CLI, _ name: String) throws -> CLI.Result { try cli.run(["get", name] + cli.unlock()) }

    // MARK: - receive: success

    @Test(.enabled(if: ShareCLITests.hasAge, "age is not installed (apt-get install age): skipped"))
    func test_receive_storesAnAgeDashEFileOpenedWithTheIdentity() throws {
        let cli = try CLI.withVault(["other": "x"])
        let recipient = try ShareCLITests.ageKey(cli, "me.txt")
        let made = try ShareCLITests.tool(cli, ShareCLITests.age, ["-e", "-r", recipient, "-o", "in.age"], stdin: bytes("from a colleague\n"))
        #expect(made.ending == .exit(0))
        let result = try cli.run(["receive", "shared/token", cli.path("in.age"), "--identity", cli.path("me.txt")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.get(cli, "shared/token").stdout == bytes("from a colleague\n"))
    }

    @Test(.enabled(if: ShareCLITests.hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_receive_readsAnArmoredSSHFileFromStandardInputAsAField() throws {
        let cli = try CLI.withVault(["web": "pw"])
        _ = try ShareCLITests.sshKey(cli, "id")
        let made = try ShareCLITests.tool(cli, ShareCLITests.age, ["-e", "-a", "-R", "id.pub"], stdin: bytes("bob"))
        let result = try cli.run(["receive", "web", "--field", "user", "--identity", cli.path("id")] + cli.unlock(), stdin: made.stdout)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "web", "--field", "user"] + cli.unlock()).stdout == bytes("bob"))
        #expect(try Self.get(cli, "web").stdout == bytes("pw"))
    }

    @Test(.enabled(if: ShareCLITests.hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_receive_storesAnAgeDashRFileForAnSSHRSAKey() throws {
        let cli = try CLI.withVault([:])
        _ = try ShareCLITests.rsaKey(cli, "id_rsa")
        let made = try ShareCLITests.tool(cli, ShareCLITests.age, ["-e", "-R", "id_rsa.pub", "-o", "in.age"], stdin: bytes("for an RSA key\n"))
        #expect(made.ending == .exit(0))
        #expect(try cli.read("in.age").starts(with: bytes("age-encryption.org/v1\n-> ssh-rsa ")))
        let result = try cli.run(["receive", "shared/rsa", cli.path("in.age"), "--identity", cli.path("id_rsa")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.get(cli, "shared/rsa").stdout == bytes("for an RSA key\n"))
    }

    @Test(.enabled(if: ShareCLITests.hasAge && CLI.hasScript, "age or script (util-linux) is not installed: skipped"))
    func test_receive_opensAnAgeDashPFileWithAPassphraseFile() throws {
        let cli = try CLI.withVault([:])
        try cli.write("secret.txt", bytes("passphrase protected"))
        let command = "(sleep 1; printf 'our phrase\\n'; sleep 1; printf 'our phrase\\n'; sleep 3) | script -qec \"age -p -o in.age secret.txt\" /dev/null >/dev/null"
        #expect(try ShareCLITests.tool(cli, "/bin/sh", ["-c", command]).ending == .exit(0))
        try cli.write("phrase", bytes("our phrase\n"))
        let result = try cli.run(["receive", "p", cli.path("in.age"), "--passphrase-file", cli.path("phrase")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.get(cli, "p").stdout == bytes("passphrase protected"))
        try cli.write("wrong", bytes("not it"))
        let wrong = try cli.run(["receive", "q", cli.path("in.age"), "--passphrase-file", cli.path("wrong")] + cli.unlock())
        #expect(wrong.status == 3)
        #expect(try Self.get(cli, "q").status == 1)
    }

    @Test func test_receive_readsWhatShareWrites() throws {
        let cli = try CLI.withVault(["a": "round trip"])
        let identity = AgeIdentity.generate()
        try cli.write("me.txt", bytes(identity.encodedSecretKey() + "\n"))
        let shared = try cli.run(["share", "a", "--recipient", identity.recipient.description, "--out", cli.path("a.age")] + cli.unlock())
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try cli.run(["receive", "b", cli.path("a.age"), "--identity", cli.path("me.txt")] + cli.unlock()).status == 0)
        #expect(try Self.get(cli, "b").stdout == bytes("round trip"))
    }

    @Test(.enabled(if: CLI.hasScript, "util-linux 'script' is absent: terminal prompt tests skipped"))
    func test_receive_asksForThePassphraseOnTheTerminalOnlyForAPassphraseFile() throws {
        let cli = try CLI.withVault([:])
        let limits = KDFLimits(maxMemoryBytes: 1 << 30, maxArgon2WorkKiB: 1, maxPBKDF2Iterations: 1)
        let file = try bytes("typed in").withUnsafeBytes {
            try AgeFile.encrypt($0, to: [AgeScryptPassphrase(passphrase: SecureBytes(copying: bytes("at the prompt")), limits: limits, logN: 12)])
        }
        try cli.write("p.age", file)
        let (status, screen) = try cli.interactive(["receive", "p", cli.path("p.age")] + cli.unlock(),
                                                   answers: [("Passphrase for the age file", "at the prompt")])
        #expect(status == 0, "\(screen)")
        #expect(try Self.get(cli, "p").stdout == bytes("typed in"))
    }

    // MARK: - receive: failure

    @Test func test_receive_storesNothingFromAFileThatFails() throws {
        let cli = try CLI.withVault(["kept": "k"])
        try cli.write("id.txt", bytes(Self.cctvIdentity + "\n"))
        for (vector, status) in [("hmac_bad", 4), ("x25519_low_order", 4), ("stanza_long_line", 4), ("stream_bad_tag", 4),
                                 ("stream_no_final", 4), ("armor_garbage_trailing", 4), ("x25519_no_match", 3), ("version_unsupported", 4)] {
            try cli.write(vector, try Self.vectorFile(vector))
            let result = try cli.run(["receive", "new/\(vector)", cli.path(vector), "--identity", cli.path("id.txt")] + cli.unlock())
            #expect(result.status == Int32(status), "\(vector): \(result.stderr)")
            #expect(try Self.get(cli, "new/\(vector)").status == 1, "\(vector) stored something")
        }
        #expect(try names(cli) == ["kept"])
    }

    @Test(.enabled(if: ShareCLITests.hasSSH, "age or ssh-keygen is not installed: skipped"))
    func test_receive_withTheWrongRSAKeyMatchesNoIdentityAndStoresNothing() throws {
        let cli = try CLI.withVault(["kept": "k"])
        _ = try ShareCLITests.rsaKey(cli, "id_rsa")
        _ = try ShareCLITests.rsaKey(cli, "other_rsa")
        let made = try ShareCLITests.tool(cli, ShareCLITests.age, ["-e", "-a", "-R", "id_rsa.pub", "-o", "in.age"], stdin: bytes("not yours"))
        #expect(made.ending == .exit(0))
        let result = try cli.run(["receive", "taken", cli.path("in.age"), "--identity", cli.path("other_rsa")] + cli.unlock())
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("ssh-rsa"))
        #expect(try Self.get(cli, "taken").status == 1)
        #expect(try names(cli) == ["kept"])
    }

    @Test func test_receive_refusesAWorkFactorOverTheMemoryCapWithExit6() throws {
        let cli = try CLI.withVault([:])
        try cli.write("w23", try Self.vectorFile("scrypt_work_factor_23"))
        try cli.write("phrase", bytes("password"))
        let result = try cli.run(["receive", "w", cli.path("w23"), "--passphrase-file", cli.path("phrase"), "--kdf-max-memory", "1G"] + cli.unlock())
        #expect(result.status == 6)
        #expect(result.stderr.contains("2^23"))
        #expect(result.stderr.contains("--kdf-max-memory"))
    }

    @Test func test_receive_refusesWithoutTheIdentityAndNeverReplacesWithoutReplace() throws {
        let cli = try CLI.withVault(["a": "old"])
        let identity = AgeIdentity.generate()
        try cli.write("me.txt", bytes(identity.encodedSecretKey() + "\n"))
        try cli.write("a.age", try bytes("new").withUnsafeBytes { try AgeFile.encrypt($0, to: [identity.recipient]) })
        let none = try cli.run(["receive", "b", cli.path("a.age")] + cli.unlock())
        #expect(none.status != 0)
        #expect(none.stderr.contains("--identity"))
        try cli.write("phrase", bytes("p"))
        let phrase = try cli.run(["receive", "b", cli.path("a.age"), "--passphrase-file", cli.path("phrase")] + cli.unlock())
        #expect(phrase.status == 2)
        #expect(phrase.stderr.contains("not with a passphrase"))
        let kept = try cli.run(["receive", "a", cli.path("a.age"), "--identity", cli.path("me.txt")] + cli.unlock())
        #expect(kept.status != 0)
        #expect(kept.stderr.contains("--replace"))
        #expect(try Self.get(cli, "a").stdout == bytes("old"))
        #expect(try cli.run(["receive", "a", cli.path("a.age"), "--identity", cli.path("me.txt"), "--replace"] + cli.unlock()).status == 0)
        #expect(try Self.get(cli, "a").stdout == bytes("new"))
    }

    // MARK: - receive: edge cases

    @Test func test_receive_readsWhatShareWritesToAnSSHRSAKeyAndRefusesAMalformedStanza() throws {
        let cli = try CLI.withVault(["a": "rsa round trip"])
        let key = ProjectPaths.fixtures.appendingPathComponent("v1.4/ssh-rsa-2048.key").path
        let line = String(decoding: try Data(contentsOf: URL(fileURLWithPath: key + ".pub")), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let shared = try cli.run(["share", "a", "--recipient", line, "--out", cli.path("a.age")] + cli.unlock())
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(try cli.run(["receive", "b", cli.path("a.age"), "--identity", key] + cli.unlock()).status == 0)
        #expect(try Self.get(cli, "b").stdout == bytes("rsa round trip"))
        // The same file with its tag made 6 bytes long: refused as damaged (exit 4), nothing stored.
        var file = try cli.read("a.age")
        file.insert(contentsOf: bytes("AA"), at: "age-encryption.org/v1\n-> ssh-rsa ".utf8.count + 6)
        try cli.write("bad.age", file)
        let bad = try cli.run(["receive", "c", cli.path("bad.age"), "--identity", key] + cli.unlock())
        #expect(bad.status == 4, "\(bad.stderr)")
        #expect(bad.stderr.contains("ssh-rsa stanza is malformed"))
        #expect(try Self.get(cli, "c").status == 1)
    }

    @Test func test_receive_refusesAFileThatIsNoAgeFileBeforeUnlocking() throws {
        let cli = try CLI.withVault([:])
        try cli.write("plain", bytes("just text\n"))
        let result = try cli.run(["receive", "x", cli.path("plain"), "--vault", cli.path("t.vault")])
        #expect(result.status == 4)
        #expect(result.stderr.contains("not an age file"))
    }
}
