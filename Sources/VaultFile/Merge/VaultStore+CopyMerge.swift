import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Merging two copies of a vault (outside git)

extension VaultStore {
    /// Merges the copy at `theirs` into this vault (OURS), under OURS's lock, and replaces OURS
    /// with the result atomically: `vaultfile merge`, for two copies that were each changed (two
    /// USB sticks).
    ///
    /// With `base` (a copy both came from) the merge is three-way, as git's merge driver does
    /// it (`mergeFiles`); without, two-way (`VaultMerge.merge(ours:theirs:)`). The result is
    /// sealed at one more than the largest of ours, theirs and the generation `rollback` has
    /// recorded for the vault, so it is newer than every copy seen; `rollback` then records it.
    /// A merge is never refused as a write to an older copy: it exists to repair a fork; and a
    /// copy the key lineage of `rollback` refuses gives way to the other copy's key, its
    /// generation not counted (KeyLineage.swift).
    /// Returns the conflicts, which the result holds side by side, and the result's generation.
    ///
    /// Each copy is opened with `unlocker`: with the key it knows or looks up (the agent's) when
    /// one verifies, else with its credentials, asked for once, when a copy needs them.
    public func mergeCopy(
        theirs: String, base: String? = nil, with unlocker: Unlocker, allowLowerKDF: Bool = false, rollback: RollbackCheck? = nil
    ) throws -> (conflicts: [VaultMerge.Conflict], generation: UInt64) {
        let (merge, header) = try withLock { () throws -> (PreparedMerge, VaultHeader) in
            let merge = try PreparedMerge(
                base: base, ours: path, theirs: theirs, roles: .copies, with: unlocker, allowLowerKDF: allowLowerKDF,
                retiredKeys: rollback?.retiredKeys, acceptRotation: rollback?.acceptRotation ?? false)
            let recorded = rollback?.recordedGeneration(of: merge.oursHeader.vaultID) ?? 0
            merge.sealer.advanceGeneration(past: max(merge.keptGenerations.max() ?? 0, recorded))
            try replace(expecting: merge.oursFile.identity, mode: merge.oursFile.mode) { output throws(VaultError) in
                try merge.sealer.seal(to: output)
            }
            return (merge, merge.sealer.header)
        }
        let conflicts = merge.conflicts
        // After the rename, never before: a merge killed earlier leaves OURS and the record as they were.
        rollback?.merged(header, path: path)
        rollback?.lineageMerged(merge.sealer, dropping: merge.droppedKeys)
        return (conflicts, header.generation)
    }
}
