import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Merging two copies of a vault (outside git)

extension VaultStore {
    /// Merges the copy at `theirs` into this vault (OURS), under OURS's lock, and replaces OURS
    /// with the result atomically: `vaultfile merge`, for two copies that were each changed (two
    /// USB sticks). With `writingBoth` (`merge --both`) THEIRS is replaced by the same bytes, under
    /// its own lock, so that the two copies converge.
    ///
    /// With `base` (a copy both came from) the merge is three-way, as git's merge driver does
    /// it (`mergeFiles`); without, two-way (`VaultMerge.merge(ours:theirs:)`). The result is
    /// sealed at one more than the largest of ours, theirs and the generation `rollback` has
    /// recorded for the vault, so it is newer than every copy seen (a side whose generation is no
    /// plausible successor, or that the key lineage of `rollback` refuses, is left out:
    /// `Generations.successorBase`, KeyLineage.swift); `rollback` then records it, once. A merge is
    /// never refused as a write to an older copy: it exists to repair a fork; and a copy sealed
    /// under a file key `rollback` knows as retired, or that its key lineage refuses, gives way to
    /// the other copy's key.
    /// Returns the conflicts, which the result holds side by side, and the result's generation.
    ///
    /// Each copy is opened with `unlocker`: with the key it knows or looks up (the agent's) when
    /// one verifies, else with its credentials, asked for once, when a copy needs them.
    public func mergeCopy(
        theirs: String, base: String? = nil, with unlocker: Unlocker, allowLowerKDF: Bool = false, rollback: RollbackCheck? = nil,
        writingBoth: Bool = false
    ) throws -> (conflicts: [VaultMerge.Conflict], generation: UInt64) {
        let theirsStore = VaultStore(path: theirs, lockTimeout: lockTimeout)
        // One file named twice is written once.
        let other = writingBoth && theirsStore.lockPath != lockPath ? theirsStore : nil
        let (merge, header) = try withLocks(alsoOf: other) { () throws -> (PreparedMerge, VaultHeader) in
            let merge = try PreparedMerge(
                base: base, ours: path, theirs: theirs, roles: .copies, with: unlocker, allowLowerKDF: allowLowerKDF,
                retiredKeys: rollback?.retiredKeys, acceptRotation: rollback?.acceptRotation ?? false, memberTrust: rollback?.memberTrust,
                allowUntrusted: rollback?.allowUntrusted ?? false)
            // A side the key lineage refuses never raises the generation (`keptGenerations`).
            merge.sealer.rebaseGeneration(
                on: rollback?.mergeBase(of: merge.keptGenerations, vaultID: merge.oursHeader.vaultID)
                    ?? Generations.successorBase(of: merge.keptGenerations, record: nil))
            try replace(expecting: merge.oursFile.identity, mode: merge.oursFile.mode) { output throws(VaultError) in
                guard let other else { return try merge.sealer.seal(to: output) }
                // One seal, its bytes written to both temporary files as they are made: the two copies end byte-identical.
                // THEIRS is renamed first; a failure after that leaves it the newest copy, and OURS as it was.
                try other.replace(expecting: merge.theirsFile.identity, mode: merge.theirsFile.mode) { second throws(VaultError) in
                    try merge.sealer.seal(to: TeeOutput(output, second))
                }
            }
            return (merge, merge.sealer.header)
        }
        let conflicts = merge.conflicts
        // After the rename, never before: a merge killed earlier leaves OURS and the record as they were.
        rollback?.merged(header, path: path)
        rollback?.lineageMerged(merge.sealer, dropping: merge.droppedKeys)
        rollback?.trustMerged(merge.sealer, path: path)
        if let side = merge.refusedSide { rollback?.findings.append(.mergeLeftOut(side)) }
        return (conflicts, header.generation)
    }

    /// Runs `body` holding this vault's lock and, when given, `other`'s: taken in the order of
    /// their lock files' paths, so that two merges of the same two copies named the other way
    /// round wait for each other instead of each holding one lock.
    private func withLocks<R>(alsoOf other: VaultStore?, _ body: () throws -> R) throws -> R {
        guard let other else { return try withLock(body) }
        let (first, second) = lockPath < other.lockPath ? (self, other) : (other, self)
        return try first.withLock { try second.withLock(body) }
    }
}

/// Writes every byte to two outputs, in order.
private final class TeeOutput: SealedOutput {
    private let first: any SealedOutput, second: any SealedOutput

    init(_ first: any SealedOutput, _ second: any SealedOutput) {
        self.first = first
        self.second = second
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        try first.write(bytes)
        try second.write(bytes)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(VaultError) {
        try first.write(bytes, at: offset)
        try second.write(bytes, at: offset)
    }
}
