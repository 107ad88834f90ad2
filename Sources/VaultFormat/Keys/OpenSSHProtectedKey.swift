import SecureMemory
import VaultModel

// MARK: - Passphrase-protected OpenSSH keys

/// A passphrase-protected OpenSSH ed25519 private key, as `ssh-keygen -t ed25519 -N PASS` writes
/// it (openssh-key-v1, PROTOCOL.key): kdf "bcrypt" with a salt and rounds, cipher "aes256-ctr"
/// (ssh-keygen's default) or "aes256-gcm@openssh.com" (`-Z`), the private section encrypted under
/// the first 32 bytes bcrypt_pbkdf derives and the IV after them.
///
/// Everything is checked when the file is read, before any passphrase is asked for: the cipher
/// and KDF names, the rounds against `BcryptPBKDF.maxRounds`, the salt's and private section's
/// lengths, one key, the GCM tag's length, nothing trailing. Decrypting (`decrypt`) then catches a
/// wrong passphrase by the GCM tag, or under aes256-ctr (no integrity) by the check integers and
/// then by the seed deriving the file's public key: both are required.
public struct OpenSSHProtectedKey: Sendable {
    /// The two ciphers ssh-keygen writes keys with.
    public enum Cipher: String, Sendable {
        case aes256CTR = "aes256-ctr"
        case aes256GCM = "aes256-gcm@openssh.com"

        /// The IV bcrypt_pbkdf derives after the 32-byte key.
        var ivLength: Int { self == .aes256CTR ? AES256CTR.ivLength : 12 }
        /// The tag after the encrypted section (none for CTR).
        var tagLength: Int { self == .aes256CTR ? 0 : AES256GCM.tagLength }
        /// AES's block: the private section is padded to it.
        var blockSize: Int { 16 }
    }

    /// The public key the file names (outside the encryption): what a slot is made from.
    public let publicKey: SSHEd25519PublicKey
    /// The cipher of the private section.
    public let cipher: Cipher
    /// bcrypt_pbkdf's salt.
    public let salt: [UInt8]
    /// bcrypt_pbkdf's rounds (at most `BcryptPBKDF.maxRounds`).
    public let rounds: UInt32
    /// Where the key came from, for messages ("--identity ~/.ssh/id_ed25519").
    public let source: String
    private let publicWire: [UInt8]
    private let encrypted: [UInt8]
    private let tag: [UInt8]

    /// The longest encrypted private section read (an ed25519 section is under 256 bytes; an 8,192-bit
    /// RSA key's under 5 KiB).
    public static let maxPrivateSectionLength = 16_384

    // MARK: Reading the file

