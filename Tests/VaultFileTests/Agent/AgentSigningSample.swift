import SecureMemory
import TestSupport
@testable import VaultAgent
@testable import VaultFormat
@testable import VaultModel

// MARK: - A signed header's prefix for the agent's sign tests

/// A format-1.1 vault of age-recipient slots turned into the prefix of a signed header (minor 3,
/// flags 0x0A, the declared length of a header with a signature block), its metadata block sealed
/// again under that prefix: what a writer sends the agent to sign. Each member's X25519 secret is
/// known, so tests sign delegations with it (XEd25519) as `unlock` does.
struct SignedPrefixSample {
    /// The members' identities, in slot order.
    let members: [AgeIdentity]
    /// The vault, as created.
    let unlocked: UnlockedVault

    /// A vault with one recipient slot per member (`count` fresh identities).
    init(members count: Int = 1) throws {
        let members = try (0..<count).map { _ in try AgeIdentity(secretKey: X25519.generateSecretKey()) }
        self.members = members
        // Recipients only: created unsigned (format 1.1), then shaped here into a signed prefix.
        unlocked = try VaultCodec.create(try sampleVault(), slots: members.enumerated().map { (.recipient($1.recipient), "member \($0)") }, now: 0)
    }

    var vaultID: [UInt8] { unlocked.header.vaultID }
    var fileKey: SecureBytes { unlocked.fileKey }
    var fileKeyID: [UInt8] { HeaderPrefix.fileKeyID(of: unlocked.fileKey) }

    /// The member key of slot `index`.
    func memberKey(_ index: Int) -> MemberKey {
        MemberKey(type: unlocked.slotMetadata![index].type, bytes: members[index].recipient.publicKey)
    }

    /// The prefix of a signed header of this vault at `generation`, its metadata sealed under `fileKey`
    /// (this vault's by default).
    func prefix(generation: UInt64 = 5, fileKey: SecureBytes? = nil) throws -> [UInt8] {
        let key = fileKey ?? self.fileKey
        var header = unlocked.header
        header.generation = generation
        let record = try self.record()
        header.metadata = try MetadataBlock.sealChecked(unlocked.slotMetadata!, for: header, fileKey: key, record: record)
        var bytes = header.authenticatedBytes()
        let declared = bytes.count + HeaderPrefix.signatureBlockLength + VaultHeader.trailerLength
        bytes[9] = HeaderPrefix.signedMinorVersion
        bytes[10] = UInt8(declared & 0xFF)
        bytes[11] = UInt8(declared >> 8)
        bytes[37] |= HeaderPrefix.signedFlag
        // Sealed again: its associated data is every byte before its nonce, the new ones included.
        let sealedLength = header.metadata!.sealed.count
        let nonceOffset = bytes.count - sealedLength - 24
        let nonce = Array(bytes[nonceOffset..<nonceOffset + 24])
        let plaintext = MetadataBlock.encode(unlocked.slotMetadata!, slots: header.keyslots, record: record)
        let sealed = try Subkey.derive(from: key, MetadataBlock.subkey).withUnsafeBytes {
            try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: Array(bytes[..<nonceOffset]))
        }
        bytes.replaceSubrange((nonceOffset + 24)..., with: sealed)
        return bytes
    }

    /// The seal record of a signed file: member 0 attests every slot.
    private func record() throws -> SealRecord {
        let attestations = try unlocked.slotMetadata!.map { entry in
            let message = SealTranscript.attestation(vaultID: vaultID, slotType: entry.type, key: entry.publicKey, label: entry.label)
            return SlotAttestation(adder: memberKey(0), signature: try XEdDSA.sign(message: message, secret: members[0].secretKey))
        }
        return SealRecord(ancestors: [SealAncestor(generation: 4, headerHash: Array(repeating: 9, count: 16))], attestations: attestations)
    }

    /// A delegation by member `index` for `fileKeyID` (this vault's key by default), until `expiry`.
    func delegation(by index: Int = 0, fileKeyID: [UInt8]? = nil, expiry: UInt64 = 2_000_000_000) throws -> AgentDelegationHandOver {
        let key = DelegatedSigningKey()
        let message = SealTranscript.delegation(vaultID: vaultID, fileKeyID: fileKeyID ?? self.fileKeyID, delegatedKey: key.publicKey, expiry: expiry)
        let signature = try XEdDSA.sign(message: message, secret: members[index].secretKey)
        return AgentDelegationHandOver(key: key, delegation: SealDelegation(delegatingScheme: .xeddsa, expiry: expiry, signature: signature),
                                       delegatingKey: memberKey(index))
    }

    /// A hand-over of this vault's key (or `fileKey`) with `delegation`.
    func handOver(_ delegation: AgentDelegationHandOver?, fileKey: SecureBytes? = nil, heldKey: SecureBytes? = nil, onlyIfHeld: Bool = false,
                  timeout: UInt32 = 60, confirm: String = "") -> AgentKeyHandOver {
        AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey ?? self.fileKey, heldKey: heldKey, timeoutSeconds: timeout, onlyIfHeld: onlyIfHeld,
                         path: "/v", confirmCommand: confirm, delegation: delegation)
    }
}
