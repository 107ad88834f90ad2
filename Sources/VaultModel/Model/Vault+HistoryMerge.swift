// MARK: - Merging histories

extension Vault {
    /// Gives a merged vault the history of both sides: every version either side kept (equal
    /// versions once), newest first by when they were replaced, within the merged policy; the
    /// versions of a side's removed entry only when the merged vault has no entry of that name.
    ///
    /// With `base`, the versions merge three-way as a set: a version that `base` kept, or the
    /// value `base` held that a side has since replaced, and that one side no longer holds, was
    /// dropped there on purpose (`trash empty`, `history --prune`, a new line under a reused
    /// name) and stays dropped; only what a side added since `base` comes in from one side.
    ///
    /// The policy merges as a part of an entry does: a change on one side only is taken (so
    /// turning history on or off on a branch survives the merge); without `base`, or when both
    /// sides changed it differently, a side that keeps history wins over one that keeps none,
    /// and ours over theirs: a merge never drops history by itself.
    package mutating func mergeHistory(base: Vault?, ours: Vault, theirs: Vault) throws(VaultError) {
        let o = ours.historyPolicy, t = theirs.historyPolicy
        let policy: HistoryPolicy?
        if o == t { policy = o } else if let base, base.historyPolicy == o { policy = t } else if let base, base.historyPolicy == t { policy = o } else { policy = o ?? t }
        guard let policy else {
            historyState = nil
            return
        }
        var state = HistoryState(policy: policy)
        let sides = [ours, theirs].compactMap { side in side.historyState.map { (vault: side, history: $0) } }
        var names = Set<[UInt8]>()
        for side in sides { names.formUnion(try side.history.names()) }
        for key in names {
            var versions: [EntryVersion] = []
            // A removed entry's line never joins a live one (Vault+HistoryLines.swift): where the
            // merged vault has an entry of that name, only a side that has one too gives versions.
            let live = contains(key: key)
            for side in sides where !live || side.vault.contains(key: key) {
                for version in try side.history.versions(forKey: key) where !versions.contains(version) { versions.append(version) }
            }
            if let base { versions = try Self.keptSinceBase(versions, key: key, base: base, ours: ours, theirs: theirs) }
            try state.setVersions(versions.sorted { $0.replaced > $1.replaced }, forKey: key)
        }
        historyState = state
        try trimTrash()
    }

    /// `versions` without those that `base` held under `key` (as a version, or as its current
    /// entry that a side has since replaced) and that `ours` or `theirs` no longer holds there.
    private static func keptSinceBase(_ versions: [EntryVersion], key: [UInt8], base: Vault,
                                      ours: Vault, theirs: Vault) throws(VaultError) -> [EntryVersion] {
        let baseVersions = try base.historyState?.versions(forKey: key) ?? []
        let baseEntry = base.entry(forKey: key)
        guard !baseVersions.isEmpty || baseEntry != nil else { return versions }
        let held = try [ours, theirs].map { side throws(VaultError) in
            (versions: try side.historyState?.versions(forKey: key) ?? [], entry: side.entry(forKey: key))
        }
        return versions.filter { version in
            if baseVersions.contains(version) { return held.allSatisfy { $0.versions.contains(version) } }
            if version.entry == baseEntry {
                // The value base held, replaced since: kept while each side still holds that value.
                return held.allSatisfy { side in side.entry == version.entry || side.versions.contains { $0.entry == version.entry } }
            }
            return true
        }
    }

    /// Moves the history kept under the name whose bytes are `old` to `new`, joining any kept
    /// there (newest first): a merge that stores an incoming name in NFC (`VaultMerge.separateTwins`)
    /// moves the entry, and its earlier versions go with it instead of staying behind under the old
    /// spelling as a removed entry's (issue 47).
    package mutating func moveHistory(from old: [UInt8], to new: [UInt8]) throws(VaultError) {
        guard old != new else { return }
        try attachHistory(try detachHistory(key: old), key: new)
    }
}
