import VaultFile
import VaultFormat
import VaultModel

// MARK: - Removed keys in a copy to pin

extension VaultfileCommand.Trust {
    /// A removal that names a key of the copy: who removed it (a member key id) and at which generation.
    struct Removal {
        /// The remover's member key id.
        let remover: [UInt8]?
        /// The generation of the seal that removed it.
        let generation: UInt64
    }

    /// The removals this machine learned (`record`) or the copy `evidence` carries, by removed key id.
    static func removals(_ evidence: SealEvidence, record: MemberTrust.Record?) -> [[UInt8]: Removal] {
        var removals: [[UInt8]: Removal] = [:]
        for member in record?.removed ?? [] { removals[member.id] = Removal(remover: member.remover, generation: member.generation) }
        for tombstone in evidence.record.tombstones where removals[tombstone.removed] == nil {
            removals[tombstone.removed] = Removal(remover: tombstone.remover, generation: tombstone.generation)
        }
        return removals
    }

    /// What the HERE column says of a slot whose key was removed: by whom (a fingerprint) and when.
    static func removedState(_ removal: Removal, evidence: SealEvidence, record: MemberTrust.Record?) -> String {
        let keys = (record?.pinned ?? []).map(\.key) + evidence.slots.map { MemberKey(type: $0.type, bytes: $0.key) } + [evidence.signer]
        let remover = removal.remover.map { id in keys.first { $0.id == id }?.fingerprint ?? "key " + String(MemberTrust.hex(id).prefix(16)) }
        return "removed (by \(remover ?? "a member") at generation \(removal.generation))"
    }

    /// The keys of `evidence` that need `--readmit` to be pinned (fingerprints): its signer when
    /// removed, and each slot key removed. Always a person's word: an attestation carries no time,
    /// so a member's attestation from before the removal (a stale fork, replayed) would pass for a
    /// readmit (the second attack review).
    static func needingReadmit(_ evidence: SealEvidence, record: MemberTrust.Record?) -> [String] {
        let removals = removals(evidence, record: record)
        var named: [String] = []
        if removals[evidence.signer.id] != nil { named.append(evidence.signer.fingerprint) }
        for slot in evidence.slots where !slot.key.isEmpty {
            let key = MemberKey(type: slot.type, bytes: slot.key)
            if removals[key.id] != nil { named.append(key.fingerprint) }
        }
        return named
    }
}
