// MARK: - Vault

/// The decrypted contents of a vault: entries keyed by name.
///
/// Names are stored and listed as bytes, in byte order, the order of the encoding. New names
/// are stored in Unicode NFC, and a lookup tries the exact bytes, then the NFC form; a vault
/// written before that may hold two spellings of "é" as two names, and both stay reachable
/// (EntryName+Normalization.swift).
///
/// A decrypted vault keeps its records where they lie in the plaintext and
/// decodes only the entries a command touches; edits are kept beside them
/// and merged in name order when the vault is encoded or listed.
public struct Vault: Sendable {
    /// The records as decrypted, shared by copies of this value; nil for a vault built in memory.
    private var stored: StoredRecords?
    /// Entries changed since decryption, by name bytes. `.removed` is kept only for stored names.
    /// Changed only through `record(_:forKey:)`, which keeps `nonASCIIPuts` with it.
    private var changes: [NameKey: Change] = [:]
    /// The keys put in `changes` that hold a byte of 0x80 or more: the only edited names the
    /// twin check reads, so that a batch or an import of many names stays linear.
    private var nonASCIIPuts: Set<[UInt8]> = []
    /// The indices of the stored names that hold a byte of 0x80 or more (none in most vaults),
    /// found in one pass at decryption: the only stored names the twin check reads.
    let storedNonASCIINames: [Int]
    /// The number of entries.
    public private(set) var count: Int
    /// The earlier versions of entries (Model/Vault+History.swift); nil when the vault keeps none.
    var historyState: HistoryState?
    /// New records the next seal merges from elsewhere (an import's runs, Model/IncomingRecords.swift); counted in `count`.
    private(set) var incoming: IncomingPut?

    private enum Change: Equatable, Sendable {
        case put(Entry)
        case removed
    }

    /// An empty vault; with `history`, one that keeps earlier versions of its entries (format 1.2).
    public init(history: HistoryPolicy? = nil) {
        stored = nil
        count = 0
        storedNonASCIINames = []
        historyState = history.map { HistoryState(policy: $0) }
    }

    init(stored: StoredRecords, history: HistoryState? = nil) {
        self.stored = stored
        count = stored.count
        storedNonASCIINames = Self.nonASCIINameIndices(of: stored)
        historyState = history
    }

    // MARK: Reading

    /// Every name, sorted byte-wise.
    public var names: [String] {
        var names: [String] = []
        names.reserveCapacity(count)
        forEachRecord { names.append($0.name) }
        return names
    }

    /// The names that start with `prefix` (byte-wise), sorted.
    public func names(withPrefix prefix: String) -> [String] {
        let prefix = Array(prefix.utf8)
        var names: [String] = []
        forEachRecord { record in
            if record.withName({ $0.starts(with: prefix) }) { names.append(record.name) }
        }
        return names
    }

    /// The names at or under `prefix` taken as whole path segments, sorted: `prod` means `prod`
    /// itself and the names under `prod/`, never `production/…` or `prod (2)`; a prefix that ends
    /// with `/` means the names under it, as `names(withPrefix:)`; an empty prefix means every name.
    public func names(atOrUnder prefix: String) -> [String] {
        let matches = Self.pathMatcher(atOrUnder: prefix)
        var names: [String] = []
        forEachRecord { record in
            if record.withName(matches) { names.append(record.name) }
        }
        return names
    }

    /// Whether an entry called `name` exists.
    public func contains(_ name: String) -> Bool { contains(key: Array(name.utf8)) }

    /// The entry called `name`, or `nil`.
    public func entry(_ name: String) -> Entry? { entry(forKey: Array(name.utf8)) }

    /// Every entry with its name, sorted by name.
    public var sortedEntries: [(name: String, entry: Entry)] {
        var entries: [(name: String, entry: Entry)] = []
        entries.reserveCapacity(count)
        forEachRecord { entries.append(($0.name, $0.entry)) }
        return entries
    }

