import Foundation
import TestSupport
import Testing

/// ssh private keys as entries through the binary: `set NAME --ssh-key` of keys the real
/// ssh-keygen makes (every type; protected ones decrypted once), `get NAME` (the key itself, which
/// ssh-keygen reads) and `get NAME --field public|fingerprint|ssh-key`, and `vaultfile ssh-keygen`.
@Suite(.enabled(if: SSHKeygen.path != nil, "ssh-keygen is not installed (apt-get install openssh-client): the ssh key suite is skipped"))
struct SSHKeyCLITests {
    /// A vault `t.vault` (password in `pw`) with one entry.
    static func setUp() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        cli.environment["VAULTFILE_NO_AGENT"] = "1"
        try cli.initVault()
        try cli.setEntries(["db/password": "s3cret"])
        return cli
    }

    static func text(_ cli: CLI, _ file: String) throws -> String {
        String(decoding: try cli.read(file), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `get NAME` written to `file` (0600), then `ssh-keygen -y` of it.
    static func publicLineOfStoredKey(_ cli: CLI, _ name: String, file: String) throws -> String {
        let get = try cli.run(["get", name] + cli.unlock())
        #expect(get.status == 0 && get.text.hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----\n"), "\(get.stderr)")
        try cli.write(file, get.stdout)
        return try SSHKeygen.publicLine(of: cli.path(file))
    }

    // MARK: - set --ssh-key

    @Test(arguments: [("ed25519", nil), ("ecdsa", 384), ("rsa", 2048)] as [(String, Int?)])
    func test_setSSHKey_storesAnSSHKeygenKeyWithItsFields(type: String, bits: Int?) throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        try SSHKeygen.make(type, bits: bits, passphrase: "", cipher: nil, comment: "bob@laptop", at: cli.path("id"))
        let set = try cli.run(["set", "ssh/bob", "--ssh-key", "--value-file", cli.path("id")] + cli.unlock())
        #expect(set.status == 0 && set.stdout.isEmpty, "\(set.stderr)")
        let pub = try Self.text(cli, "id.pub")
        #expect(try cli.run(["get", "ssh/bob", "--field", "public"] + cli.unlock()).text == pub + "\n", "a line, as ssh-keygen -y prints it")
        #expect(try cli.run(["get", "ssh/bob", "--field", "fingerprint"] + cli.unlock()).text == (try SSHKeygen.fingerprint(of: cli.path("id"))))
        #expect(try cli.run(["get", "ssh/bob", "--field", "comment"] + cli.unlock()).text == "bob@laptop")
        #expect(try cli.run(["get", "ssh/bob", "--field", "ssh-key"] + cli.unlock()).text == String(pub.split(separator: " ")[0]))
        #expect(try Self.publicLineOfStoredKey(cli, "ssh/bob", file: "out") == pub)
        #expect(try cli.run(["get", "db/password"] + cli.unlock()).text == "s3cret", "other entries untouched")
    }

    @Test func test_setSSHKey_readsStandardInputAndKeepsTheEntrysOtherFields() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        try SSHKeygen.make("ed25519", bits: nil, passphrase: "", cipher: nil, comment: "first", at: cli.path("a"))
        try SSHKeygen.make("ecdsa", bits: 256, passphrase: "", cipher: nil, comment: "", at: cli.path("b"))
        #expect(try cli.run(["set", "ssh/k", "--ssh-key"] + cli.unlock(), stdin: try cli.read("a")).status == 0)
        #expect(try cli.run(["set", "ssh/k", "--field", "notes"] + cli.unlock(), stdin: Array("for github".utf8)).status == 0)
        let again = try cli.run(["set", "ssh/k", "--ssh-key"] + cli.unlock(), stdin: try cli.read("b"))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try cli.run(["get", "ssh/k", "--field", "notes"] + cli.unlock()).text == "for github")
        #expect(try cli.run(["get", "ssh/k", "--field", "public"] + cli.unlock()).text == (try Self.text(cli, "b.pub")) + "\n")
        #expect(try cli.run(["get", "ssh/k", "--field", "comment"] + cli.unlock()).status == 1, "the old key's comment is gone")
    }

    @Test func test_setSSHKey_decryptsAProtectedKeyOnceAndStoresItUnprotected() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        try SSHKeygen.make("ecdsa", bits: 521, passphrase: "key pass", cipher: nil, comment: "p@h", at: cli.path("id"))
        try cli.write("pp", Array("key pass\n".utf8))
        let set = try cli.run(["set", "ssh/p", "--ssh-key", "--value-file", cli.path("id"), "--identity-passphrase-file", cli.path("pp")] + cli.unlock())
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try Self.publicLineOfStoredKey(cli, "ssh/p", file: "out") == (try Self.text(cli, "id.pub")), "read with no passphrase")
    }

    @Test func test_setSSHKey_refusesAWrongPassphraseAndNoPassphraseSourceLeavingTheVault() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        try SSHKeygen.make("ed25519", bits: nil, passphrase: "key pass", cipher: "aes256-gcm@openssh.com", comment: "p@h", at: cli.path("id"))
        try cli.write("pp", Array("not it\n".utf8))
        let before = try cli.read("t.vault")
        let wrong = try cli.run(["set", "ssh/p", "--ssh-key", "--value-file", cli.path("id"), "--identity-passphrase-file", cli.path("pp")] + cli.unlock())
        #expect(wrong.status == 3 && wrong.stderr.contains("does not decrypt the ssh key of \(cli.path("id"))"), "\(wrong.stderr)")
        let none = try cli.run(["set", "ssh/p", "--ssh-key", "--value-file", cli.path("id")] + cli.unlock())
        #expect(none.status != 0 && none.stderr.contains("--identity-passphrase-file"), "\(none.stderr)")
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_setSSHKey_refusesAPublicKeyAndOtherModesLeavingTheVault() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        try SSHKeygen.make("ed25519", bits: nil, passphrase: "", cipher: nil, comment: "c", at: cli.path("id"))
        let before = try cli.read("t.vault")
        let pub = try cli.run(["set", "ssh/x", "--ssh-key", "--value-file", cli.path("id.pub")] + cli.unlock())
        #expect(pub.status == 4 && pub.stderr.contains("it is an ssh public key"), "\(pub.stderr)")
        for extra in [["--field", "f"], ["--generate"], ["--totp"]] {
            #expect(try cli.run(["set", "ssh/x", "--ssh-key", "--value-file", cli.path("id")] + extra + cli.unlock()).status == 64, "\(extra)")
        }
        #expect(try cli.read("t.vault") == before)
    }

    // MARK: - ssh-keygen

    @Test(arguments: [["-t", "ed25519"], ["-t", "ecdsa", "-b", "384"], ["--type", "rsa", "--bits", "2048"]])
    func test_sshKeygen_makesAKeyInsideTheVaultThatSSHKeygenReads(options: [String]) throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        let made = try cli.run(["ssh-keygen", "ssh/new", "-C", "made here"] + options + cli.unlock())
        #expect(made.status == 0 && made.text.hasSuffix(" made here\n"), "\(made.stderr)")
        let line = made.text.trimmingCharacters(in: .newlines)
        #expect(try cli.run(["get", "ssh/new", "--field", "public"] + cli.unlock()).text == line + "\n")
        #expect(try Self.publicLineOfStoredKey(cli, "ssh/new", file: "out") == line)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path).filter { $0.hasPrefix("ssh") }.isEmpty, "no key file written")
    }

    @Test func test_sshKeygen_refusesAnExistingEntryWithoutForce() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        let refused = try cli.run(["ssh-keygen", "db/password"] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("exists already") && refused.stderr.contains("--force"), "\(refused.stderr)")
        #expect(try cli.run(["get", "db/password"] + cli.unlock()).text == "s3cret")
        let forced = try cli.run(["ssh-keygen", "db/password", "--force"] + cli.unlock())
        #expect(forced.status == 0 && forced.text.hasPrefix("ssh-ed25519 "), "\(forced.stderr)")
    }

    @Test func test_sshKeygen_refusesUnknownTypesAndSizes() throws {
        let cli = try Self.setUp(); defer { cli.directory.remove() }
        for options in [["-t", "dsa"], ["-t", "ecdsa", "-b", "512"], ["-t", "rsa", "-b", "1024"], ["-t", "rsa", "-b", "16384"], ["-t", "ed25519", "-b", "4096"]] {
            let result = try cli.run(["ssh-keygen", "ssh/x"] + options + cli.unlock())
            #expect(result.status == 64, "\(options): \(result.stderr)")
        }
    }
}
