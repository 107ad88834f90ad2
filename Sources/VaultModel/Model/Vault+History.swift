import SecureMemory

// MARK: - The history a vault keeps

/// The history of a vault that keeps one (content version 2): its policy, the section as
/// decrypted, and the records changed since.
///
/// The section is checked and indexed (`StoredHistory`) only when a command reads or changes
/// history; a vault that is only read (`get`) never looks at it.
struct HistoryState: Sendable {
    var policy: HistoryPolicy
    /// The section as decrypted and not yet checked; nil for history built in memory.
    var section: (plaintext: PlaintextBuffer, range: Range<Int>)?
    /// The section, checked and indexed, once a command needed it.
    var stored: StoredHistory?
    /// Records changed since decryption, by name; an empty list removes the record.
    var changes: [[UInt8]: [EntryVersion]] = [:]
    /// The removed entries whose versions a new entry under their name dropped since decryption,
    /// with how many versions each had (`Vault.endedRemovedLines`); not part of equality.
    var endedLines: [[UInt8]: Int] = [:]
    /// False once an entry went into the trash: the trash limit is applied before the next seal
    /// (`trimTrashIfNeeded`), not after each removal, so that `rm -r` of many entries stays linear.
    var trashTrimmed = true

    /// True for a vault read for its entries only (`get`, `VaultStore.readsEntriesOnly`): its
    /// section was authenticated but not kept, so its history can be neither read nor written.
    private(set) var isUnread = false

    init(policy: HistoryPolicy, section: (plaintext: PlaintextBuffer, range: Range<Int>)? = nil) {
        self.policy = policy
        self.section = section
    }

    /// The history of a vault read for its entries only.
    init(unreadWith policy: HistoryPolicy) {
        self.policy = policy
        isUnread = true
    }

    /// Checks and indexes the section, once.
    mutating func index() throws(VaultError) {
        precondition(!isUnread, "the history of a vault read for its entries only is never read or changed")
        if stored == nil, let section { stored = try StoredHistory(plaintext: section.plaintext, range: section.range) }
    }

    /// The section checked and indexed, without keeping the index (for a reader that cannot mutate).
    func indexed() throws(VaultError) -> StoredHistory? {
        precondition(!isUnread, "the history of a vault read for its entries only is never read or changed")
        if let stored { return stored }
        guard let section else { return nil }
        return try StoredHistory(plaintext: section.plaintext, range: section.range)
    }

    /// The versions kept for `key`, newest first.
    func versions(forKey key: [UInt8]) throws(VaultError) -> [EntryVersion] {
        if let changed = changes[key] { return changed }
        guard let stored = try indexed() else { return [] }
        let (index, found) = stored.position(of: key)
        return found ? stored.versions(at: index) : []
    }

    /// Every name that has history, sorted byte-wise.
    func names() throws(VaultError) -> [[UInt8]] {
        var names = Set(changes.filter { !$0.value.isEmpty }.keys)
        if let stored = try indexed() {
            for index in 0..<stored.count {
                let name = stored.name(at: index)
                if changes[name] == nil { names.insert(name) }
            }
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    mutating func setVersions(_ versions: [EntryVersion], forKey key: [UInt8]) throws(VaultError) {
        try index()
        changes[key] = policy.trimmed(versions)
    }

    /// Whether nothing changed since decryption (the section can be copied as it is).
    var isUntouched: Bool { changes.isEmpty }

    /// One stretch of the history section in name order: stored records, or one changed record.
    enum Segment {
        case stored(StoredHistory, Range<Int>)
        case changed(name: [UInt8], versions: [EntryVersion])
    }

    /// Calls `body` for the records in name order (the section must be indexed when anything changed).
    func forEachSegment(_ body: (Segment) -> Void) {
        var next = 0
        for (name, versions) in changes.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            if let stored {
                let (position, found) = stored.position(of: name)
                if position > next { body(.stored(stored, next..<position)) }
                next = found ? position + 1 : position
            }
            if !versions.isEmpty { body(.changed(name: name, versions: versions)) }
        }
        if let stored, next < stored.count { body(.stored(stored, next..<stored.count)) }
    }
}

extension HistoryState: Equatable {
    /// Equal when they keep the same versions under the same policy. Two copies of one decrypted
    /// history compare only their changes (a record changed on one side only counts as a
    /// difference, without reading the section: an edit then seals); others compare every record.
    static func == (lhs: HistoryState, rhs: HistoryState) -> Bool {
        guard lhs.policy == rhs.policy else { return false }
        // A history read for its entries only is one nobody can change: equal only to its own copies.
        if lhs.isUnread || rhs.isUnread { return lhs.isUnread == rhs.isUnread && lhs.changes == rhs.changes }
        if let left = lhs.section, let right = rhs.section, left.plaintext === right.plaintext && left.range == right.range {
            return lhs.changes == rhs.changes
        }
        guard let left = try? lhs.materialized(), let right = try? rhs.materialized() else { return false }
        return left == right
    }