    /// Calls `found` with where the bytes of `part` of `name` lie, without copying them, or
    /// `missing` with `entryNotFound` naming the entry (`NAME#FIELD` when only the field is
    /// missing). Do not let the pointer escape.
    ///
    /// The one lookup behind `withValue(of:part:_:)`, `value(of:part:)` and templates: one binary
    /// search, and the stored bytes are handed over where they lie in the decrypted buffer. (Two
    /// closures rather than one taking a `Result`: a generic `Result` costs a run-time metadata
    /// instantiation, a few thousand instructions on every `get`.)
    package func lookUp<R, E: Error>(_ part: EntryPart, of name: String,
                             found: (UnsafeRawBufferPointer) throws(E) -> R,
                             missing: (VaultError) throws(E) -> R) throws(E) -> R {
        let key = Array(name.utf8)
        switch changes[NameKey(key)] {
        case .put(let entry)?:
            guard let value = entry[part] else { return try missing(part.notFound(in: name)) }
            return try value.span.bytes.withUnsafeBytes(found)
        case .removed?:
            return try lookUpNormalized(part, of: name, key: key, found: found, missing: missing)
        case nil:
            guard let stored, let index = stored.index(of: key) else { return try lookUpNormalized(part, of: name, key: key, found: found, missing: missing) }
            guard let value = stored.value(at: index, field: part.fieldName) else { return try missing(part.notFound(in: name)) }
            return try withExtendedLifetime(stored) { () throws(E) in try found(value) }
        }
    }

    /// The second try of `lookUp`, when no entry has the exact bytes of `name`: its NFC form
    /// (EntryName+Normalization.swift), else `missing` naming `name` as given.
    private func lookUpNormalized<R, E: Error>(_ part: EntryPart, of name: String, key: [UInt8],
                                               found: (UnsafeRawBufferPointer) throws(E) -> R,
                                               missing: (VaultError) throws(E) -> R) throws(E) -> R {
        guard let normalized = EntryName.normalizedKey(of: name, ifDifferentFrom: key), contains(key: normalized) else {
            return try missing(.entryNotFound(name))
        }
        return try lookUp(part, of: String(decoding: normalized, as: UTF8.self), found: found, missing: missing)
    }

    // MARK: Editing

    /// Sets the main value of `name`, creating the entry if needed (a new name is stored in NFC).
    ///
    /// Setting the value it already has changes nothing (not even the modified time).
    public mutating func setValue(_ value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try writableKey(for: name)
        try Self.checkValueLength(value.count, what: "the value of '\(name)'")
        if var existing = entry(forKey: key) {
            guard existing.value != value else { return }
            try recordHistory(of: existing, key: key, now: now)
            existing.value = value
            existing.modified = now
            record(.put(existing), forKey: key)
        } else {
            guard count < VaultLimits.maxEntries else {
                throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
            }
            try endRemovedLine(key: key)
            store(Entry(value: value, created: now, modified: now), key: key)
        }
    }

    /// Sets field `field` of `name`, creating the entry (with an empty value) if needed.
    public mutating func setField(_ field: String, value: [UInt8], for name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try writableKey(for: name)
        try EntryName.validateField(field)
        try Self.checkValueLength(value.count, what: "field '\(field)' of '\(name)'")
        let existing = entry(forKey: key)
        var entry = existing ?? Entry(value: [], created: now, modified: now)
        if entry.fields[field] == value && existing != nil { return }
        guard entry.fields[field] != nil || entry.fields.count < VaultLimits.maxFieldsPerEntry else {
            throw .limitExceeded("an entry holds at most \(VaultLimits.maxFieldsPerEntry) fields")
        }
        if existing == nil && count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        if let existing { try recordHistory(of: existing, key: key, now: now) } else { try endRemovedLine(key: key) }
        entry.fields[field] = value
        entry.modified = now
        store(entry, key: key)
    }

    /// Puts a whole entry under `name`, replacing any entry there (used by import and merge); the
    /// entry it replaces goes into the history when the vault keeps one and the two differ.
    public mutating func put(_ entry: Entry, as name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = try Self.validate(entry, as: name)
        if !contains(key: key) && count >= VaultLimits.maxEntries {
            throw .limitExceeded("a vault holds at most \(VaultLimits.maxEntries) entries")
        }
        if historyState != nil, let existing = self.entry(forKey: key), existing.value != entry.value || existing.fields != entry.fields {
            try recordHistory(of: existing, key: key, now: now)
        }
        try endRemovedLine(key: key)
        store(entry, key: key)
    }

