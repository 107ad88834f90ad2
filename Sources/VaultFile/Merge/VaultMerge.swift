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
    public static func merge(base: Vault, ours: Vault, theirs: Vault) throws(VaultError) -> (vault: Vault, conflicts: [Conflict]) {
        var result = Vault()
        var conflicts: [Conflict] = []
        let names = Set(base.names + ours.names + theirs.names).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for name in names {
            let b = base.entry(name), o = ours.entry(name), t = theirs.entry(name)
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
                if let merged = mergeEntry(base: b, ours: ours, theirs: theirs) {
                    try result.put(merged, as: name)
                } else {
                    try result.put(ours, as: name)
                    let parked = name + conflictSuffix
                    try result.put(theirs, as: parked)
                    conflicts.append(Conflict(name: name, reason: "changed differently on both sides; theirs is in '\(parked)'"))
                }
            }
        }
        try result.mergeHistory(base: base, ours: ours, theirs: theirs)
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
