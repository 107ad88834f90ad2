import VaultModel

// MARK: - Long slot keys (format 1.4, flag 0x10)

/// When a header needs flag 0x10 (metadata version 2, u16 key lengths): exactly when a slot's key
/// in the metadata is longer than 255 bytes (an ssh-rsa slot's wire key), or, in a signed file, an
/// attestation's adder key is or its signature is not 64 bytes (an ssh-rsa adder). A file
/// without such keys is written as before, so older releases keep reading it (docs/FORMAT.md §3.11).
enum LongKeys {
    /// Whether these metadata entries and attestations need flag 0x10.
    static func needed(metadata: [SlotMetadata], attestations: [SlotAttestation]) -> Bool {
        metadata.contains { $0.publicKey.count > MetadataBlock.shortKeyLimit || $0.type == PluginSlot.type }
            || attestations.contains { $0.adder.bytes.count > MetadataBlock.shortKeyLimit || $0.signature.count != 64 }
    }
}

extension VaultHeader {
    /// Sets flag 0x10 (and minor version 4 at least) when `needed`, clears it otherwise; the minor
    /// version stays (readers accept any).
    mutating func setLongKeys(_ needed: Bool) {
        if needed {
            flags |= Self.longKeysFlag
            minorVersion = max(minorVersion, Self.longKeysMinorVersion)
        } else {
            flags &= ~Self.longKeysFlag
        }
    }
}

extension UnlockedVault {
    /// Sets or clears flag 0x10 of `next` as its metadata and seal record need.
    func updateLongKeys(of next: inout VaultHeader) {
        guard next.usesKeyslots11 else { return }
        next.setLongKeys(LongKeys.needed(metadata: slotMetadata ?? [], attestations: next.isSigned ? sealState.attestations : []))
    }

    /// The length the next seal's header would have, counting the seal record at its largest
    /// ancestor list (its length field is 16 bits: 65,535 at most).
    func projectedHeaderLength() -> Int {
        var next = header
        updateLongKeys(of: &next)
        var length = VaultHeader.fixedPrefixLength + VaultHeader.trailerLength + next.keyslots.reduce(0) { $0 + $1.encoded().count }
        if next.usesKeyslots11, let entries = slotMetadata, entries.count == next.keyslots.count {
            let ancestor = SealAncestor(generation: 0, headerHash: [UInt8](repeating: 0, count: 16))
            let record = next.isSigned ? SealRecord(ancestors: Array(repeating: ancestor, count: SealRecord.maxAncestors),
                                                    attestations: sealState.attestations,
                                                    tombstones: sealState.tombstones(at: next.generation + 1)) : nil
            length += 2 + XChaCha20Poly1305.nonceLength + 16
                + MetadataBlock.encode(entries, slots: next.keyslots, record: record, longKeys: next.usesLongKeys).count
            if next.isSigned {
                length += 2 + XChaCha20Poly1305.nonceLength + SignatureBlock.expectedSealedLength(longKeys: next.usesLongKeys, keyslots: next.keyslots)
            }
        }
        return length
    }

    /// Refuses a header longer than the format allows (`VaultHeader.maxLength`), naming both numbers.
    func checkHeaderFits() throws(VaultError) {
        let length = projectedHeaderLength()
        guard length <= VaultHeader.maxLength else {
            throw .limitExceeded("the vault header would be \(grouped(length)) bytes; a header holds at most \(grouped(VaultHeader.maxLength))"
                                 + "; remove a slot, or use a smaller ssh-rsa key")
        }
    }
}