    /// Removes the entry called `name` and returns it. A vault that keeps history keeps the
    /// entry in its trash (its last version and its history), up to the trash limit.
    @discardableResult
    public mutating func remove(_ name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> Entry {
        let key = existingKey(for: name) ?? Array(name.utf8)
        guard let removed = entry(forKey: key) else { throw .entryNotFound(name) }
        try recordHistory(of: removed, key: key, now: now)
        delete(key: key)
        trashNeedsTrimming()
        return removed
    }

    /// Removes `name` with its history and returns both, keeping nothing in the trash (a move
    /// hands them to `attachHistory` under the new name).
    mutating func take(_ name: String) throws(VaultError) -> (entry: Entry, history: [EntryVersion]) {
        let key = existingKey(for: name) ?? Array(name.utf8)
        guard let taken = entry(forKey: key) else { throw .entryNotFound(name) }
        let history = try detachHistory(key: key)
        delete(key: key)
        return (taken, history)
    }

    /// Removes field `field` of `name`.
    public mutating func removeField(_ field: String, of name: String, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        let key = existingKey(for: name) ?? Array(name.utf8)
        guard var entry = entry(forKey: key) else { throw .entryNotFound(name) }
        let old = entry
        guard entry.fields.removeValue(forKey: field) != nil else {
            throw .fieldNotFound(entry: name, field: field, available: entry.fields.keys.sorted())
        }
        try recordHistory(of: old, key: key, now: now)
        entry.modified = now
        store(entry, key: key)
    }

    /// Renames `old` to `new` (stored in NFC when new); refuses to replace an existing `new` unless
    /// `overwrite`. The entry's history moves with it; an entry it replaces goes into the history of `new`.
    public mutating func rename(_ old: String, to new: String, overwrite: Bool = false, now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        _ = try EntryName.validate(EntryName.normalized(new))  // a bad new name is reported before a missing old one
        let oldKey = existingKey(for: old) ?? Array(old.utf8)
        guard let entry = entry(forKey: oldKey) else { throw .entryNotFound(old) }
        let newKey = try writableKey(for: new, renaming: oldKey)
        guard oldKey != newKey else { return }
        guard overwrite || !contains(key: newKey) else { throw .entryExists(new) }
        if let replaced = self.entry(forKey: newKey) { try recordHistory(of: replaced, key: newKey, now: now) } else { try endRemovedLine(key: newKey) }
        try attachHistory(try detachHistory(key: oldKey), key: newKey)
        delete(key: oldKey)
        store(entry, key: newKey)
    }

    // MARK: Stored records and changes

    /// The entry whose name is the bytes `key`, with the pending edits applied, or nil.
    package func entry(forKey key: [UInt8]) -> Entry? {
        switch changes[NameKey(key)] {
        case .put(let entry)?: return entry
        case .removed?: return nil
        case nil: return stored.flatMap { stored in stored.index(of: key).map { stored.entry(at: $0) } }
        }
    }

    /// Whether an entry's name is the bytes `key`, with the pending edits applied.
    package func contains(key: [UInt8]) -> Bool {
        switch changes[NameKey(key)] {
        case .put?: return true
        case .removed?: return false
        case nil: return stored?.index(of: key) != nil
        }
    }

    private mutating func store(_ entry: Entry, key: [UInt8]) {
        if !contains(key: key) { count += 1 }
        record(.put(entry), forKey: key)
    }

    private mutating func delete(key: [UInt8]) {
        precondition(contains(key: key), "deleting an absent entry")
        count -= 1
        record(stored?.index(of: key) != nil ? .removed : nil, forKey: key)
    }

    /// Makes `records` the whole contents, with no edits beside them: the end of a bulk put
    /// (Vault+BulkPut.swift), whose records hold every entry, edited or not. The history stays as
    /// it is: a bulk put replaces no entry of a vault that keeps history.
    mutating func replaceContents(with records: StoredRecords) {
        self = Vault(stored: records, history: historyState)
    }

    /// The records as decrypted (nil for a vault built in memory), for the twin check.
    var storedRecords: StoredRecords? { stored }

    /// The edited names (put, not removed) that hold a byte of 0x80 or more.
    var nonASCIIEditedKeys: Set<[UInt8]> { nonASCIIPuts }

    /// Puts `records` (into a vault holding entries, with their `clashes`) when no change is pending, no
    /// replaced entry's history is to be kept and the trash is empty; else false (Model/IncomingRecords.swift).
    package mutating func put(incoming records: any IncomingRecords, clashes: IncomingClashes? = nil) throws(VaultError) -> Bool {
        let replaced = clashes?.count ?? 0
        guard (count == 0) == (clashes == nil), changes.isEmpty, incoming == nil, historyState == nil || replaced == 0,
              try removedNames().isEmpty else { return false }
        incoming = IncomingPut(records: records, replacedLength: clashes?.replacedLength ?? 0)
        count += records.count - replaced
        return true
    }

    /// Whether `bytes` name an entry changed (put or removed) since decryption.
    func changesContain(_ bytes: UnsafeRawBufferPointer) -> Bool { changes[NameKey(Array(bytes))] != nil }

    /// Sets (or clears) the change of `key`, keeping `nonASCIIPuts` in step.
    private mutating func record(_ change: Change?, forKey key: [UInt8]) {
        changes[NameKey(key)] = change
        if case .put? = change, key.withUnsafeBytes(Self.hasNonASCII) {
            nonASCIIPuts.insert(key)
        } else {
            nonASCIIPuts.remove(key)
        }
    }

    /// One entry met by `forEachRecord`: a stored record untouched since decryption, or an edited entry.
    package enum Record {
        case stored(StoredRecords, index: Int)
        case edited(name: [UInt8], entry: Entry)

        /// Calls `body` with the name's UTF-8 bytes.
        package func withName<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
            switch self {
            case .stored(let records, let index): return withExtendedLifetime(records) { body(records.name(at: index)) }
            case .edited(let name, _): return name.withUnsafeBytes(body)
            }
        }

        package var name: String { withName { String(decoding: $0, as: UTF8.self) } }

        package var entry: Entry {
            switch self {
            case .stored(let records, let index): return records.entry(at: index)
            case .edited(_, let entry): return entry
            }
        }
    }

