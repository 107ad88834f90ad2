import SecureMemory
import VaultModel

// MARK: - ssh-rsa keyslots (type 7, format 1.4)

/// An ssh-rsa keyslot: the file key encrypted to an RSA public key with RSA-OAEP (SHA-256,
/// MGF1-SHA-256) under a label that binds the slot type and the vault (docs/FORMAT.md §3.10).
/// Like every 1.1 slot, it is wrapped to a public key the metadata keeps (the key's wire
/// encoding), so a rotation re-wraps it without its secret. Read only in a file with flag 0x10.
public struct RSASlot: Equatable, Sendable {
    /// The slot's type byte.
    public static let type: UInt8 = 7
    /// The shortest body: the ciphertext of a 2,048-bit key.
    static let minimumBodyLength = SSHRSAPublicKey.minimumBits / 8
    /// The longest body: the ciphertext of an 8,192-bit key.
    static let maximumBodyLength = SSHRSAPublicKey.maximumBits / 8
    /// The first bytes of every wrap's OAEP label (never age's `age-encryption.org/v1/ssh-rsa`).
    static let labelPrefix = Array("vaultfile keyslot 1.3 ssh-rsa".utf8)

    /// The OAEP ciphertext of the 32-byte file key: exactly as long as the key's modulus.
    public var ciphertext: [UInt8]

    /// The OAEP label of a wrap in the vault `vaultID`: `"vaultfile keyslot 1.3 ssh-rsa" ‖ 07 ‖ vault id`.
    static func label(vaultID: [UInt8]) -> [UInt8] { labelPrefix + [type] + vaultID }

    /// The slot's body: the ciphertext alone.
    func body() -> [UInt8] { ciphertext }

    /// Parses a body: 256 to 1,024 bytes (a 2,048- to 8,192-bit modulus), else damage. Which key it
    /// is for is not in the slot; the length must match the key when it is tried.
    static func parse(body: ArraySlice<UInt8>, index: Int) throws(VaultError) -> RSASlot {
        guard (minimumBodyLength...maximumBodyLength).contains(body.count) else {
            throw .headerDamaged("keyslot \(index) is \(body.count) bytes; an ssh-rsa slot is \(minimumBodyLength) to \(maximumBodyLength)")
        }
        return RSASlot(ciphertext: Array(body))
    }

    /// A slot wrapping `fileKey` to `key` (fresh OAEP randomness at every wrap, rotations included).
    static func wrap(_ fileKey: SecureBytes, to key: SSHRSAPublicKey, vaultID: [UInt8]) throws(VaultError) -> RSASlot {
        RSASlot(ciphertext: try key.oaepEncrypt(fileKey, label: label(vaultID: vaultID)))
    }

    /// The file key, if `identity` opens this slot: the ciphertext is as long as its modulus, OAEP
    /// decrypts under this vault's label, and yields exactly 32 bytes. Nil otherwise.
    func unwrap(with identity: SSHRSAIdentity, vaultID: [UInt8]) -> SecureBytes? {
        guard ciphertext.count == identity.publicKey.modulusBytes,
              let opened = identity.oaepDecrypt(ciphertext, label: Self.label(vaultID: vaultID)), opened.count == 32 else { return nil }
        return opened
    }
}
