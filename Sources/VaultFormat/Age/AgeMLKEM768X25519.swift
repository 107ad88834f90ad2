import SecureMemory
import VaultModel
import VaultPQ

// MARK: - mlkem768x25519 (age 1.3's post-quantum hybrid recipients)

/// Age's post-quantum stanza, as the C2SP age spec and age 1.3 write it: `-> mlkem768x25519 ENC`,
/// where ENC is the unpadded base64 of HPKE's 1,120-byte encapsulated key, and the body the
/// 16-byte file key sealed by HPKE base mode (MLKEM768-X25519, HKDF-SHA256, ChaCha20Poly1305)
/// with info `age-encryption.org/mlkem768x25519` and empty additional data.
///
/// This info serves age files only; vaultfile's own type-8 keyslots use their own, which binds
/// the vault (docs/FORMAT.md §3.13).
enum MLKEM768X25519Stanza {
    static let type = "mlkem768x25519"
    static let info = Array("age-encryption.org/mlkem768x25519".utf8)

    /// The stanza's rules, whoever it is for, checked before any decapsulation: exactly one
    /// argument, 1,120 bytes of canonical unpadded base64, and a 32-byte body.
    static func check(_ stanza: AgeStanza) throws(AgeFileError) -> [UInt8] {
        guard stanza.arguments.count == 1 else {
            throw .stanzaMalformed(kind: type, why: "it has \(stanza.arguments.count) arguments after its type, not 1")
        }
        guard let enc = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8Slice), enc.count == HybridKEM.encapsulationLength else {
            throw .stanzaMalformed(kind: type, why: "its encapsulated key is not \(HybridKEM.encapsulationLength) bytes of canonical base64")
        }
        try X25519Stanza.checkBody(stanza, kind: type)
        return enc
    }
}

extension AgePQRecipient: AgeFileRecipient {
    /// `-> mlkem768x25519 ENC`, as age 1.3 writes it for an `age1pq1…` recipient (a fresh encapsulation every call).
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        guard fileKey.count == AgeCrypto.fileKeyLength,
              let (enc, body) = try? HybridKEM.seal(fileKey, to: publicKey, info: MLKEM768X25519Stanza.info) else {
            throw .invalidRecipients("the age post-quantum recipient \(shortName) is not a usable key")
        }
        return [AgeStanza(type: MLKEM768X25519Stanza.type, arguments: [String(decoding: AgeBase64.encodeUnpadded(enc), as: UTF8.self)], body: body)]
    }

    /// The stanza and age 1.3's label for it, `postquantum`: a plugin recipient mixes with it
    /// only when its own `labels` answer is exactly that (age's `RecipientWithLabels`).
    public func wrapWithLabels(_ fileKey: SecureBytes) throws(AgeFileError) -> (stanzas: [AgeStanza], labels: Set<String>) {
        (try wrap(fileKey), [Self.postQuantumLabel])
    }

    /// age's label of a post-quantum recipient.
    public static let postQuantumLabel = "postquantum"

    /// Post-quantum: age refuses to mix it with classical recipients in one file.
    public var isPostQuantum: Bool { true }
}

extension AgePQIdentity: AgeFileIdentity {
    /// Opens an `mlkem768x25519` stanza sealed to this identity. A stanza that breaks the kind's
    /// rules is refused; one that does not open (another key, a tampered encapsulation, a
    /// low-order X25519 share: HPKE refuses the all-zero secret) is not for this identity (nil).
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        guard stanza.kind == .other(MLKEM768X25519Stanza.type) else { return nil }
        let enc = try MLKEM768X25519Stanza.check(stanza)
        // X-Wing refuses an all-zero X25519 secret; a low-order share is named as such, as age does.
        guard !X25519.isLowOrder(Array(enc.suffix(X25519.keyLength))) else {
            throw .stanzaMalformed(kind: MLKEM768X25519Stanza.type, why: "the X25519 part of its encapsulated key is a low-order point (an all-zero shared secret)")
        }
        return identity.open(enc: enc, ciphertext: stanza.body, info: MLKEM768X25519Stanza.info, plaintextLength: AgeCrypto.fileKeyLength)
    }
}

extension AgeAnyIdentity: AgeFileIdentity {
    /// Opens a stanza with whichever kind of identity this is.
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        switch self {
        case .x25519(let identity): return try identity.unwrap(stanza)
        case .postQuantum(let identity): return try identity.unwrap(stanza)
        }
    }
}
