import Foundation
import SecureMemory
import TestSupport
@testable import VaultFormat

/// Builds passphrase-protected OpenSSH ed25519 keys (aes256-ctr, bcrypt) field by field, so that
/// each hostile case changes one thing: the tests' stand-in for `ssh-keygen -N`, encrypting with
/// the library's own bcrypt_pbkdf and AES-256-CTR (CTR encrypts as it decrypts).
struct ProtectedKeyBuilder {
    var seed: [UInt8] = OpenSSHKeyBuilder.rfc8032Seed
    var passphrase = "correct horse"
    var cipher = "aes256-ctr"
    var kdf = "bcrypt"
    var salt: [UInt8] = Array(0..<16)
    /// Two rounds: tests run unoptimised builds, where each round costs about 0.1 s.
    var rounds: UInt32 = 2
    /// Replaces `string salt ‖ uint32 rounds` when set.
    var kdfOptions: [UInt8]? = nil
    var checkInts: (UInt32, UInt32) = (0x0BAD_CAFE, 0x0BAD_CAFE)
    /// A seed in the private section that does not derive the public key (the pair keeps the right public half).
    var wrongSeed = false
    var keyCount: UInt32 = 1
    var keyType = "ssh-ed25519"
    /// Bytes added to the encrypted section after encryption (a length that is not whole blocks).
    var sectionExtra: [UInt8] = []
    /// Bytes after the encrypted section.
    var trailing: [UInt8] = []

    /// The decrypted private section: check integers, key, comment, padding to 16 bytes.
    func privateSection() -> [UInt8] {
        let publicKey = Ed25519.publicKey(fromSeed: SecureBytes(copying: seed))!
        var inner = Self.bigEndian(checkInts.0) + Self.bigEndian(checkInts.1)
        inner += sshString(Array(keyType.utf8)) + sshString(publicKey)
        inner += sshString((wrongSeed ? [UInt8](repeating: 1, count: 32) : seed) + publicKey)
        inner += sshString(Array("test@host".utf8))
        inner += Array([UInt8](1...16).prefix((16 - inner.count % 16) % 16))
        return inner
    }

    func blob() -> [UInt8] {
        let publicKey = Ed25519.publicKey(fromSeed: SecureBytes(copying: seed))!
        var blob: [UInt8] = Array("openssh-key-v1".utf8) + [0]
        blob += sshString(Array(cipher.utf8)) + sshString(Array(kdf.utf8))
        blob += sshString(kdfOptions ?? (sshString(salt) + Self.bigEndian(rounds)))
        blob += Self.bigEndian(keyCount)
        blob += sshString(sshString(Array(keyType.utf8)) + sshString(publicKey))
        blob += sshString(encrypted() + sectionExtra) + trailing
        return blob
    }

    func pem() -> [UInt8] { OpenSSHKeyBuilder.armor(blob()) }

    /// The private section under AES-256-CTR with bcrypt_pbkdf's key and IV (garbage if the
    /// parameters are ones the library refuses: those keys are refused before decrypting).
    private func encrypted() -> [UInt8] {
        let plain = privateSection()
        guard let derived = BcryptPBKDF.deriveKey(password: SecureBytes(copying: Array(passphrase.utf8)), salt: salt, rounds: rounds,
                                                  outputLength: 48) else { return plain }
        return derived.withUnsafeBytes { material in
            AES256CTR.decrypt(plain[...], key: UnsafeRawBufferPointer(rebasing: material[0..<32]),
                              iv: UnsafeRawBufferPointer(rebasing: material[32..<48]))!.withUnsafeBytes { Array($0) }
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
}

/// A passphrase provider of the tests: gives `passphrases` in turn and counts the calls.
final class ListedPassphrases: PassphraseProvider, @unchecked Sendable {
    private let passphrases: [String]
    private(set) var asked = 0

    init(_ passphrases: [String]) { self.passphrases = passphrases }

    func passphrase(for source: String, attempt: Int) throws -> SecureBytes? {
        asked += 1
        return attempt <= passphrases.count ? SecureBytes(copying: Array(passphrases[attempt - 1].utf8)) : nil
    }
}
