import SecureMemory
import VaultModel

// MARK: - The seam: recipients and identities

/// Something an age file can be encrypted to: it wraps the 16-byte file key into stanzas.
///
/// X25519, ssh-ed25519 and scrypt conform here, ssh-rsa in AgeSSHRSA.swift; post-quantum (`mlkem768x25519`) and plugin
/// recipients are further conformances, with no change to `AgeFile`.
public protocol AgeFileRecipient: Sendable {
    /// The stanzas that carry `fileKey` to this recipient (fresh randomness every call).
    func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza]
    /// Whether this recipient's stanza must be the file's only one (scrypt: a passphrase).
    var mustBeAlone: Bool { get }
    /// The stanzas and the recipient's labels (age's `RecipientWithLabels`: every recipient of a
    /// file must carry the same set; none for the native kinds, a plugin's own through `labels`).
    func wrapWithLabels(_ fileKey: SecureBytes) throws(AgeFileError) -> (stanzas: [AgeStanza], labels: Set<String>)
    /// Whether this recipient is post-quantum (`age1pq1…`): age never mixes such recipients with
    /// classical ones in a file, which would make it only as strong as the classical one.
    var isPostQuantum: Bool { get }
}

/// Something that may open a stanza of an age file.
public protocol AgeFileIdentity: Sendable {
    /// The file key in `stanza`, or nil when the stanza is not for this identity (another kind,
    /// another key, a body that does not authenticate). Throws when a stanza of this identity's
    /// kind breaks the kind's rules (arguments, lengths, a low-order share): the file is refused.
    func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes?
    /// The file key in any of a file's `stanzas` (a plugin sees them all in one run).
    func unwrap(stanzas: [AgeStanza]) throws(AgeFileError) -> SecureBytes?
}

extension AgeFileRecipient {
    public var mustBeAlone: Bool { false }
    public func wrapWithLabels(_ fileKey: SecureBytes) throws(AgeFileError) -> (stanzas: [AgeStanza], labels: Set<String>) {
        (try wrap(fileKey), [])
    }
    public var isPostQuantum: Bool { false }
}

extension AgeFileIdentity {
    /// Each stanza in file order, through `unwrap(_:)`.
    public func unwrap(stanzas: [AgeStanza]) throws(AgeFileError) -> SecureBytes? {
        for stanza in stanzas {
            if let fileKey = try unwrap(stanza) { return fileKey }
        }
        return nil
    }
}

// MARK: - X25519

/// Age's X25519 recipient stanza, `-> X25519 SHARE` and the wrapped file key.
enum X25519Stanza {
    static let label = "age-encryption.org/v1/X25519"

    /// The share argument, exactly 32 bytes of canonical base64, or the stanza's refusal.
    static func share(of stanza: AgeStanza, kind: String, index: Int) throws(AgeFileError) -> [UInt8] {
        guard stanza.arguments.count > index, let share = AgeBase64.decodeUnpadded(stanza.arguments[index].utf8Slice),
              share.count == X25519.keyLength else {
            throw .stanzaMalformed(kind: kind, why: "its share is not 32 bytes of canonical base64")
        }
        return share
    }

    /// The body checked to be exactly a wrapped 16-byte key, before any decryption (a
    /// partitioning-oracle defence the spec requires).
    static func checkBody(_ stanza: AgeStanza, kind: String) throws(AgeFileError) {
        guard stanza.body.count == AgeCrypto.wrappedKeyLength else {
            throw .stanzaMalformed(kind: kind, why: "its body is \(stanza.body.count) bytes, not the 32 of a wrapped 16-byte file key")
        }
    }
}

extension AgeRecipient: AgeFileRecipient {
    /// `-> X25519 SHARE`: a fresh ephemeral key; the wrap key is HKDF(shared secret, share ‖ recipient, label).
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        let ephemeral = X25519.generateSecretKey()
        guard let share = try? X25519.publicKey(of: ephemeral), let shared = try? X25519.sharedSecret(secretKey: ephemeral, publicKey: publicKey) else {
            throw .invalidRecipients("the age recipient \(self) is not a usable X25519 key")
        }
        let key = AgeCrypto.hkdf(shared, salt: share + publicKey, info: X25519Stanza.label)
        return [AgeStanza(type: "X25519", arguments: [String(decoding: AgeBase64.encodeUnpadded(share), as: UTF8.self)],
                          body: AgeCrypto.wrap(fileKey, key: key))]
    }
}

