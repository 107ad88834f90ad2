import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// `AgeFile`: age v1 files written and read back, the real age's files read, and hostile files refused.
@Suite struct AgeFileTests {
    static let message = Array("a secret handed over\n".utf8)
    static let small = KDFLimits(maxMemoryBytes: 1 << 30, maxArgon2WorkKiB: 1 << 30, maxPBKDF2Iterations: 1 << 30)

    static func plaintext(_ secret: SecureBytes) -> [UInt8] { secret.withUnsafeBytes { Array($0) } }

    static func encrypt(_ bytes: [UInt8], to recipients: [any AgeFileRecipient], armor: Bool = false) throws -> [UInt8] {
        try bytes.withUnsafeBytes { try AgeFile.encrypt($0, to: recipients, armor: armor) }
    }

    // MARK: - encrypt and decrypt: success

    @Test func test_encrypt_toX25519OpensWithItsIdentityOnly() throws {
        let identity = AgeIdentity.generate()
        let file = try Self.encrypt(Self.message, to: [identity.recipient])
        #expect(file.starts(with: Array("age-encryption.org/v1\n-> X25519 ".utf8)))
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [identity])) == Self.message)
        #expect(throws: AgeFileError.noIdentityMatches(kinds: ["X25519"])) { try AgeFile.decrypt(file, identities: [AgeIdentity.generate()]) }
    }

    @Test func test_encrypt_toSeveralRecipientsOpensWithEach() throws {
        let first = AgeIdentity.generate(), second = AgeIdentity.generate()
        let file = try Self.encrypt(Self.message, to: [first.recipient, second.recipient], armor: true)
        #expect(file.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----\n".utf8)))
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [second])) == Self.message)
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [AgeIdentity.generate(), first])) == Self.message)
    }

    @Test func test_encrypt_withPassphraseOpensWithItOnly() throws {
        let passphrase = SecureBytes(copying: Array("correct horse".utf8))
        let file = try Self.encrypt(Self.message, to: [AgeScryptPassphrase(passphrase: passphrase, limits: Self.small, logN: 10)])
        #expect(try AgeFile.needsPassphrase(file))
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [], passphrase: passphrase)) == Self.message)
        #expect(throws: AgeFileError.wrongPassphrase) { try AgeFile.decrypt(file, identities: [], passphrase: SecureBytes(copying: Array("wrong".utf8))) }
        #expect(throws: AgeFileError.passphraseRequired) { try AgeFile.decrypt(file, identities: [AgeIdentity.generate()]) }
    }

    @Test func test_encrypt_sizesAroundChunkBoundariesRoundTrip() throws {
        let identity = AgeIdentity.generate()
        for size in [0, 1, 65_535, 65_536, 65_537, 2 * 65_536, 2 * 65_536 + 5] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let file = try Self.encrypt(bytes, to: [identity.recipient])
            #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [identity])) == bytes, "size \(size)")
        }
    }

    @Test func test_encrypt_toSSHEd25519OpensWithTheKey() throws {
        let seed = SecureBytes(copying: [UInt8](repeating: 7, count: 32))
        let publicKey = try SSHEd25519PublicKey(key: try #require(Ed25519.publicKey(fromSeed: seed)))
        let identity = SSHEd25519Identity(publicKey: publicKey, x25519SecretKey: try #require(Ed25519.x25519SecretKey(fromSeed: seed)), ed25519Seed: seed)
        let file = try Self.encrypt(Self.message, to: [publicKey])
        #expect(file.starts(with: Array("age-encryption.org/v1\n-> ssh-ed25519 \(SSHEd25519Stanza.tag(publicKey)) ".utf8)))
        #expect(Self.plaintext(try AgeFile.decrypt(file, identities: [identity])) == Self.message)
    }

    // MARK: - encrypt: failure

    @Test func test_encrypt_refusesAPassphraseBesideRecipientsAndNoRecipient() throws {
        let passphrase = AgeScryptPassphrase(passphrase: SecureBytes(copying: [1]), limits: Self.small, logN: 10)
        #expect(throws: AgeFileError.self) { try Self.encrypt(Self.message, to: [passphrase, AgeIdentity.generate().recipient]) }
        #expect(throws: AgeFileError.self) { try Self.encrypt(Self.message, to: [passphrase, passphrase]) }
        #expect(throws: AgeFileError.self) { try Self.encrypt(Self.message, to: []) }
    }

    // MARK: - decrypt: failure

    @Test func test_decrypt_refusesAPassphraseForAFileOfRecipients() throws {
        let file = try Self.encrypt(Self.message, to: [AgeIdentity.generate().recipient])
        #expect(!(try AgeFile.needsPassphrase(file)))
        #expect(throws: AgeFileError.passphraseNotUsable) { try AgeFile.decrypt(file, identities: [], passphrase: SecureBytes(copying: [1])) }
    }

    @Test func test_decrypt_refusesAWorkFactorOverTheMemoryCapBeforeAnyWork() throws {
        let passphrase = SecureBytes(copying: Array("pw".utf8))
        let file = try Self.encrypt(Self.message, to: [AgeScryptPassphrase(passphrase: passphrase, limits: Self.small, logN: 12)])
        let tight = KDFLimits(maxMemoryBytes: 2 << 20, maxArgon2WorkKiB: 1, maxPBKDF2Iterations: 1)
        #expect(throws: AgeFileError.workFactorOverCap(logN: 12, asked: 4 << 20, cap: 2 << 20)) {
            try AgeFile.decrypt(file, identities: [], passphrase: passphrase, limits: tight)
        }
        #expect(AgeFileError.workFactorOverCap(logN: 12, asked: 4 << 20, cap: 2 << 20).category == .overLimit)
    }

    @Test func test_decrypt_refusesAFlippedByteAnywhere() throws {
        let identity = AgeIdentity.generate()
        let file = try Self.encrypt(Array(repeating: 0x41, count: 70_000), to: [identity.recipient])
        for position in stride(from: 0, to: file.count, by: 997) {
            var damaged = file
            damaged[position] ^= 0x01
            do {
                _ = try AgeFile.decrypt(damaged, identities: [identity])
                Issue.record("a flip at \(position) was not noticed")
            } catch {
                #expect([.damaged, .unsupported, .wrongPassword].contains(error.category), "\(position): \(error)")
            }
        }
    }

    @Test func test_decrypt_refusesTruncationAndAppendedBytes() throws {
        let identity = AgeIdentity.generate()
        let file = try Self.encrypt(Array(repeating: 0x42, count: 2 * 65_536), to: [identity.recipient])
        let headerLength = try AgeHeader.parse(file[...]).length
        for cut in [headerLength + 16 + 65_552, file.count - 1, headerLength + 10, headerLength] {
            #expect(throws: AgeFileError.self) { try AgeFile.decrypt(Array(file.prefix(cut)), identities: [identity]) }
        }
        #expect(throws: AgeFileError.self) { try AgeFile.decrypt(file + [0], identities: [identity]) }
        #expect(throws: AgeFileError.self) { try AgeFile.decrypt(file + Array(repeating: 0, count: 65_552), identities: [identity]) }
    }

    @Test func test_decrypt_refusesAPlaintextOverTheLimitBeforeDecrypting() throws {
        let identity = AgeIdentity.generate()
        let file = try Self.encrypt(Array(repeating: 1, count: 1_000), to: [identity.recipient])
        #expect(throws: AgeFileError.plaintextTooLarge(limit: 999)) { try AgeFile.decrypt(file, identities: [identity], maxPlaintext: 999) }
    }

    // MARK: - decrypt: edge cases (bounds)

    @Test func test_decrypt_refusesAHeaderPastItsBounds() throws {
        let stanza = "-> grease\n\n"
        let many = "age-encryption.org/v1\n" + String(repeating: stanza, count: AgeHeader.maxStanzas + 1) + "--- " + String(repeating: "A", count: 43) + "\n"
        #expect(throws: AgeFileError.headerTooLarge(limit: AgeHeader.maxLength)) { try AgeFile.decrypt(Array(many.utf8), identities: [AgeIdentity.generate()]) }
        let long = Array("age-encryption.org/v1\n-> grease\n".utf8) + [UInt8](repeating: 0x41, count: AgeHeader.maxLength)
        #expect(throws: AgeFileError.headerTooLarge(limit: AgeHeader.maxLength)) { try AgeFile.decrypt(long, identities: [AgeIdentity.generate()]) }
        #expect(throws: AgeFileError.notAnAgeFile) { try AgeFile.decrypt(Array("hello\n".utf8), identities: []) }
        #expect(throws: AgeFileError.unsupportedVersion("v2")) { try AgeFile.decrypt(Array("age-encryption.org/v2\n".utf8), identities: []) }
    }
}
