import CSodium
import SecureMemory
import VaultModel

// MARK: - A slot's signing secret

/// The secret of a slot that signs: the X25519 secret of a password, keyfile, recovery or age
/// identity slot (XEd25519), or the Ed25519 seed of an ssh-ed25519 slot. Kept in guarded memory.
public enum SlotSigningKey: Sendable {
    /// An X25519 secret (slot types 2–5): signs with XEd25519.
    case x25519(SecureBytes)
    /// An Ed25519 seed (slot type 6): signs with Ed25519.
    case ed25519Seed(SecureBytes)
    /// An ssh-rsa private key (slot type 7): signs with RSA-PSS-SHA-256.
    case rsa(SSHRSAIdentity)

    /// Signs `message`; throws only when the secret is malformed.
    func sign(_ message: [UInt8]) throws(VaultError) -> [UInt8] {
        switch self {
        case .x25519(let secret):
            do { return try XEdDSA.sign(message: message, secret: secret) } catch {
                throw .slotChangeRefused("signing with the slot's key failed: \(error.description)")
            }
        case .ed25519Seed(let seed):
            // The same seed-derived Ed25519 pair (guarded, wiped) the agent signs with under a delegation.
            guard let key = DelegatedSigningKey(seed: seed) else {
                throw .slotChangeRefused("signing with the slot's ssh-ed25519 key failed")
            }
            return key.sign(message)
        case .rsa(let identity):
            guard let signature = identity.pssSign(message) else { throw .slotChangeRefused("signing with the slot's ssh-rsa key failed") }
            return signature
        }
    }
}

// MARK: - Signing seals with a slot's own secret

/// Signs seals (and slot attestations) with the secret of the slot that opened the vault:
/// scheme 1 (XEd25519) for slot types 2–5, scheme 2 (Ed25519) for an ssh-ed25519 slot.
public struct SlotSealSigner: SealSigner {
    /// The signing slot's position.
    public let position: Int
    /// The signer's key as the metadata holds it, with its slot type.
    public let key: MemberKey
    private let secret: SlotSigningKey

    /// A signer for slot `position`, holding `key`, whose secret is `secret`.
    public init(position: Int, key: MemberKey, secret: SlotSigningKey) {
        self.position = position
        self.key = key
        self.secret = secret
    }

    /// The same secret signing for another position (the slots before it moved).
    func moved(to position: Int) -> SlotSealSigner { SlotSealSigner(position: position, key: key, secret: secret) }

    /// Signs the seal `request` describes (vault id and generation read from its header prefix).
    public func signSeal(_ request: SealSigningRequest) throws -> SealSignatureBlock {
        guard let scheme = SealScheme.direct(forSlotType: key.type), request.headerPrefix.count >= 36 else {
            throw VaultError.noSealSigner
        }
        let prefix = request.headerPrefix
        let generation = prefix[28..<36].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let transcript = SealTranscript.seal(scheme: scheme, vaultID: Array(prefix[12..<28]), generation: generation, fileKeyID: request.fileKeyID,
                                             signerPosition: position, signerType: key.type, signerKey: key.bytes,
                                             headerPrefix: prefix, payloadHash: request.payloadHash)
        return SealSignatureBlock(scheme: scheme, signerPosition: position, signerType: key.type, signerKey: key.bytes,
                                  delegation: nil, signature: try secret.sign(transcript))
    }

    /// The attestation this key makes of a slot of `type` holding `slotKey` labelled `label`.
    public func attest(vaultID: [UInt8], type: UInt8, slotKey: [UInt8], label: String) throws -> SlotAttestation {
        let transcript = SealTranscript.attestation(vaultID: vaultID, slotType: type, key: slotKey, label: label)
        return SlotAttestation(adder: key, signature: try secret.sign(transcript))
    }

    /// Signs a delegation of seals under `fileKeyID` to `delegatedKey` until `expiry` (the agent's).
    public func delegate(vaultID: [UInt8], fileKeyID: [UInt8], delegatedKey: [UInt8], expiry: UInt64) throws -> SealDelegation {
        // The agent's wire carries 64-byte delegation signatures: an ssh-rsa slot does not delegate.
        guard let scheme = SealScheme.direct(forSlotType: key.type), scheme != .rsaPSS else { throw VaultError.noSealSigner }
        let transcript = SealTranscript.delegation(vaultID: vaultID, fileKeyID: fileKeyID, delegatedKey: delegatedKey, expiry: expiry)
        return SealDelegation(delegatingScheme: scheme, expiry: expiry, signature: try secret.sign(transcript))
    }
}
