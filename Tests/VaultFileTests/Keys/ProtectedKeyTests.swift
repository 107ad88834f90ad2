import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Passphrase-protected OpenSSH ed25519 keys: reading them (`OpenSSHProtectedKey`), decrypting
/// them, and opening a vault through one (`ProtectedIdentity` in the unlock loop).
@Suite struct ProtectedKeyTests {
    static let hasSSHKeygen = FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")

    static func parse(_ bytes: [UInt8]) throws -> OpenSSHProtectedKey {
        try #require(try OpenSSHProtectedKey.parseIfProtected(bytes, source: "--identity k"))
    }

    static func decrypt(_ key: OpenSSHProtectedKey, _ passphrase: String) throws -> SSHEd25519Identity? {
        try key.decrypt(passphrase: SecureBytes(copying: Array(passphrase.utf8)))
    }

    // MARK: - Keys of the real ssh-keygen

    @Test(.enabled(if: hasSSHKeygen, "ssh-keygen is not installed: real protected keys skipped"),
          arguments: [[], ["-Z", "aes256-gcm@openssh.com"]])
    func test_decrypt_opensSshKeygenKeysOfEachCipher(cipherOptions: [String]) throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try AgeTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "pässphrase 1", "-a", "2", "-C", "me@there", "-f", folder.path("k")] + cipherOptions)
        let key = try Self.parse(Array(try Data(contentsOf: folder.url.appendingPathComponent("k"))))
        #expect(key.cipher.rawValue == (cipherOptions.isEmpty ? "aes256-ctr" : "aes256-gcm@openssh.com"))
        #expect(key.rounds == 2 && key.salt.count == 16)
        let publicLine = try String(contentsOf: folder.url.appendingPathComponent("k.pub"), encoding: .utf8)
        let publicKey = try SSHEd25519PublicKey(parsing: publicLine.trimmingCharacters(in: .newlines))
        #expect(key.publicKey.wireBytes == publicKey.wireBytes, "the public key outside the encryption")
        let identity = try #require(try Self.decrypt(key, "pässphrase 1"))
        #expect(identity.publicKey.wireBytes == publicKey.wireBytes && identity.publicKey.comment == "me@there")
        #expect(try X25519.publicKey(of: identity.x25519SecretKey) == publicKey.x25519PublicKey)
        #expect(try Self.decrypt(key, "pässphrase 2") == nil, "a wrong passphrase decrypts nothing")
        #expect(try Self.decrypt(key, "") == nil, "an empty passphrase decrypts nothing")
    }

    @Test(.enabled(if: hasSSHKeygen, "ssh-keygen is not installed: real protected keys skipped"))
    func test_decrypt_gcmTagCatchesAChangedByte() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try AgeTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "pw", "-a", "1", "-Z", "aes256-gcm@openssh.com", "-f", folder.path("k")])
        let pem = Array(try Data(contentsOf: folder.url.appendingPathComponent("k")))
        let lines = SSHEd25519Identity.armorLines(pem)
        var blob = try #require(base64Decode(Array(lines[1..<(lines.count - 1)].joined())))
        blob[blob.count - 20] ^= 0x01  // the last block of the encrypted section, before the 16-byte tag
        #expect(try Self.decrypt(try Self.parse(OpenSSHKeyBuilder.armor(blob)), "pw") == nil)
    }

    // MARK: - aes256-ctr: both checks

    @Test func test_decrypt_ctrOpensTheBuildersKeyAndCatchesAWrongPassphraseByTheCheckIntegers() throws {
        let key = try Self.parse(ProtectedKeyBuilder().pem())
        let identity = try #require(try Self.decrypt(key, "correct horse"))
        #expect(Hex.encode(identity.publicKey.key) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(try Self.decrypt(key, "correct horse ") == nil)
    }

    @Test func test_decrypt_ctrRefusesASeedThatDoesNotDeriveThePublicKeyThoughTheCheckIntegersMatch() throws {
        let key = try Self.parse(ProtectedKeyBuilder(wrongSeed: true).pem())
        #expect { _ = try Self.decrypt(key, "correct horse") } throws: {
            ($0 as? VaultError)?.description.contains("does not derive its public key") == true
        }
        // Check integers that differ under the right passphrase: a wrong passphrase as far as anyone can tell.
        #expect(try Self.decrypt(try Self.parse(ProtectedKeyBuilder(checkInts: (1, 2)).pem()), "correct horse") == nil)
    }

    // MARK: - Refusals before any work

    @Test func test_parseIfProtected_refusesRoundsOverTheCapFastNamingTheNumber() throws {
        let started = Date()
        #expect(throws: VaultError.identityWorkOverCap(source: "--identity k", unit: "bcrypt-pbkdf rounds", asked: 100_000, limit: 1_024)) {
            _ = try OpenSSHProtectedKey.parseIfProtected(ProtectedKeyBuilder(rounds: 100_000).pem(), source: "--identity k")
        }
        #expect(Date().timeIntervalSince(started) < 2, "no round was run")
        // The cap itself is allowed (the section encrypted under 2 rounds: 1,024 take minutes in a debug build, and parsing runs none).
        let atCap = ProtectedKeyBuilder(kdfOptions: sshString(Array(0..<16)) + ProtectedKeyBuilder.bigEndian(1_024))
        #expect(try OpenSSHProtectedKey.parseIfProtected(atCap.pem(), source: "k")?.rounds == 1_024)
    }

    @Test func test_parseIfProtected_refusesHostileFieldsSayingWhich() {
        let salt = sshString([UInt8](repeating: 1, count: 1_025)) + ProtectedKeyBuilder.bigEndian(16)
        let cases: [(String, ProtectedKeyBuilder)] = [
            ("aes128-cbc', which vaultfile does not read", ProtectedKeyBuilder(cipher: "aes128-cbc")),
            ("KDF is 'scrypt'", ProtectedKeyBuilder(kdf: "scrypt")),
            ("bcrypt options are malformed", ProtectedKeyBuilder(kdfOptions: [])),
            ("bcrypt options are malformed", ProtectedKeyBuilder(kdfOptions: sshString(Array(0..<16)) + [0, 0, 0, 16, 9])),
            ("0 bcrypt-pbkdf rounds", ProtectedKeyBuilder(rounds: 0)),
            ("salt is 0 bytes", ProtectedKeyBuilder(kdfOptions: sshString([]) + ProtectedKeyBuilder.bigEndian(16))),
            ("salt is 1025 bytes", ProtectedKeyBuilder(kdfOptions: salt)),
            ("holds 2 keys", ProtectedKeyBuilder(keyCount: 2)),
            ("not an ssh-ed25519 key", ProtectedKeyBuilder(keyType: "ssh-rsa")),
            ("not a whole number of 16-byte blocks", ProtectedKeyBuilder(sectionExtra: [1, 2, 3])),
            ("bytes after its key", ProtectedKeyBuilder(trailing: [0])),
            ("is 16400 bytes", ProtectedKeyBuilder(sectionExtra: [UInt8](repeating: 0, count: 16_400 - 144))),
        ]
        for (message, builder) in cases {
            #expect(throws: VaultError.self, "\(message)") { _ = try OpenSSHProtectedKey.parseIfProtected(builder.pem(), source: "k") }
            do {
                _ = try OpenSSHProtectedKey.parseIfProtected(builder.pem(), source: "k")
            } catch {
                #expect("\(error)".contains(message) && "\(error)".hasPrefix("k: "), "'\(error)' lacks '\(message)'")
            }
        }
    }

    @Test func test_parseIfProtected_refusesEveryTruncationAndLeavesUnencryptedKeysToTheirParser() throws {
        let blob = ProtectedKeyBuilder().blob()
        // From the end of the cipher's name (magic 15, its length 4, "aes256-ctr" 10): before it, the file is not known as protected.
        for length in Swift.stride(from: 29, to: blob.count, by: 7) {
            let cut = OpenSSHKeyBuilder.armor(Array(blob.prefix(length)))
            #expect(throws: VaultError.self, "cut at \(length)") { _ = try OpenSSHProtectedKey.parseIfProtected(cut, source: "k") }
        }
        #expect(try OpenSSHProtectedKey.parseIfProtected(OpenSSHKeyBuilder().pem(), source: "k") == nil, "an unencrypted key")
        #expect(try OpenSSHProtectedKey.parseIfProtected(Array("AGE-SECRET-KEY-1QQQ\n".utf8), source: "k") == nil, "an age identity")
        #expect(try OpenSSHProtectedKey.parseIfProtected(Array("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n".utf8),
                                                         source: "k") == nil, "another PEM file")
    }

    // MARK: - In the unlock loop

    /// A vault of a password slot and, with `ssh`, an ssh-ed25519 slot for the builder's key.
    static func vault(ssh: Bool) throws -> [UInt8] {
        var slots: [(slot: NewSlot, label: String)] = [(.password(password("pw"), testKDF), "admin")]
        if ssh { slots.append((.sshEd25519(try Self.parse(ProtectedKeyBuilder().pem()).publicKey), "bob")) }
        return try VaultCodec.create(try sampleVault(), slots: slots, now: 1_700_000_000, signed: false).seal()
    }

    static func credential(_ passphrases: ListedPassphrases) throws -> UnlockCredential {
        let identity = ProtectedIdentity(.openSSH(try parse(ProtectedKeyBuilder().pem())), source: "--identity k", passphrases: passphrases)
        return UnlockCredential(.protectedIdentity(identity), source: "--identity k")
    }

    @Test func test_unlock_opensTheSshSlotAfterAWrongTryAndCreditsTheDecryptedKey() throws {
        let passphrases = ListedPassphrases(["wrong", "correct horse"])
        let opened = try VaultCodec.open(try Self.vault(ssh: true), path: "t", credentials: [try Self.credential(passphrases)], limits: testLimits)
        #expect(opened.openedSlot?.index == 1 && passphrases.asked == 2)
        guard case .sshIdentity(let identity)? = opened.openedSlot?.credential.secret else { Issue.record("not an ssh identity"); return }
        #expect(identity.publicKey.key == (try Self.parse(ProtectedKeyBuilder().pem())).publicKey.key)
    }

    @Test func test_unlock_neverAsksForAVaultWithoutAnSshSlot() throws {
        let passphrases = ListedPassphrases(["correct horse"])
        #expect(throws: VaultError.noKeyslotOpens(sources: ["--identity k"], unknownTypes: [])) {
            _ = try VaultCodec.open(try Self.vault(ssh: false), path: "t", credentials: [try Self.credential(passphrases)], limits: testLimits)
        }
        #expect(passphrases.asked == 0)
        // The password after it still opens, and the key was not asked for then either.
        let opened = try VaultCodec.open(try Self.vault(ssh: false), path: "t", credentials: [
            try Self.credential(passphrases), UnlockCredential(.password(password("pw")), source: "the password"),
        ], limits: testLimits)
        #expect(opened.openedSlot?.index == 0 && passphrases.asked == 0)
    }

    @Test func test_unlock_wrongPassphrasesEndWithTheirCountAndNoSlotTried() throws {
        let passphrases = ListedPassphrases(["one", "two", "three"])
        #expect(throws: VaultError.identityPassphraseWrong(source: "--identity k", tries: 3)) {
            _ = try VaultCodec.open(try Self.vault(ssh: true), path: "t", credentials: [try Self.credential(passphrases)], limits: testLimits)
        }
        #expect(passphrases.asked == 4, "three passphrases, then the provider's nil")
    }

    // MARK: - Edge cases

    @Test func test_open_decryptsOnceForSeveralUnlocks() throws {
        let passphrases = ListedPassphrases(["correct horse"])
        let identity = ProtectedIdentity(.openSSH(try Self.parse(ProtectedKeyBuilder().pem())), source: "k", passphrases: passphrases)
        _ = try identity.open(limits: testLimits)
        _ = try identity.open(limits: testLimits)
        #expect(passphrases.asked == 1)
    }
}
