import SecureMemory
import VaultFormat
import VaultModel

// MARK: - A delegation handed to the agent

/// What `unlock` hands the agent beside a signed vault's file key so that it can sign seals
/// without a slot's secret (docs/AGENT.md "Delegations"): a fresh Ed25519 key (its seed, in
/// guarded memory), the delegation a slot signed for it (vault id, file key id, the key, expiry),
/// and that slot's public key, by which the agent finds the slot's position in each header it signs.
public struct AgentDelegationHandOver: Sendable {
    /// The delegated Ed25519 key pair; only its seed travels.
    public var key: DelegatedSigningKey
    /// The delegation: how the slot signed, until when, and its signature.
    public var delegation: SealDelegation
    /// The delegating slot's key as the metadata holds it, with its slot type.
    public var delegatingKey: MemberKey

    /// A hand-over of `key` under `delegation`, signed by the slot holding `delegatingKey`.
    public init(key: DelegatedSigningKey, delegation: SealDelegation, delegatingKey: MemberKey) {
        self.key = key
        self.delegation = delegation
        self.delegatingKey = delegatingKey
    }

    /// Whether the delegation is the delegating key's signature over the delegation transcript for
    /// `vaultID`, the file key `fileKeyID` and this key's public half, by the scheme its key's type
    /// signs with. The agent takes no delegation that does not verify for the key handed with it.
    public func verifies(vaultID: [UInt8], fileKeyID: [UInt8]) -> Bool {
        guard SealScheme.direct(forSlotType: delegatingKey.type) == delegation.delegatingScheme else { return false }
        let message = SealTranscript.delegation(vaultID: vaultID, fileKeyID: fileKeyID, delegatedKey: key.publicKey,
                                                expiry: delegation.expiry)
        return SealVerification.verifies(signature: delegation.signature, message: message, by: delegatingKey)
    }

    // MARK: Wire

    /// `seed (32) ‖ delegating scheme (1) ‖ expiry (u64) ‖ signature (64) ‖ delegating slot type (1)
    /// ‖ key length (1, 1–64) ‖ key`.
    func encode(into sink: inout some ByteSink) {
        key.seed.withUnsafeBytes { sink.append(raw: $0) }
        sink.append(delegation.delegatingScheme.rawValue)
        sink.append(delegation.expiry)
        sink.append(delegation.signature)
        sink.append(delegatingKey.type)
        sink.append(UInt8(truncatingIfNeeded: delegatingKey.bytes.count))
        sink.append(delegatingKey.bytes)
    }

    static func decode(_ reader: inout WireReader) throws(AgentProtocolError) -> AgentDelegationHandOver {
        let seed = SecureBytes(copying: try reader.raw(DelegatedSigningKey.seedLength, "the delegated key"))
        let scheme = try reader.byte("the delegating scheme")
        // This wire carries 64-byte signatures: only XEd25519 and Ed25519 slots delegate (not ssh-rsa, scheme 4).
        guard let delegatingScheme = SealScheme(rawValue: scheme), delegatingScheme == .xeddsa || delegatingScheme == .ed25519 else {
            throw .malformed("delegating scheme \(scheme) is not 1 or 2")
        }
        let expiry = try reader.uint64("the delegation's expiry")
        let signature = try reader.bytes(64, "the delegation's signature")
        let type = try reader.byte("the delegating slot type")
        let keyLength = Int(try reader.byte("the delegating key length"))
        guard (1...AgentProtocol.maxMemberKeyLength).contains(keyLength) else {
            throw .malformed("a delegating key of \(keyLength) bytes (1 to \(AgentProtocol.maxMemberKeyLength))")
        }
        let keyBytes = try reader.bytes(keyLength, "the delegating key")
        return AgentDelegationHandOver(key: DelegatedSigningKey(seed: seed)!,
                                       delegation: SealDelegation(delegatingScheme: delegatingScheme, expiry: expiry, signature: signature),
                                       delegatingKey: MemberKey(type: type, bytes: keyBytes))
    }
}

// MARK: - Why the agent did not sign

/// Why the agent refused a `sign` request (the `cannot sign` answer's reason byte); the client
/// turns each into an error that says what to do.
public enum AgentSignRefusal: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// No key the agent holds opens this header (the vault is not unlocked, or under another key).
    case notHeld = 1
    /// The agent holds the key but was never given a delegation for it: the vault was unlocked with
    /// a slot that cannot sign (post-quantum, plugin, ssh-rsa, a 1.0 password). One that expired and
    /// was wiped is `expired`.
    case noDelegation = 2
    /// The delegation for this key has expired.
    case expired = 3
    /// The slot that signed the delegation is no longer in this header.
    case delegatingSlotGone = 4

    public var description: String {
        switch self {
        case .notHeld: return "the agent holds no key of this vault that opens it"
        case .noDelegation:
            return "the agent holds this vault's key from a slot that cannot sign seals (post-quantum, plugin, ssh-rsa or a 1.0 password), so it cannot sign for it"
        case .expired: return "the agent's delegation to sign for this vault has expired"
        case .delegatingSlotGone: return "the slot that let the agent sign for this vault is no longer in it"
        }
    }
}

// MARK: - A signature block on the wire

extension SealSignatureBlock {
    /// `scheme (1) ‖ position (1) ‖ type (1) ‖ key length (1, 1–64) ‖ key`, then for scheme 3
    /// `delegating scheme (1) ‖ expiry (u64) ‖ delegation signature (64)`, then `signature (64)`.
    func encode(into sink: inout some ByteSink) {
        sink.append(scheme.rawValue)
        sink.append(UInt8(truncatingIfNeeded: signerPosition))
        sink.append(signerType)
        sink.append(UInt8(truncatingIfNeeded: signerKey.count))
        sink.append(signerKey)
        if let delegation {
            sink.append(delegation.delegatingScheme.rawValue)
            sink.append(delegation.expiry)
            sink.append(delegation.signature)
        }
        sink.append(signature)
    }

    static func decode(_ reader: inout WireReader) throws(AgentProtocolError) -> SealSignatureBlock {
        let schemeByte = try reader.byte("the scheme")
        // 64-byte signatures only: an ssh-rsa seal (scheme 4) never crosses this wire.
        guard let scheme = SealScheme(rawValue: schemeByte), scheme != .rsaPSS else { throw .malformed("unknown scheme \(schemeByte)") }
        let position = Int(try reader.byte("the signer position"))
        guard position < VaultHeader.maxKeyslots else { throw .malformed("signer position \(position) is past the last keyslot") }
        let type = try reader.byte("the signer type")
        let keyLength = Int(try reader.byte("the signer key length"))
        guard (1...AgentProtocol.maxMemberKeyLength).contains(keyLength) else { throw .malformed("a signer key of \(keyLength) bytes") }
        let key = try reader.bytes(keyLength, "the signer key")
        var delegation: SealDelegation?
        if scheme == .delegated {
            let delegating = try reader.byte("the delegating scheme")
            guard let delegatingScheme = SealScheme(rawValue: delegating), delegatingScheme == .xeddsa || delegatingScheme == .ed25519 else {
                throw .malformed("delegating scheme \(delegating) is not 1 or 2")
            }
            delegation = SealDelegation(delegatingScheme: delegatingScheme, expiry: try reader.uint64("the delegation's expiry"),
                                        signature: try reader.bytes(64, "the delegation's signature"))
        }
        return SealSignatureBlock(scheme: scheme, signerPosition: position, signerType: type, signerKey: key, delegation: delegation,
                                  signature: try reader.bytes(64, "the signature"))
    }
}
