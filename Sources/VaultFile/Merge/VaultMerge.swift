// MARK: - Three-way merge of vault contents

/// Merges two edits of one vault against their common ancestor, per entry and per field.
///
/// A change on one side only is taken; the same change on both sides is taken once;
/// additions and deletions merge. A real conflict never loses data: both sides changed
/// an entry differently → ours stays at `NAME`, theirs goes to `NAME.conflict-theirs`;
/// one side deleted what the other changed → the changed entry is kept.
public enum VaultMerge {
    /// The suffix of the entry that holds their side of a conflict.
    public static let conflictSuffix = ".conflict-theirs"

    /// One entry that needs a person's decision.
    public struct Conflict: Equatable, Sendable {
        /// The entry's name.
        public var name: String
        /// What happened, for the message.
        public var reason: String
    }

    /// The merged contents and the conflicts left in them.
    ///
    /// One walk over the three vaults' records in name order, comparing records by their bytes
    /// (the encoding is canonical: equal entries, equal bytes) and decoding only entries that
    /// differ. The result starts as `ours` and receives only what the merge changes in it, so
    /// sealing it copies the untouched records in runs: a merge of two 100,000-entry sides took
    /// 20× a `set` when it rebuilt every entry. Removals are applied before additions, so the
    /// count never passes the final one on the way (the entry limit is checked as before).
    public static func merge(base: Vault, ours: Vault, theirs: Vault) throws(VaultError) -> (vault: Vault, conflicts: [Conflict]) {
        var conflicts: [Conflict] = []
        var removals: [String] = []
        var puts: [(name: String, entry: Entry)] = []
        var parked: Set<String> = []
        let sides = [base, ours, theirs].map { vault in
            var records: [Vault.Record] = []
            records.reserveCapacity(vault.count)
            vault.forEachRecord { records.append($0) }
            return records
        }
        var next = [0, 0, 0]
        while true {
            // The smallest name any side has next.
            var smallest: Vault.Record?
            for side in 0..<3 where next[side] < sides[side].count {
                let record = sides[side][next[side]]
                if let current = smallest, current.withName({ a in record.withName { b in compareBytes(a, b) <= 0 } }) { continue }
                smallest = record
            }
            guard let smallest else { break }
            var present: [Vault.Record?] = [nil, nil, nil]
            for side in 0..<3 where next[side] < sides[side].count {
                let record = sides[side][next[side]]
                if record.withName({ a in smallest.withName { b in compareBytes(a, b) == 0 } }) {
                    present[side] = record
                    next[side] += 1
                }
            }
            let name = smallest.name
            let (b, o, t) = (present[0], present[1], present[2])
            // What the merged vault holds under `name`: nil for nothing, else the record or entry to keep.
            var kept: Vault.Record?
            switch (o, t) {
            case (nil, nil):
                kept = nil  // deleted on both sides, or never there
            case (let record?, nil), (nil, let record?):
                // Present on one side only: an addition, a deletion, or a deletion against a change.
                if let b, b.isSame(as: record) {
                    kept = nil  // deleted on one side, unchanged on the other: deleted
                } else {
                    if b != nil {
                        conflicts.append(Conflict(name: name, reason: "deleted on one side, changed on the other; the changed entry is kept"))
                    }
                    kept = record
                }
            case (let oursRecord?, let theirsRecord?):
                if oursRecord.isSame(as: theirsRecord) {
                    kept = oursRecord
                } else if let merged = mergeEntry(base: b?.entry, ours: oursRecord.entry, theirs: theirsRecord.entry) {
                    kept = .edited(name: Array(name.utf8), entry: merged)
                } else {
                    kept = oursRecord
                    let parkedName = name + conflictSuffix
                    puts.append((parkedName, theirsRecord.entry))
                    parked.insert(parkedName)
                    conflicts.append(Conflict(name: name, reason: "changed differently on both sides; theirs is in '\(parkedName)'"))
                }
            }
            if let kept {
                // Ours holds it already unless it changed or a conflict parked another entry here.
                if let o, o.isSame(as: kept), !parked.contains(name) { continue }
                puts.append((name, kept.entry))
            } else if o != nil && !parked.contains(name) {
                removals.append(name)
            }
        }
        var result = ours
        for name in removals { try result.remove(name) }
        for (name, entry) in puts { try result.put(entry, as: name) }
        return (result, conflicts)
    }

    /// Merges value and fields separately; nil when the same part changed differently on both sides.
    static func mergeEntry(base: Entry?, ours: Entry, theirs: Entry) -> Entry? {
        guard let value = pick(base: base?.value, ours: ours.value, theirs: theirs.value) ?? nil else { return nil }
        var fields: [String: [UInt8]] = [:]
        for key in Set(ours.fields.keys).union(theirs.fields.keys).union(base?.fields.keys ?? [:].keys) {
            guard let chosen = pick(base: base?.fields[key], ours: ours.fields[key], theirs: theirs.fields[key]) else { return nil }
            if let chosen { fields[key] = chosen }
        }
        return Entry(value: value, fields: fields, created: min(ours.created, theirs.created), modified: max(ours.modified, theirs.modified))
    }

    /// The three-way choice for one part: `.some(x)` is the merged part (nil inside = absent), `nil` is a conflict.
    private static func pick(base: [UInt8]?, ours: [UInt8]?, theirs: [UInt8]?) -> [UInt8]?? {
        if ours == theirs { return .some(ours) }
        if ours == base { return .some(theirs) }
        if theirs == base { return .some(ours) }
        return nil
    }
}

// MARK: - Comparing records

extension Vault.Record {
    /// Whether two records hold equal entries: stored ones by their bytes (one canonical encoding
    /// per entry, the name included), others by their decoded entries.
    func isSame(as other: Vault.Record) -> Bool {
        if case .stored(let left, let i) = self, case .stored(let right, let j) = other {
            return withExtendedLifetime((left, right)) { compareBytes(left.records(i..<i + 1), right.records(j..<j + 1)) == 0 }
        }
        return withName { a in other.withName { b in compareBytes(a, b) == 0 } } && entry == other.entry
    }
}
