import SecureMemory
import VaultModel

// MARK: - Checking a seal's signature (docs/FORMAT.md "Signed seals")

/// Checks a signed seal: who it names as signer, against the slots and the seal record, and the
/// signature over the transcript. Any failure is damage: only a holder of the file key could have
/// written the (authenticated, encrypted) signature block.
enum SealVerifier {
    /// What the open read of a signed header, and the payload hash computed while reading it.
    struct Seal {
        let header: VaultHeader
        let slots: [SlotMetadata]
        let record: SealRecord
        let fileKeyID: [UInt8]
        let payloadHash: [UInt8]
    }

    /// Checks `block` of `seal`, returning what it establishes; `headerHash` is the whole header's BLAKE2b-128.
    static func verify(_ block: SealSignatureBlock, of seal: Seal, headerHash: [UInt8]) throws(VaultError) -> SealEvidence {
        func damaged(_ why: String) -> VaultError { .headerDamaged("seal signature: \(why)") }
        let header = seal.header, position = block.signerPosition
        guard seal.slots.indices.contains(position), seal.record.attestations.count == seal.slots.count else {
            throw damaged("the signer position \(position) names no keyslot (the vault has \(seal.slots.count))")
        }
        let slot = seal.slots[position]
        guard slot.type == block.signerType else {
            throw damaged("the signer is said to be of type \(block.signerType), but keyslot \(position) is of type \(slot.type)")
        }
        guard let direct = SealScheme.direct(forSlotType: slot.type) else {
            throw damaged("keyslot \(position) is of a type (\(slot.type)) that cannot sign")
        }
        let slotKey = MemberKey(type: slot.type, bytes: slot.publicKey)
        var signer = slotKey, replacedKey: MemberKey? = nil
        let verifyingKey: [UInt8]
        switch block.scheme {
        case .xeddsa, .ed25519, .rsaPSS:
            guard block.scheme == direct else { throw damaged("scheme \(block.scheme.rawValue) cannot be keyslot \(position)'s (type \(slot.type))") }
            if block.signerKey != slot.publicKey {
                // A seal that changed its signer's own key (a re-salt) is signed by the old key,
                // which the new key's attestation names as its adder.
                let adder = seal.record.attestations[position].adder
                guard adder.bytes == block.signerKey, adder.type == slot.type else {
                    throw damaged("the signer key is not keyslot \(position)'s key (nor the key it replaced)")
                }
                // A key still in a slot replaced nothing: a member who added another slot of its
                // type must not pass for that slot's old key (and have its own key retired).
                guard !seal.slots.contains(where: { $0.publicKey == block.signerKey }) else {
                    throw damaged("the signer key is keyslot \(position)'s adder, which still holds a slot: it replaced no key")
                }
                replacedKey = adder
                signer = adder
            }
            verifyingKey = block.signerKey
        case .delegated:
            guard let delegation = block.delegation, delegation.delegatingScheme == direct, block.signerKey.count == 32,
                  block.signature.count == 64 else {
                throw damaged("a delegated signature without a delegation by keyslot \(position)")
            }
            let message = SealTranscript.delegation(vaultID: header.vaultID, fileKeyID: seal.fileKeyID, delegatedKey: block.signerKey,
                                                    expiry: delegation.expiry)
            guard SealVerification.verifies(signature: delegation.signature, message: message, by: slotKey) else {
                throw damaged("the delegation does not verify under keyslot \(position)'s key for this file key")
            }
            verifyingKey = block.signerKey
        }
        let transcript = SealTranscript.seal(scheme: block.scheme, vaultID: header.vaultID, generation: header.generation, fileKeyID: seal.fileKeyID,
                                             signerPosition: position, signerType: block.signerType, signerKey: block.signerKey,
                                             headerPrefix: header.signedPrefix(), payloadHash: seal.payloadHash)
        let verifies: Bool
        switch block.scheme {
        case .xeddsa, .ed25519, .rsaPSS: verifies = SealVerification.verifies(signature: block.signature, message: transcript, by: MemberKey(type: slot.type, bytes: verifyingKey))
        case .delegated: verifies = SealVerification.ed25519Verifies(signature: block.signature, message: transcript, publicKey: verifyingKey)
        }
        guard verifies else { throw damaged("the signature does not verify (the header or payload was changed after signing)") }
        let slots = seal.slots.enumerated().map { SealEvidence.Slot(position: $0.offset, type: $0.element.type, label: $0.element.label, key: $0.element.publicKey) }
        return SealEvidence(vaultID: header.vaultID, generation: header.generation, fileKeyID: seal.fileKeyID, headerHash: headerHash,
                            signer: signer, signerPosition: position, scheme: block.scheme, replacedKey: replacedKey, slots: slots, record: seal.record)
    }
}

extension VaultCodec {
    /// The id of `fileKey`: the first 16 bytes of its `vfkey-id` subkey (docs/FORMAT.md §4), one-way.
    package static func fileKeyID(of fileKey: SecureBytes) -> [UInt8] {
        Subkey.derive(from: fileKey, Subkey.keyID).withUnsafeBytes { Array($0.prefix(16)) }
    }
}
