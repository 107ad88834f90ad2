// MARK: - Lines of history

/// `rm` ends an entry's line of history: the removed entry waits in the trash (its versions under
/// its name, FORMAT.md §7.1) until `trash empty`, `history --prune` or the trash limit drops it,
/// and a new entry under the same name starts a line of its own (issue 39, item 8: after `rm db;
/// set db fresh`, `trash empty` kept the removed entry's values, then shown as db's history).
///
/// The format keeps one record of versions per name, and a record whose name has an entry is that
/// entry's history: a removed entry and a new one cannot share a name there. So a new entry under
/// a name in the trash takes the name from the removed one, whose versions are dropped at once
/// (`trash restore NAME` first keeps it; `history NAME` of the new entry starts empty).
extension Vault {
    /// Drops the versions kept under `key` when no entry has that name (a removed entry in the
    /// trash): call it just before a new entry is stored under `key`.
    mutating func endRemovedLine(key: [UInt8]) throws(VaultError) {
        guard var state = historyState, !state.isUnread, !contains(key: key) else { return }
        historyState = nil  // no second copy of the state while it changes
        defer { historyState = state }
        try state.index()
        let dropped = try state.versions(forKey: key).count
        if dropped > 0 {
            try state.setVersions([], forKey: key)
            state.endedLines[key, default: 0] += dropped
        }
    }

    /// Ends the removed lines of the names of `trashed` (`removedNames()` before a bulk put) that
    /// now have an entry: the bulk put stored those entries without `endRemovedLine`.
    mutating func endRemovedLines(reusing trashed: [[UInt8]]) throws(VaultError) {
        let reused = trashed.filter { contains(key: $0) }
        guard !reused.isEmpty, var state = historyState else { return }
        historyState = nil
        defer { historyState = state }
        for key in reused {
            let dropped = try state.versions(forKey: key).count
            try state.setVersions([], forKey: key)
            if dropped > 0 { state.endedLines[key, default: 0] += dropped }
        }
    }

    /// The removed entries (in the trash) whose versions were dropped since the vault was read,
    /// because a new entry took their name (`set`, `cp`, `mv`, `import`), with how many versions
    /// each had, sorted by name: what a command tells the user it dropped.
    public var endedRemovedLines: [(name: String, versions: Int)] {
        (historyState?.endedLines ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { (name: String(decoding: $0.key, as: UTF8.self), versions: $0.value) }
    }

    /// The names in the trash (history without an entry), for a bulk put that adds many entries:
    /// empty when the vault keeps no history.
    mutating func removedNames() throws(VaultError) -> [[UInt8]] {
        guard var state = historyState, !state.isUnread else { return [] }
        try state.index()
        let names = try state.names().filter { !contains(key: $0) }
        historyState = state
        return names
    }
}
