import VaultModel

// MARK: - An edit made while others wrote

extension VaultMerge {
    /// The suffix of the entry that holds an edit which conflicted with a change made meanwhile
    /// (`vaultfile edit`), as `conflictSuffix` holds their side of a merge.
    public static let editConflictSuffix = ".conflict-edit"

    /// What `applyEdit` did with an edit.
    public enum EditOutcome: Equatable, Sendable {
        /// The edit is in the entry (merged with what others changed in its other parts meanwhile).
        case applied
        /// The entry already held the edited bytes (someone made the same change): nothing to write.
        case unchanged
        /// The entry was removed meanwhile; as `merge` keeps a changed entry against a deletion,
        /// the edited entry is back under its name.
        case restored
        /// Someone changed the same part differently meanwhile: their version stays at the name and
        /// the edited entry went to `parked`; `parts` are the parts that differ.
        case conflict(parked: String, parts: [EntryPart])
    }

    /// Applies an edit of `part` of `name`, begun on `base` (the entry when the editor opened; nil
    /// when there was none), to `vault` as it is now, with `merge`'s per-field three-way rule
    /// (`mergeEntry`): the edit is "theirs", the vault's current entry "ours".
    ///
    /// A part only the edit changed takes the edit; a part only others changed keeps theirs; a
    /// part changed alike is taken once; a part changed differently is a conflict: the current
    /// entry stays at `name` and the edited one goes to `NAME.conflict-edit` (the first free of
    /// `NAME.conflict-edit`, `NAME.conflict-edit-2`, …: an earlier conflict is never overwritten).
    /// A NAME too long for the suffix within the 1024-byte name limit is cut, at a character
    /// boundary, before it (`parkingName`), so that the edit is always kept.
    public static func applyEdit(
        _ edited: [UInt8], part: EntryPart, of name: String, base: Entry?, to vault: inout Vault,
        now: Int64 = currentTimeMilliseconds()
    ) throws(VaultError) -> EditOutcome {
        let stored = vault.existingName(for: name) ?? name
        // A missing entry is a base whose parts are absent (its value empty): editing a field of a
        // new entry does not conflict with a value someone gave it meanwhile.
        let start = base ?? Entry(value: [], created: now, modified: now)
        var mine = start
        switch part {
        case .value: mine.value = edited
        case .field(let field): mine.fields[field] = edited
        }
        mine.modified = now
        guard let current = vault.entry(stored) else {
            if base == nil {
                try vault.setValue(edited, for: name, part: part, now: now)
                return .applied
            }
            try vault.put(mine, as: stored, now: now)
            return .restored
        }
        let merged = mergeEntry(base: start, ours: current, theirs: mine)
        guard !merged.conflicts.isEmpty else {
            guard merged.ours.value != current.value || merged.ours.fields != current.fields else { return .unchanged }
            var entry = merged.ours
            entry.created = current.created
            entry.modified = now
            try vault.put(entry, as: stored, now: now)
            return .applied
        }
        var parked = parkingName(stored, editConflictSuffix)
        var number = 2
        while vault.existingName(for: parked) != nil {
            parked = parkingName(stored, editConflictSuffix + "-\(number)")
            number += 1
        }
        var theirs = merged.theirs
        theirs.created = now
        theirs.modified = now
        try vault.put(theirs, as: parked, now: now)
        return .conflict(parked: parked, parts: merged.conflicts)
    }

    /// `stored` followed by `suffix`; `stored` cut at a character boundary when the whole would
    /// pass the name limit (`VaultLimits.maxNameLength`). Any cut of a valid name followed by the
    /// suffix is a valid name: no component of it becomes empty, `.` or `..`.
    static func parkingName(_ stored: String, _ suffix: String) -> String {
        let room = VaultLimits.maxNameLength - suffix.utf8.count
        guard stored.utf8.count > room else { return stored + suffix }
        return String(EntryName.prefix(of: stored, fittingIn: room)) + suffix
    }
}
