import VaultModel

// MARK: - Merging two copies without their ancestor

extension VaultMerge {
    /// Merges two copies of one vault when their common ancestor is not known (`vaultfile merge`
    /// without `--base`).
    ///
    /// Without the ancestor an addition cannot be told from a deletion, nor a change on one side
    /// from a change on the other, so nothing is dropped and nothing is chosen: an entry present
    /// on one side only is kept; entries with the same value and fields are taken once (created
    /// the earlier, modified the later of the two times); entries whose value or fields differ
    /// are a conflict, ours at `NAME` and theirs at `NAME.conflict-theirs`.
    public static func merge(ours: Vault, theirs: Vault) throws(VaultError) -> (vault: Vault, conflicts: [Conflict]) {
        var result = Vault()
        var conflicts: [Conflict] = []
        let names = Set(ours.names + theirs.names).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for name in names {
            switch (ours.entry(name), theirs.entry(name)) {
            case (nil, nil):
                continue
            case (let entry?, nil), (nil, let entry?):
                try result.put(entry, as: name)
            case (let o?, let t?):
                if o.value == t.value && o.fields == t.fields {
                    try result.put(Entry(value: o.value, fields: o.fields, created: min(o.created, t.created), modified: max(o.modified, t.modified)), as: name)
                } else {
                    let parked = name + conflictSuffix
                    try checkParkingIsFree(parked, for: name, ours: ours, theirs: theirs)
                    try result.put(o, as: name)
                    try result.put(t, as: parked)
                    conflicts.append(Conflict(name: name, reason: "differs between the two copies; theirs is in '\(parked)'"))
                }
            }
        }
        try result.mergeHistory(base: nil, ours: ours, theirs: theirs)
        return (result, conflicts)
    }
}
