import KDF
import SecureMemory
import VaultModel

// MARK: - Keyslots of format 1.1: one wrap for every kind

/// The kinds of keyslot format 1.1 adds; the raw value is the keyslot type byte (docs/FORMAT.md §3).
public enum SlotKind: UInt8, Sendable, CaseIterable {
    /// A keyfile: the secret is a keyed hash of the file.
    case keyfile = 2
    /// An age X25519 recipient (`age1…`).
    case recipient = 3
    /// A password, through a KDF.
    case password = 4
    /// A recovery code, through a cheap KDF.
    case recovery = 5
    /// An OpenSSH ssh-ed25519 key.
    case sshEd25519 = 6

    /// The kind's name in messages, `info` and `slot list`.
    public var name: String {
        switch self {
        case .keyfile: return "keyfile"
        case .recipient: return "recipient"
        case .password: return "password"
        case .recovery: return "recovery"
        case .sshEd25519: return "ssh-ed25519"
        }
    }

    /// Whether the slot holds KDF parameters (its secret is typed by a person).
    public var hasKDF: Bool { self == .password || self == .recovery }

    /// The salt length of the slot: 16 with a KDF, 32 for a keyfile, none for public keys.
    var saltLength: Int {
        switch self {
        case .password, .recovery: return KDFParameters.saltLength
        case .keyfile: return Keyfile.saltLength
        case .recipient, .sshEd25519: return 0
        }
    }
}

/// A keyslot in the recipient shape: the slot's secret is (or derives) an X25519 secret key; the
/// slot holds how the secret is derived (KDF and salt, where there are any), a fresh ephemeral
/// share and the file key wrapped for the public key. Anyone with the public key (the metadata
/// holds it) can wrap a new file key to the slot without its secret (docs/FORMAT.md §3.3).
public struct X25519Slot: Equatable, Sendable {
    /// Which kind of secret opens it.
    public var kind: SlotKind
    /// The KDF of password and recovery slots; nil for the others.
    public var kdf: KDFParameters?
    /// 16 bytes (password, recovery), 32 (keyfile) or none.
    public var salt: [UInt8]
    /// The ephemeral X25519 public key of the wrap.
    public var ephemeralShare: [UInt8]
    /// The 32-byte file key sealed with XChaCha20-Poly1305, then its 16-byte tag.
    public var wrappedKey: [UInt8]

    /// Length of the wrap: ephemeral share and sealed file key.
    static let wrapLength = X25519.keyLength + 48
    /// The first bytes of every wrap's HKDF info.
    static let infoLabel = Array("vaultfile keyslot 1.1".utf8)

    /// How the secret is derived, as the slot stores it and the wrap binds it: KDF encoding ‖ salt.
    var derivation: [UInt8] { (kdf?.encoded ?? []) + salt }

    func body() -> [UInt8] { derivation + ephemeralShare + wrappedKey }

    // MARK: Parsing

    /// Parses a slot body of `kind`; a wrong length is damage, an unknown KDF id unsupported.
    static func parse(kind: SlotKind, body: ArraySlice<UInt8>, index: Int) throws(VaultError) -> X25519Slot {
        let fixed = kind.saltLength + wrapLength
        var kdf: KDFParameters? = nil
        if kind.hasKDF {
            guard body.count > fixed else {
                throw .headerDamaged("keyslot \(index) is \(body.count) bytes, too short for a \(kind.name) slot")
            }
            do {
                kdf = try KDFParameters.decode(body.prefix(body.count - fixed))
            } catch {
                if case .unknownAlgorithm(let id) = error { throw .unsupportedFeature("key derivation function \(id) in keyslot \(index)") }
                throw .headerDamaged("keyslot \(index): \(error.description)")
            }
        } else {
            guard body.count == fixed else {
                throw .headerDamaged("keyslot \(index) is \(body.count) bytes; a \(kind.name) slot is \(fixed)")
            }
        }
        let rest = body.suffix(fixed)
        let salt = Array(rest.prefix(kind.saltLength))
        let share = Array(rest.dropFirst(kind.saltLength).prefix(X25519.keyLength))
        let wrapped = Array(rest.suffix(48))
        return X25519Slot(kind: kind, kdf: kdf, salt: salt, ephemeralShare: share, wrappedKey: wrapped)
    }

    // MARK: Wrapping