    /// Every record, decoded (for comparisons of histories that do not share a section).
    func materialized() throws(VaultError) -> [[UInt8]: [EntryVersion]] {
        var records: [[UInt8]: [EntryVersion]] = [:]
        if let stored = try indexed() {
            for index in 0..<stored.count { records[stored.name(at: index)] = stored.versions(at: index) }
        }
        for (key, versions) in changes { records[key] = versions.isEmpty ? nil : versions }
        return records
    }
}

// MARK: - Vault: reading and changing history

extension Vault {
    /// Whether this vault keeps the earlier versions of its entries (format 1.2).
    public var keepsHistory: Bool { historyState != nil }

    /// How much history this vault keeps; nil when it keeps none.
    public var historyPolicy: HistoryPolicy? { historyState?.policy }

    /// Turns history on with `policy`, or changes the policy of a vault that keeps history
    /// (every entry's history is trimmed to it at once, and the trash to its limit).
    public mutating func enableHistory(_ policy: HistoryPolicy) throws(VaultError) {
        try policy.validate()
        guard var state = historyState else {
            historyState = HistoryState(policy: policy)
            return
        }
        guard state.policy != policy else { return }
        state.policy = policy
        for key in try state.names() {
            let versions = try state.versions(forKey: key)
            let trimmed = policy.trimmed(versions)
            if trimmed != versions { try state.setVersions(trimmed, forKey: key) }
        }
        historyState = state
        try trimTrash()
    }

    /// Turns history off: every earlier version and the trash are dropped, and the vault is
    /// written in the format older releases read (no history flag, content version 1).
    public mutating func disableHistory() {
        historyState = nil
    }

    /// The earlier versions of `name`, newest first (revision 1 is the value before the current
    /// one); empty when it has none. Works for a removed entry in the trash too.
    public func history(of name: String) throws(VaultError) -> [EntryVersion] {
        guard let historyState else { throw .historyOff }
        return try historyState.versions(forKey: Array(name.utf8))
    }

    /// Revision `revision` of `name` (1 = the value before the current one).
    public func version(of name: String, revision: Int) throws(VaultError) -> EntryVersion {
        let versions = try history(of: name)
        guard revision >= 1, revision <= versions.count else {
            if versions.isEmpty && !contains(name) { throw .entryNotFound(name) }
            throw .revisionNotFound(entry: name, revision: revision, available: versions.count)
        }
        return versions[revision - 1]
    }

    /// Makes revision `revision` of `name` its current value and fields again (the current one
    /// goes into its history, so a restore can itself be undone). Creates the entry when it is
    /// in the trash.
    public mutating func restore(_ name: String, revision: Int, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let old = try version(of: name, revision: revision).entry
        guard contains(name) else {
            // From the trash: the version comes back as the entry and leaves the history, whose
            // older versions stay (nothing current was replaced, so nothing is recorded).
            var versions = try history(of: name)
            versions.remove(at: revision - 1)
            // `put` ends the removed line (its versions dropped, and noted as dropped); they are put
            // back at once, so nothing was dropped: the note is taken back too.
            let ended = historyState?.endedLines[Array(name.utf8)]
            try put(Entry(value: old.value, fields: old.fields, created: old.created, modified: now), as: name, now: now)
            try historyState?.setVersions(versions, forKey: Array(name.utf8))
            historyState?.endedLines[Array(name.utf8)] = ended
            return
        }
        var restored = entry(name)!
        guard restored.value != old.value || restored.fields != old.fields else { return }
        restored.value = old.value
        restored.fields = old.fields
        restored.modified = now
        try put(restored, as: name, now: now)
    }

    /// Drops the earlier versions of `name`, or of every entry and the trash when `name` is nil.
    /// Returns how many versions went.
    @discardableResult
    public mutating func pruneHistory(of name: String? = nil) throws(VaultError) -> Int {
        guard var state = historyState else { throw .historyOff }
        var dropped = 0
        let keys: [[UInt8]]
        if let name { keys = [Array(name.utf8)] } else { keys = try state.names() }
        for key in keys {
            let versions = try state.versions(forKey: key)
            guard !versions.isEmpty else { continue }
            dropped += versions.count
            try state.setVersions([], forKey: key)
        }
        historyState = state
        return dropped
    }

    // MARK: The trash

    /// One removed entry: its name, when it was removed, and the versions kept (newest first).
    public struct TrashedEntry: Equatable, Sendable {
        public var name: String
        public var removed: Int64
        public var versions: [EntryVersion]
    }

    /// The removed entries whose history is kept, most recently removed first (up to the trash
    /// limit: those beyond it are dropped at the next seal).
    public func trash() throws(VaultError) -> [TrashedEntry] {
        guard let historyState else { throw .historyOff }
        return Array(try allTrash().prefix(historyState.policy.trashLimit))
    }

    /// Every removed entry with history, the limit not applied, most recently removed first.
    private func allTrash() throws(VaultError) -> [TrashedEntry] {
        guard let historyState else { throw .historyOff }
        var trashed: [TrashedEntry] = []
        for key in try historyState.names() where !contains(key: key) {
            let versions = try historyState.versions(forKey: key)
            trashed.append(TrashedEntry(name: String(decoding: key, as: UTF8.self), removed: versions[0].replaced, versions: versions))
        }
        return trashed.sorted { $0.removed > $1.removed }
    }

