import VaultFormat
import VaultModel

// MARK: - An import's records in runs on disk

extension ImportedEntries {
    /// The records a writer wrote (`ImportRecordWriter.records()`), checked: in memory as
    /// `init(records:renamings:)` checks them; in runs, for a repeated name and the number of
    /// entries, which throw what `init(_:renamings:)` throws over the same entries decoded (the
    /// first repeat in input order; the limit when more entries than it come before that repeat).
    ///
    /// `distinct`: the writer's names were told new as they came (`StreamedNameCheck`, a streamed
    /// build declines at a repeat), so runs need no pass of their names for one.
    init(written: WrittenRecords, renamings: [ImportRenaming], distinct: Bool = false) throws(VaultError) {
        switch written {
        case .memory(let records):
            try self.init(records: records, renamings: renamings)
        case .runs(let runs, let dangerous):
            let repeated = distinct ? nil : try runs.firstRepeat()
            guard (repeated?.index ?? runs.count) <= VaultLimits.maxEntries else {
                throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
            }
            if let repeated {
                // Only the name is said, which the repeat's two records share.
                var name = ""
                try runs.forEachItem { _, bytes, index in if index == repeated.index { name = String(decoding: bytes, as: UTF8.self) } }
                throw .malformedInput("the entry '\(name)' appears twice in the input")
            }
            self.init(checked: runs, dangerous: dangerous, renamings: renamings)
        }
    }

    /// Whether the entries are sorted runs on disk (`runs`), which only a seal reads as they are.
    public var isOnDisk: Bool { runs != nil }

    /// The names of these entries in runs on disk that `vault` holds already (`Vault.clashes(with:)`);
    /// nil for entries in memory, or when the vault's names cannot be checked that way.
    package func clashes(in vault: Vault) throws(VaultError) -> IncomingClashes? {
        guard let runs else { return nil }
        return try vault.clashes(with: runs)
    }

    /// These entries with their records in memory: as they are, or, for runs on disk, merged into
    /// one buffer in name order (what `init(records:renamings:)` makes of records out of order);
    /// renamings, warnings, history and origin kept.
    public func inMemory() throws(VaultError) -> ImportedEntries {
        guard let runs else { return self }
        let (sorted, positions) = try runs.materialized()
        var copy = ImportedEntries(checked: sorted, positions: positions, renamings: renamings, order: nil)
        copy.warnings = warnings
        copy.history = history
        copy.fromForeign = fromForeign
        copy.entryWarningSources = entryWarningSources
        return copy
    }
}
