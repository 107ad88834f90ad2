import VaultFormat
import VaultModel

// MARK: - What an accepted copy teaches this machine

extension MemberTrust.Record {
    /// Records that the signed copy `evidence`, seen at `path` (absolute), was accepted here: trusted,
    /// taken with `vaultfile trust`, or written here. Nothing else ever changes a record: a copy
    /// refused for any reason teaches nothing.
    ///
    /// - The removals it carries are learned, whatever its generation: an older copy signed by a
    ///   member still tells of a removal this machine missed.
    /// - A copy at least as new as every header accepted here becomes the pinned set: its slot list.
    ///   Pinned keys it no longer holds and that no removal names are retired (a re-salt replaced
    ///   them); an older copy never retires keys a newer one added.
    /// - `recordHeader` keeps its header, for the ancestry of later copies and to know a re-salt accepted here again
    ///   (inside a git work tree, branches can leave several headers of one generation).
    /// - The first signed generation seen is the lowest accepted.
    /// `asNewest` (`vaultfile trust`) pins its slot list whatever its generation.
    public mutating func accept(_ evidence: SealEvidence, path: String, recordHeader: Bool, asNewest: Bool = false) {
        for tombstone in evidence.record.tombstones where !removed.contains(where: { $0.id == tombstone.removed }) {
            removed.append(MemberTrust.LeftMember(id: tombstone.removed, remover: tombstone.remover, generation: tombstone.generation))
        }
        let removedIDs = Set(removed.map(\.id))
        let newest = headers.map(\.generation).max() ?? 0
        if asNewest || evidence.generation >= newest || pinned.isEmpty {
            let keys = evidence.slots.filter { !$0.key.isEmpty }.map { MemberTrust.PinnedMember(position: $0.position,
                                                                                                  key: MemberKey(type: $0.type, bytes: $0.key), label: $0.label) }
            let held = Set(keys.map(\.key.id))
            // Keys a re-salt replaced are retired: the signer's old key, and every adder no slot holds
            // that attested a slot of its own type (a re-salt's old key attests the new one), even if
            // this machine never pinned it, so that a copy it signs, or one that holds it, is refused.
            // A pinned key a newer copy merely lacks (a member added on another branch) is unpinned,
            // not retired: it stays traceable through its attestation (the second attack review).
            var leaving: [[UInt8]] = []
            if let replaced = evidence.replacedKey, !held.contains(replaced.id) { leaving.append(replaced.id) }
            for (slot, attestation) in zip(evidence.slots, evidence.record.attestations)
            where attestation.adder.type == slot.type && !held.contains(attestation.adder.id) {
                leaving.append(attestation.adder.id)
            }
            for id in leaving where !removedIDs.contains(id) && !retired.contains(where: { $0.id == id }) {
                retired.append(MemberTrust.LeftMember(id: id, remover: nil, generation: evidence.generation))
            }
            pinned = keys.filter { !removedIDs.contains($0.key.id) }
            // Pinned by a person (`vaultfile trust`): a key back in the slots is no longer retired.
            // Otherwise a copy holding a retired key is never accepted (`retiredKeyInside`).
            if asNewest { retired.removeAll { held.contains($0.id) } }
        }
        pinned.removeAll { removedIDs.contains($0.key.id) }
        let header = SealAncestor(generation: evidence.generation, headerHash: evidence.headerHash)
        if recordHeader, !headers.contains(header) { headers.append(header) }
        firstSigned = min(firstSigned ?? evidence.generation, evidence.generation)
        paths.removeAll { $0 == path }
        paths.append(path)
        trim()
    }

    /// Forgets the removal of the member key `id` here (`slot add --readmit` put it back).
    public mutating func readmit(_ id: [UInt8]) {
        removed.removeAll { $0.id == id }
        retired.removeAll { $0.id == id }
    }
}