    /// The protected key in `bytes`, or nil when they are not an OpenSSH key whose cipher is other
    /// than "none" (an unencrypted key, another PEM file: `SSHEd25519Identity.parse` reads or
    /// refuses those). Refuses, naming `source`, a protected key it cannot read, and one whose
    /// rounds pass `BcryptPBKDF.maxRounds` (`VaultError.identityWorkOverCap`, exit 6).
    public static func parseIfProtected(_ bytes: [UInt8], source: String) throws(VaultError) -> OpenSSHProtectedKey? {
        func refuse(_ why: String) -> VaultError { .malformedInput("\(source): \(why)") }
        let lines = SSHEd25519Identity.armorLines(bytes)
        guard lines.count >= 3, lines[0].elementsEqual(SSHEd25519Identity.begin.utf8), lines[lines.count - 1].elementsEqual(SSHEd25519Identity.end.utf8),
              let blob = base64Decode(Array(lines[1..<(lines.count - 1)].joined())), blob.starts(with: SSHEd25519Identity.magic) else { return nil }
        var reader = SSHReader(blob[SSHEd25519Identity.magic.count...])
        guard let cipherName = reader.string(), !cipherName.elementsEqual("none".utf8) else { return nil }
        guard let kdfName = reader.string(), let kdfOptions = reader.string(), let count = reader.uint32() else {
            throw refuse("the encrypted key is truncated")
        }
        guard let cipher = Cipher(rawValue: String(decoding: cipherName, as: UTF8.self)) else {
            throw refuse("the key is encrypted with \(printable(cipherName)), which vaultfile does not read (it reads aes256-ctr and "
                         + "aes256-gcm@openssh.com, as ssh-keygen writes them)")
        }
        guard kdfName.elementsEqual("bcrypt".utf8) else { throw refuse("the encrypted key's KDF is \(printable(kdfName)), not bcrypt") }
        var options = SSHReader(kdfOptions)
        guard let salt = options.string(), let rounds = options.uint32(), options.isAtEnd else {
            throw refuse("the encrypted key's bcrypt options are malformed (a salt and a number of rounds)")
        }
        guard rounds <= BcryptPBKDF.maxRounds else {
            throw .identityWorkOverCap(source: source, unit: "bcrypt-pbkdf rounds", asked: UInt64(rounds), limit: UInt64(BcryptPBKDF.maxRounds))
        }
        guard rounds > 0 else { throw refuse("the encrypted key asks for 0 bcrypt-pbkdf rounds") }
        guard (1...BcryptPBKDF.maxSaltLength).contains(salt.count) else {
            throw refuse("the encrypted key's salt is \(salt.count) bytes; vaultfile reads 1 to \(BcryptPBKDF.maxSaltLength)")
        }
        guard count == 1 else { throw refuse("the file holds \(count) keys; vaultfile reads files of one key") }
        guard let publicWire = reader.string(), let length = reader.uint32() else { throw refuse("the encrypted key is truncated") }
        var typeReader = SSHReader(publicWire)
        guard let type = typeReader.string(), type.elementsEqual(SSHEd25519PublicKey.typeName.utf8) else {
            throw refuse("the encrypted key is not an ssh-ed25519 key; vaultfile reads ssh-ed25519 keys")
        }
        let publicKey = try SSHEd25519PublicKey(wire: Array(publicWire))
        guard Int(length) <= maxPrivateSectionLength else {
            throw refuse("the encrypted private section is \(length) bytes; vaultfile reads at most \(maxPrivateSectionLength)")
        }
        guard length >= cipher.blockSize, Int(length) % cipher.blockSize == 0 else {
            throw refuse("the encrypted private section (\(length) bytes) is not a whole number of \(cipher.blockSize)-byte blocks")
        }
        let rest = reader.rest
        guard rest.count >= Int(length) + cipher.tagLength else { throw refuse("the encrypted key is truncated") }
        guard rest.count == Int(length) + cipher.tagLength else { throw refuse("the encrypted key has bytes after its key") }
        return OpenSSHProtectedKey(publicKey: publicKey, cipher: cipher, salt: Array(salt), rounds: rounds, source: source,
                                   publicWire: Array(publicWire), encrypted: Array(rest.prefix(Int(length))), tag: Array(rest.suffix(cipher.tagLength)))
    }

    /// Up to 40 printable ASCII characters of a name read from the file (its cipher or KDF), for a message.
    private static func printable(_ name: ArraySlice<UInt8>) -> String {
        "'" + String(decoding: name.prefix(40).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self) + "'"
    }

    // MARK: Decrypting

    /// The identity under `passphrase`, or nil when the passphrase is wrong: the GCM tag fails, or
    /// (aes256-ctr) the check integers differ. A section that passes those but is malformed, or
    /// whose seed does not derive the file's public key, is refused (damage, or a wrong passphrase
    /// that matched 32 bits of check integers by chance): never an identity.
    ///
    /// The derived key, the decrypted section and every copy of them are wiped here; the
    /// passphrase stays the caller's (guarded memory).
    public func decrypt(passphrase: SecureBytes) throws(VaultError) -> SSHEd25519Identity? {
        guard var section = decryptedSection(passphrase: passphrase) else { return nil }
        defer { wipe(&section) }
        // Check integers first, as OpenSSH does: unequal ones mean the passphrase was wrong.
        var checks = SSHReader(section[...])
        guard let check1 = checks.uint32(), let check2 = checks.uint32(), check1 == check2 else { return nil }
        return try SSHEd25519Identity.fromPrivateSection(section, publicWire: publicWire[...], blockSize: cipher.blockSize) { why in
            .malformedInput("\(source): \(why) (after decryption: the key is damaged)")
        }
    }

    /// The decrypted private section under `passphrase` (to wipe), or nil when the GCM tag fails
    /// or the passphrase is empty (bcrypt_pbkdf takes none; ssh-keygen writes such keys unencrypted).
    func decryptedSection(passphrase: SecureBytes) -> [UInt8]? {
        guard let derived = BcryptPBKDF.deriveKey(password: passphrase, salt: salt, rounds: rounds, outputLength: 32 + cipher.ivLength) else {
            return nil
        }
        let plain: SecureBytes? = derived.withUnsafeBytes { material in
            let key = UnsafeRawBufferPointer(rebasing: material[0..<32])
            let iv = UnsafeRawBufferPointer(rebasing: material[32...])
            switch cipher {
            case .aes256CTR:
                return AES256CTR.decrypt(encrypted[...], key: key, iv: iv)
            case .aes256GCM:
                var nonce = Array(iv)
                defer { wipe(&nonce) }
                return AES256GCM.open(encrypted, tag: tag, key: key, iv: nonce, associatedData: [])
            }
        }
        return plain?.withUnsafeBytes { Array($0) }
    }
}
