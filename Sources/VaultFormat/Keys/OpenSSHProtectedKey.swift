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
    /// Where the key came from, for messages ("--identity ~/.ssh/id_ed25519").
    public let source: String
    /// The encrypted container (cipher, bcrypt's salt and rounds, the sealed private section).
    let sealed: OpenSSHSealedSection
    /// The cipher of the private section.
    public var cipher: Cipher { sealed.cipher }
    /// bcrypt_pbkdf's salt.
    public var salt: [UInt8] { sealed.salt }
    /// bcrypt_pbkdf's rounds (at most `BcryptPBKDF.maxRounds`).
    public var rounds: UInt32 { sealed.rounds }

    /// The longest encrypted private section read (an ed25519 section is under 256 bytes; an 8,192-bit
    /// RSA key's under 5 KiB).
    public static let maxPrivateSectionLength = 16_384

    // MARK: Reading the file

    /// The protected key in `bytes`, or nil when they are not an OpenSSH key whose cipher is other
    /// than "none" (an unencrypted key, another PEM file: `SSHEd25519Identity.parse` reads or
    /// refuses those). Refuses, naming `source`, a protected key it cannot read, one of another
    /// type than ssh-ed25519, and one whose rounds pass `BcryptPBKDF.maxRounds`
    /// (`VaultError.identityWorkOverCap`, exit 6).
    public static func parseIfProtected(_ bytes: [UInt8], source: String) throws(VaultError) -> OpenSSHProtectedKey? {
        var publicKey: SSHEd25519PublicKey?
        let sealed = try OpenSSHSealedSection.parseIfProtected(bytes, source: source) { (publicWire) throws(VaultError) in
            var typeReader = SSHReader(publicWire)
            guard let type = typeReader.string(), type.elementsEqual(SSHEd25519PublicKey.typeName.utf8) else {
                throw .malformedInput("\(source): the encrypted key is not an ssh-ed25519 key; vaultfile reads ssh-ed25519 keys")
            }
            publicKey = try SSHEd25519PublicKey(wire: Array(publicWire))
        }
        guard let sealed, let publicKey else { return nil }
        return OpenSSHProtectedKey(publicKey: publicKey, source: source, sealed: sealed)
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
        guard var section = sealed.decryptedSection(passphrase: passphrase) else { return nil }
        defer { wipe(&section) }
        // Check integers first, as OpenSSH does: unequal ones mean the passphrase was wrong.
        var checks = SSHReader(section[...])
        guard let check1 = checks.uint32(), let check2 = checks.uint32(), check1 == check2 else { return nil }
        return try SSHEd25519Identity.fromPrivateSection(section, publicWire: sealed.publicWire[...], blockSize: cipher.blockSize) { why in
            .malformedInput("\(source): \(why) (after decryption: the key is damaged)")
        }
    }
}
