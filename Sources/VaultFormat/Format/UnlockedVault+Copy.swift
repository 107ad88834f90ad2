import SecureMemory
import VaultModel

// MARK: - An independent copy (`init --copy-of`)

extension UnlockedVault {
    /// A new vault holding this one's entries (and their history) and keyslots, under a new vault
    /// id and a new file key, for `init --copy-of`: a copy that `cp` would make shares the vault
    /// id, so every machine takes the two files for states of one vault, and a write to either makes
    /// the other look older (docs/FORMAT.md §2, "vault id").
    ///
    /// Every slot is made again for the new id (the wraps bind it): each from its public key, and
    /// the slot that opened this vault re-salted from its secret, as a rotation does; labels and
    /// the times slots were added stay. Nothing of this vault's history of seals comes along: the
    /// generation starts again, and a signed vault starts signing afresh, the slot that opened it
    /// attesting every slot under the new id (no ancestors, no tombstones), so the copy's members
    /// are pinned as a new vault's are. Throws `noSealSigner` for a signed vault opened without a
    /// slot's secret. Seal the result to write it; this vault is not changed.
    ///
    /// The slots at `dropping` are left out (`init --copy-of`: keys this machine knows were
    /// removed from the team), as `rotated(dropping:)` leaves them out.
    public func independentCopy(dropping: Set<Int> = [], now: Int64) throws -> UnlockedVault {
        let signs = isSigned
        if signs, openedSlotSigner() == nil { throw missingSigner() }
        var fresh = header
        fresh.vaultID = randomBytes(count: header.vaultID.count)
        fresh.generation = 0
        // Unsigned while the slots are made again, so that no attestation or signer of this vault's
        // seals (made for its id) is carried over; signing starts again below.
        fresh.flags &= ~VaultHeader.signedFlag
        let base = UnlockedVault(vault: vault, header: fresh, fileKey: fileKey, metadata: slotMetadata, opened: openedSlot)
        let (copy, _) = try base.rotated(dropping: dropping, now: now)
        copy.sealState = SealState()
        copy.sealEvidence = nil
        copy.sealSigner = nil
        if signs {
            guard let signer = copy.openedSlotSigner() else { throw VaultError.noSealSigner }
            try copy.startSigning(by: signer)
        }
        return copy
    }
}