    /// A slot of `kind` with `derivation` wrapping `fileKey` to `recipient`, with a fresh ephemeral key.
    static func wrap(
        _ fileKey: SecureBytes, to recipient: SlotRecipient, kind: SlotKind, kdf: KDFParameters?, salt: [UInt8], vaultID: [UInt8]
    ) throws -> X25519Slot {
        let ephemeral = X25519.generateSecretKey()
        let share = try X25519.publicKey(of: ephemeral)
        let shared: SecureBytes
        do {
            shared = try X25519.sharedSecret(secretKey: ephemeral, publicKey: recipient.x25519PublicKey)
        } catch .lowOrderPoint {
            // Parsers refuse such keys first, naming them; this is the last line for any other way in.
            throw VaultError.malformedInput("the key a keyslot would be wrapped to is a low-order X25519 point: a slot wrapped to it would open for anyone")
        }
        var slot = X25519Slot(kind: kind, kdf: kdf, salt: salt, ephemeralShare: share, wrappedKey: [])
        let wrapKey = try slot.wrapKey(shared: shared, recipientKey: recipient.bound, vaultID: vaultID)
        var plain = fileKey.withUnsafeBytes { Array($0) }
        defer { wipe(&plain) }
        slot.wrappedKey = try wrapKey.withUnsafeBytes { try XChaCha20Poly1305.seal(plain, key: $0, nonce: Self.zeroNonce, associatedData: []) }
        return slot
    }

    /// The file key, if `secretKey` opens this slot; `recipientKey` is what the wrap bound (the
    /// X25519 public key of `secretKey`, or an ssh-ed25519 wire key). Nil on any failure: a
    /// low-order share, a wrong key, a body that does not authenticate.
    func unwrap(secretKey: SecureBytes, recipientKey: [UInt8], vaultID: [UInt8]) -> SecureBytes? {
        guard ephemeralShare.count == X25519.keyLength, wrappedKey.count == 48,
              let shared = try? X25519.sharedSecret(secretKey: secretKey, publicKey: ephemeralShare),
              let wrapKey = try? wrapKey(shared: shared, recipientKey: recipientKey, vaultID: vaultID),
              let opened = try? wrapKey.withUnsafeBytes({ try XChaCha20Poly1305.open(wrappedKey, key: $0, nonce: Self.zeroNonce, associatedData: []) }),
              opened.count == 32 else { return nil }
        return opened
    }

    /// HKDF-SHA256(ikm = shared secret, salt = ephemeral share ‖ recipient key,
    /// info = "vaultfile keyslot 1.1" ‖ type ‖ vault id ‖ derivation).
    private func wrapKey(shared: SecureBytes, recipientKey: [UInt8], vaultID: [UInt8]) throws -> SecureBytes {
        let info = Self.infoLabel + [kind.rawValue] + vaultID + derivation
        return try shared.withUnsafeBytes { try HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: ephemeralShare + recipientKey, info: info) }
    }

    /// The nonce of every wrap: all zeros, as age's. Each wrap key is used once (a fresh
    /// ephemeral key per wrap gives a fresh HKDF output), so a fixed nonce never repeats under a key.
    static let zeroNonce = [UInt8](repeating: 0, count: XChaCha20Poly1305.nonceLength)
}

// MARK: - Public keys of slots

/// Whom a slot is wrapped to: the X25519 public key for the scalar multiplication, and the bytes
/// the wrap binds and the metadata stores (the same key, or an ssh-ed25519 wire key).
public struct SlotRecipient: Equatable, Sendable {
    /// The X25519 public key.
    public let x25519PublicKey: [UInt8]
    /// The key as bound in the wrap's HKDF salt and stored in the metadata.
    public let bound: [UInt8]

    /// An X25519 public key, bound as itself.
    init(x25519 publicKey: [UInt8]) {
        x25519PublicKey = publicKey
        bound = publicKey
    }

    /// An ssh-ed25519 key, bound by its wire encoding.
    init(ssh key: SSHEd25519PublicKey) {
        x25519PublicKey = key.x25519PublicKey
        bound = key.wireBytes
    }

    /// The recipient a slot of `kind` stored as `bound` in the metadata; nil when it is malformed.
    init?(kind: SlotKind, stored bound: [UInt8]) {
        if kind == .sshEd25519 {
            guard let key = try? SSHEd25519PublicKey(wire: bound) else { return nil }
            self.init(ssh: key)
        } else {
            guard bound.count == X25519.keyLength, !X25519.isLowOrder(bound) else { return nil }
            self.init(x25519: bound)
        }
    }
}

// MARK: - Secrets to X25519 keys

/// How the secret of a password, keyfile or recovery slot becomes its X25519 secret key:
/// `crypto_kdf_derive_from_key(32, 1, context, derived)`, a context per kind, never the raw KDF
/// output (which a v1 password slot uses as its wrap key).
enum SlotSecrets {
    static let passwordContext = (context: "vfpasswd", id: UInt64(1))
    static let recoveryContext = (context: "vfrecovr", id: UInt64(1))
    static let keyfileContext = (context: "vfkeyfil", id: UInt64(1))

    /// The X25519 secret key of a password slot's KDF output.
    static func password(_ kdfOutput: SecureBytes) -> SecureBytes { Subkey.derive(from: kdfOutput, passwordContext) }

    /// The X25519 secret key of a recovery slot's KDF output.
    static func recovery(_ kdfOutput: SecureBytes) -> SecureBytes { Subkey.derive(from: kdfOutput, recoveryContext) }
}