    /// A stretch of the vault in name order: stored records untouched since decryption, which lie
    /// back to back in the plaintext, or one edited entry.
    enum Segment {
        case stored(StoredRecords, Range<Int>)
        case edited(name: [UInt8], entry: Entry)
    }

    /// Calls `body` for the vault in name order, as runs of untouched stored records between the
    /// edited entries. Each edit is placed by binary search, so the cost grows with the number of
    /// edits, not of entries.
    func forEachSegment<E: Error>(_ body: (Segment) throws(E) -> Void) throws(E) {
        // The keys alone, by memcmp on their bytes: the generic `lexicographicallyPrecedes` on arrays
        // took 16 % of an import of 10,000 entries, and sorting (key, change) pairs retained and
        // released each entry at every comparison; every encode (length, then seal) sorts again.
        let keys = changes.keys.sorted { left, right in
            left.bytes.withUnsafeBytes { a in right.bytes.withUnsafeBytes { b in compareBytes(a, b) < 0 } }
        }
        var next = 0
        for key in keys {
            let name = key.bytes, change = changes[key]!
            if let stored {
                let (position, found) = stored.position(of: name)
                if position > next { try body(.stored(stored, next..<position)) }
                next = found ? position + 1 : position  // a stored record of that name was replaced or removed
            }
            if case .put(let entry) = change { try body(.edited(name: name, entry: entry)) }
        }
        if let stored, next < stored.count { try body(.stored(stored, next..<stored.count)) }
    }

    /// Calls `body` for every entry in name order.
    package func forEachRecord<E: Error>(_ body: (Record) throws(E) -> Void) throws(E) {
        try forEachSegment { (segment) throws(E) in
            switch segment {
            case .stored(let records, let range):
                for index in range { try body(.stored(records, index: index)) }
            case .edited(let name, let entry):
                try body(.edited(name: name, entry: entry))
            }
        }
    }
}

// MARK: - Equality

extension Vault: Equatable {
    /// Two vaults are equal when they hold the same names with equal entries.
    ///
    /// Copies of one decrypted vault compare only the entries either has changed.
    public static func == (lhs: Vault, rhs: Vault) -> Bool {
        guard lhs.count == rhs.count, lhs.incoming?.records === rhs.incoming?.records else { return false }
        if lhs.stored === rhs.stored {
            for key in Set(lhs.changes.keys).union(rhs.changes.keys) where lhs.entry(forKey: key.bytes) != rhs.entry(forKey: key.bytes) {
                return false
            }
            return lhs.historyState == rhs.historyState
        }
        guard lhs.historyState == rhs.historyState else { return false }
        if lhs.changes.isEmpty && rhs.changes.isEmpty, let left = lhs.stored, let right = rhs.stored {
            // Records are canonical (EntryCodec): equal bytes are equal names and entries, and
            // unequal bytes unequal ones. A bulk put replaces the records whole (`replaceContents`).
            return withExtendedLifetime((left, right)) { compareBytes(left.records(0..<left.count), right.records(0..<right.count)) == 0 }
        }
        var left: [([UInt8], Entry)] = [], right: [([UInt8], Entry)] = []
        lhs.forEachRecord { record in left.append((record.withName { Array($0) }, record.entry)) }
        rhs.forEachRecord { record in right.append((record.withName { Array($0) }, record.entry)) }
        return left.elementsEqual(right) { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}
