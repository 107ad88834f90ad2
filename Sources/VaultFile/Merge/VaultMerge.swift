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
    public static func merge(base: Vault, ours: Vault, theirs: Vault) throws(VaultError) -> (vault: Vault, conflicts: [Conflict]) {
        var result = Vault()
        var conflicts: [Conflict] = []
        // Names as bytes: a Set of Strings would collapse two spellings of one name (Swift compares
        // strings by canonical equivalence) and lose one entry; they stay two entries until
        // `separateTwins` decides about them.
        let keys = Set((base.names + ours.names + theirs.names).map { Array($0.utf8) }).sorted { $0.lexicographicallyPrecedes($1) }
        for key in keys {
            let name = String(decoding: key, as: UTF8.self)
            let b = base.entry(forKey: key), o = ours.entry(forKey: key), t = theirs.entry(forKey: key)
            switch (o, t) {
            case (nil, nil):
                continue  // deleted on both sides, or never there
            case (let entry?, nil), (nil, let entry?):
                // Present on one side only: an addition, a deletion, or a deletion against a change.
                if let b, b == entry {
                    continue  // deleted on one side, unchanged on the other: deleted
                }
                if b != nil {
                    conflicts.append(Conflict(name: name, reason: "deleted on one side, changed on the other; the changed entry is kept"))
                }
                try result.put(entry, as: name)
            case (let ours?, let theirs?):
                if ours == theirs { try result.put(ours, as: name); continue }
                let merged = mergeEntry(base: b, ours: ours, theirs: theirs)
                try result.put(merged.ours, as: name)
                guard !merged.conflicts.isEmpty else { continue }
                let parked = name + conflictSuffix
                try result.put(merged.theirs, as: parked)
                let what = merged.conflicts.map { $0.fieldName.map { "field '\($0)'" } ?? "the value" }.joined(separator: ", ")
                conflicts.append(Conflict(name: name, reason: "changed differently on both sides (\(what)); theirs is in '\(parked)'",
                                          parts: merged.conflicts))
            }
        }
        try separateTwins(in: &result, base: base, ours: ours, theirs: theirs, conflicts: &conflicts)
        try result.mergeHistory(base: base, ours: ours, theirs: theirs)
        return (result, conflicts)
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