extension AgeIdentity: AgeFileIdentity {
    /// Opens an `X25519` stanza wrapped to this identity.
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        guard stanza.kind == .x25519 else { return nil }
        guard stanza.arguments.count == 1 else { throw .stanzaMalformed(kind: "X25519", why: "it has \(stanza.arguments.count) arguments after its type, not 1") }
        let share = try X25519Stanza.share(of: stanza, kind: "X25519", index: 0)
        try X25519Stanza.checkBody(stanza, kind: "X25519")
        guard let shared = try? X25519.sharedSecret(secretKey: secretKey, publicKey: share) else {
            throw .stanzaMalformed(kind: "X25519", why: "its share is a low-order point (an all-zero shared secret)")
        }
        let key = AgeCrypto.hkdf(shared, salt: share + recipient.publicKey, info: X25519Stanza.label)
        return AgeCrypto.unwrap(stanza.body, key: key)
    }
}

// MARK: - ssh-ed25519

/// Age's ssh-ed25519 stanza: `-> ssh-ed25519 TAG SHARE`, X25519 to the Ed25519 key's Montgomery
/// form, with the shared secret multiplied by a tweak bound to the key's SSH wire encoding.
enum SSHEd25519Stanza {
    static let label = "age-encryption.org/v1/ssh-ed25519"

    /// The first 4 bytes of SHA-256 of the key's wire encoding, base64: names the key, so an
    /// identity skips stanzas of other keys without trying them.
    static func tag(_ key: SSHEd25519PublicKey) -> String {
        String(decoding: AgeBase64.encodeUnpadded(SHA256.hash(key.wireBytes).prefix(4)), as: UTF8.self)
    }

    /// `HKDF-SHA-256(ikm = empty, salt = wire key, info = label)`: 32 bytes, used as an X25519 scalar.
    static func tweak(_ key: SSHEd25519PublicKey) -> SecureBytes {
        AgeCrypto.hkdf(SecureBytes(count: 0), salt: key.wireBytes, info: label)
    }

    /// The wrap key of a stanza from the (untweaked) X25519 shared secret.
    static func wrapKey(shared: SecureBytes, share: [UInt8], key: SSHEd25519PublicKey) -> SecureBytes? {
        guard let tweaked = try? X25519.sharedSecret(secretKey: tweak(key), publicKey: shared.withUnsafeBytes { Array($0) }) else { return nil }
        return AgeCrypto.hkdf(tweaked, salt: share + key.x25519PublicKey, info: label)
    }
}

extension SSHEd25519PublicKey: AgeFileRecipient {
    /// `-> ssh-ed25519 TAG SHARE`, as age writes it for an `ssh-ed25519 AAAA…` recipient.
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        let ephemeral = X25519.generateSecretKey()
        guard let share = try? X25519.publicKey(of: ephemeral),
              let shared = try? X25519.sharedSecret(secretKey: ephemeral, publicKey: x25519PublicKey),
              let key = SSHEd25519Stanza.wrapKey(shared: shared, share: share, key: self) else {
            throw .invalidRecipients("the ssh-ed25519 recipient \(fingerprint) is not a usable key")
        }
        let shareText = String(decoding: AgeBase64.encodeUnpadded(share), as: UTF8.self)
        return [AgeStanza(type: "ssh-ed25519", arguments: [SSHEd25519Stanza.tag(self), shareText], body: AgeCrypto.wrap(fileKey, key: key))]
    }
}

extension SSHEd25519Identity: AgeFileIdentity {
    /// Opens an `ssh-ed25519` stanza whose tag names this key.
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        guard stanza.kind == .sshEd25519 else { return nil }
        guard stanza.arguments.count == 2 else {
            throw .stanzaMalformed(kind: "ssh-ed25519", why: "it has \(stanza.arguments.count) arguments after its type, not 2")
        }
        let share = try X25519Stanza.share(of: stanza, kind: "ssh-ed25519", index: 1)
        guard stanza.arguments[0] == SSHEd25519Stanza.tag(publicKey) else { return nil }
        try X25519Stanza.checkBody(stanza, kind: "ssh-ed25519")
        guard let shared = try? X25519.sharedSecret(secretKey: x25519SecretKey, publicKey: share),
              let key = SSHEd25519Stanza.wrapKey(shared: shared, share: share, key: publicKey) else {
            throw .stanzaMalformed(kind: "ssh-ed25519", why: "its share is a low-order point (an all-zero shared secret)")
        }
        return AgeCrypto.unwrap(stanza.body, key: key)
    }
}

extension String {
    /// The UTF-8 bytes as an array slice.
    var utf8Slice: ArraySlice<UInt8> { Array(utf8)[...] }
}
