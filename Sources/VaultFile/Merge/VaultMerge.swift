import VaultModel

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
        /// The parts of the entry both sides changed differently (empty for a conflict of whole entries).
        public var parts: [EntryPart] = []
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
        // Names only theirs has (added there): the names `separateTwins` looks at.
        var incoming: [String] = []
        var puts: [(name: String, entry: Entry)] = []
        // By bytes: Swift's String equality would take two spellings of one name for one.
        var parked: Set<[UInt8]> = []
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
            // The record of each side under that name (three locals: an array here cost an
            // allocation per name).
            var b: Vault.Record?, o: Vault.Record?, t: Vault.Record?
            for side in 0..<3 where next[side] < sides[side].count {
                let record = sides[side][next[side]]
                if record.withName({ a in smallest.withName { b in compareBytes(a, b) == 0 } }) {
                    switch side {
                    case 0: b = record
                    case 1: o = record
                    default: t = record
                    }
                    next[side] += 1
                }
            }
            // Made only where a name is kept, removed or reported: most names of a merge are unchanged.
            var name: String { smallest.name }
            // What the merged vault holds under `name`: nil for nothing, else the record or entry to keep.
            var kept: Vault.Record?
            switch (o, t) {
            case (nil, nil):
                kept = nil  // deleted on both sides, or never there
            case (let record?, nil), (nil, let record?):
                if o == nil && b == nil { incoming.append(name) }
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
                } else {
                    let merged = mergeEntry(base: b?.entry, ours: oursRecord.entry, theirs: theirsRecord.entry)
                    kept = .edited(name: Array(name.utf8), entry: merged.ours)
                    if !merged.conflicts.isEmpty {
                        let parkedName = name + conflictSuffix
                        try checkParkingIsFree(parkedName, for: name, ours: ours, theirs: theirs)
                        puts.append((parkedName, merged.theirs))
                        parked.insert(Array(parkedName.utf8))
                        let what = merged.conflicts.map { $0.fieldName.map { "field '\($0)'" } ?? "the value" }.joined(separator: ", ")
                        conflicts.append(Conflict(name: name, reason: "changed differently on both sides (\(what)); theirs is in '\(parkedName)'",
                                                  parts: merged.conflicts))
                    }
                }
            }
            if let kept {
                // Ours holds it already unless it changed or a conflict parked another entry here.
                if let o, o.isSame(as: kept), parked.isEmpty || !parked.contains(Array(name.utf8)) { continue }
                puts.append((name, kept.entry))
            } else if o != nil && (parked.isEmpty || !parked.contains(Array(name.utf8))) {
                removals.append(name)
            }
        }
        var result = ours
        for name in removals { try result.remove(name) }
        for (name, entry) in puts { try result.put(entry, as: name) }
        let moved = try separateTwins(in: &result, incoming: incoming, ours: ours, conflicts: &conflicts)
        try result.mergeHistory(base: base, ours: ours, theirs: theirs)
        // An incoming name stored in NFC keeps the history their side kept under its spelling.
        for (old, new) in moved { try result.moveHistory(from: old, to: new) }
        return (result, conflicts)
    }

    /// Throws `conflictNameTaken` when either side holds `parked` as an entry of its own: their
    /// version parked there would replace it, or be replaced by it.
    static func checkParkingIsFree(_ parked: String, for name: String, ours: Vault, theirs: Vault) throws(VaultError) {
        let key = Array(parked.utf8)
        let holders = [ours.contains(key: key) ? "OURS" : nil, theirs.contains(key: key) ? "THEIRS" : nil].compactMap { $0 }
        guard holders.isEmpty else { throw .mergeRefused(.conflictNameTaken(entry: name, parked: parked, holders: holders)) }
    }

    // MARK: One entry, part by part

    /// One entry present on both sides, merged part by part (the value, each field) against base.
    struct EntryMerge {
        /// Every one-sided change, and ours in the parts both sides changed differently.
        var ours: Entry
        /// Every one-sided change, and theirs in those parts; equal to `ours` when nothing conflicts.
        var theirs: Entry
        /// The parts both sides changed differently, the value first, then fields by name.
        var conflicts: [EntryPart]
    }

    /// Merges the value and each field on its own: a part changed on one side only takes that
    /// change, a part changed alike on both sides is taken once, and only a part both sides
    /// changed differently is a conflict (ours in `ours`, theirs in `theirs`). So `resolve --ours`
    /// or `--theirs` settles the conflicting parts and keeps every one-sided change of the other parts.
    static func mergeEntry(base: Entry?, ours: Entry, theirs: Entry) -> EntryMerge {
        var conflicts: [EntryPart] = []
        var mergedOurs = Entry(value: ours.value, created: min(ours.created, theirs.created), modified: max(ours.modified, theirs.modified))
        var mergedTheirs = mergedOurs
        if let value = pick(base: base?.value, ours: ours.value, theirs: theirs.value) {
            mergedOurs.value = value ?? []
            mergedTheirs.value = value ?? []
        } else {
            conflicts.append(.value)
            mergedTheirs.value = theirs.value
        }
        let keys = Set(ours.fields.keys).union(theirs.fields.keys).union(base?.fields.keys ?? [:].keys)
        for key in keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            if let chosen = pick(base: base?.fields[key], ours: ours.fields[key], theirs: theirs.fields[key]) {
                mergedOurs.fields[key] = chosen
                mergedTheirs.fields[key] = chosen
            } else {
                conflicts.append(.field(key))
                mergedOurs.fields[key] = ours.fields[key]
                mergedTheirs.fields[key] = theirs.fields[key]
            }
        }
        return EntryMerge(ours: mergedOurs, theirs: mergedTheirs, conflicts: conflicts)
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