    /// Empties the trash; returns how many removed entries went.
    @discardableResult
    public mutating func emptyTrash() throws(VaultError) -> Int {
        let trashed = try allTrash()
        for item in trashed { try historyState?.setVersions([], forKey: Array(item.name.utf8)) }
        return trashed.count
    }

    // MARK: What edits record

    /// Keeps `old`, the entry under `key` that an edit replaces or removes, as its newest earlier version.
    mutating func recordHistory(of old: Entry, key: [UInt8], now: Int64) throws(VaultError) {
        guard var state = historyState else { return }
        historyState = nil  // no second copy of the state while it changes
        defer { historyState = state }
        try state.setVersions([EntryVersion(entry: old, replaced: now)] + state.versions(forKey: key), forKey: key)
    }

    /// Takes the history of `key` away (for a move: `attachHistory` puts it under the new name).
    mutating func detachHistory(key: [UInt8]) throws(VaultError) -> [EntryVersion] {
        guard var state = historyState else { return [] }
        let versions = try state.versions(forKey: key)
        if !versions.isEmpty { try state.setVersions([], forKey: key) }
        historyState = state
        return versions
    }

    /// Adds `versions` to the history of `key`, newest first by the time they were replaced.
    mutating func attachHistory(_ versions: [EntryVersion], key: [UInt8]) throws(VaultError) {
        guard var state = historyState, !versions.isEmpty else { return }
        let merged = (versions + (try state.versions(forKey: key))).sorted { $0.replaced > $1.replaced }
        try state.setVersions(merged, forKey: key)
        historyState = state
    }

    /// Drops the oldest removed entries beyond the policy's trash limit.
    mutating func trimTrash() throws(VaultError) {
        guard let limit = historyState?.policy.trashLimit else { return }
        let trashed = try allTrash()
        historyState?.trashTrimmed = true
        guard trashed.count > limit else { return }
        for item in trashed[limit...] { try historyState?.setVersions([], forKey: Array(item.name.utf8)) }
    }

    /// Applies the trash limit if an entry went into the trash since it was last applied (the seal calls it).
    package mutating func trimTrashIfNeeded() throws(VaultError) {
        if historyState?.trashTrimmed == false { try trimTrash() }
    }

    /// Notes that an entry went into the trash: the limit is applied before the next seal.
    mutating func trashNeedsTrimming() {
        historyState?.trashTrimmed = false
    }
}

// MARK: - Reading an earlier version

extension Vault {
    /// Calls `body` with the bytes of `part` of revision `revision` of `name` (1 = the value
    /// before the current one); the decoded copy is wiped afterwards.
    ///
    /// Throws `historyOff`, `entryNotFound`, `revisionNotFound`, or `fieldNotFound` when that
    /// version had no such field.
    public func withValue<R>(of name: String, part: EntryPart, revision: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        var entry = try version(of: name, revision: revision).entry
        defer {
            wipe(&entry.value)
            for key in entry.fields.keys { wipe(&entry.fields[key]!) }
        }
        guard let bytes = entry[part] else {
            throw VaultError.fieldNotFound(entry: name, field: part.fieldName ?? "", available: entry.fields.keys.sorted())
        }
        return try bytes.withUnsafeBytes(body)
    }
}

// MARK: - Vault: histories from an import

extension Vault {
    /// Every name with earlier versions (removed entries in the trash included), sorted byte-wise.
    package func historyNames() throws(VaultError) -> [[UInt8]] {
        guard let historyState else { throw .historyOff }
        return try historyState.names()
    }

    /// Adds imported earlier versions of `name` to its history (equal versions once, newest first),
    /// within the vault's policy. Throws `historyOff` when the vault keeps no history.
    public mutating func importHistory(_ versions: [EntryVersion], for name: String) throws(VaultError) {
        guard historyState != nil else { throw .historyOff }
        let key = try EntryName.validate(name)
        try historyState!.setVersions(merged(versions, into: history(of: name)), forKey: key)
        if !contains(key: key) { trashNeedsTrimming() }
    }

    /// How many versions `importHistory(versions, for: name)` would not keep, of `name`'s own and
    /// `versions` together (equal ones once): the oldest past the policy's count, and from the first
    /// one past its byte budget on. Throws `historyOff` when the vault keeps no history.
    public func historyImportLoss(_ versions: [EntryVersion], for name: String) throws(VaultError) -> Int {
        guard let policy = historyState?.policy else { throw .historyOff }
        let all = merged(versions, into: try history(of: name))
        return all.count - policy.trimmed(all).count
    }

    /// `existing` and those of `versions` not among them, newest first.
    private func merged(_ versions: [EntryVersion], into existing: [EntryVersion]) -> [EntryVersion] {
        var merged = existing
        for version in versions where !merged.contains(version) { merged.append(version) }
        return merged.sorted { $0.replaced > $1.replaced }
    }
}
