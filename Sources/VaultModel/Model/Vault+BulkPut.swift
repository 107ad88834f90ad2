import SecureMemory

// MARK: - Many entries put at once (import)

extension Vault {
    /// Puts every entry of `entries`, as `put(_:as:now:)` one after another does (`putOneByOne`, the
    /// plain reference): the same contents afterwards, the same error, and on an error the same
    /// partial contents.
    ///
    /// The fast path: the names are sorted once (`NameOrder`), merged with the vault's records in
    /// name order, and every record (the untouched ones copied in runs, the new ones encoded) is
    /// written into one plaintext buffer that becomes the vault's records; a seal then copies them
    /// as it copies decrypted records. No edit goes through the dictionary of pending edits, which
    /// at 100,000 entries grew by rehashing and was sorted twice per seal.
    /// It is taken only when no put could fail or record history: every entry passes the fast
    /// checks (`isValidPut`), no name repeats, the entries fit the limits, and, in a vault that keeps
    /// history, every name is new (a replaced entry's history is recorded put by put). Anything else
    /// goes one by one, which throws where the reference throws.
    /// `VaultModelTests.test_putContentsOf_matchesPutOneByOne` ties the two.
    public mutating func put(contentsOf entries: [(name: String, entry: Entry)], now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        // A new entry under the name of a removed one ends the removed one's line (Vault+HistoryLines.swift).
        let trashed = try removedNames()
        try put(contentsOf: entries, checkedIn: nil, now: now)
        try endRemovedLines(reusing: trashed)
    }

    /// Puts the entries of an import, as `put(contentsOf:now:)` does; the import's checks (every entry
    /// valid, no name twice) and its sorted names are not done again. The body of
    /// `put(contentsOf: ImportedEntries, now:)` (VaultInterchange): `records`, `order` and `entries`
    /// are the import's; `entries` is called only when the records cannot be copied.
    ///
    /// Entries an import wrote as records (`ImportRecordWriter`) are copied as they are; into an
    /// empty vault, in name order already, their buffer becomes the vault's records.
    package mutating func put(importedRecords records: StoredRecords?, order: NameOrder?, entries: () -> [(name: String, entry: Entry)], now: Int64) throws(VaultError) {
        // A new entry under the name of a removed one ends the removed one's line (Vault+HistoryLines.swift).
        let trashed = try removedNames()
        try putRecords(records, order: order, entries: entries, now: now)
        try endRemovedLines(reusing: trashed)
    }

    /// The body of `put(importedRecords:order:entries:now:)`.
    private mutating func putRecords(_ records: StoredRecords?, order: NameOrder?, entries: () -> [(name: String, entry: Entry)], now: Int64) throws(VaultError) {
        guard let records, records.count > 0 else {
            try put(contentsOf: entries(), checkedIn: order, now: now)
            return
        }
        // No `order`: `ImportedEntries(records:renamings:)` found the names increasing, so in order.
        let inOrder = order?.isInInputOrder ?? true
        // What the merge would write, without writing it: the vault holds nothing to merge with.
        if count == 0 && inOrder && records.records(0..<records.count).count <= VaultLimits.maxContentLength - EntryCodec.prefixLength {
            replaceContents(with: records)
            return
        }
        let order = order ?? NameOrder(records)
        guard let merged = BulkPut(.records(records), checkedIn: order, into: self, replacing: historyState == nil) else {
            try putOneByOne(entries(), now: now)
            return
        }
        replaceContents(with: try merged.records())
    }

    /// `checked`: the entries' names in order, from a check that passed every entry (`ImportedEntries`).
    private mutating func put(contentsOf entries: [(name: String, entry: Entry)], checkedIn checked: NameOrder?, now: Int64) throws(VaultError) {
        guard !entries.isEmpty else { return }
        guard let merged = BulkPut(.entries(entries), checkedIn: checked, into: self, replacing: historyState == nil) else {
            try putOneByOne(entries, now: now)
            return
        }
        replaceContents(with: try merged.records())
    }

    /// `put(_:as:now:)` for each entry in turn: the plain reference of `put(contentsOf:now:)`.
    public mutating func putOneByOne(_ entries: [(name: String, entry: Entry)], now: Int64 = currentTimeMilliseconds()) throws(VaultError) {
        for (name, entry) in entries { try put(entry, as: name, now: now) }
    }
}

// MARK: - The merge

/// The vault's records and the new entries in one name order, planned before anything is written.
private struct BulkPut {
    /// One stretch of the result, in name order.
    enum Piece {
        /// Records of the vault as decrypted, copied as they are.
        case stored(Range<Int>)
        /// The vault's edited entry `index` in `edited`.
        case edited(Int)
        /// The new entry `index` in `entries`.
        case new(Int)
    }

    /// The new entries: as entries, or as the records an import wrote (whose check passed).
    enum Incoming {
        case entries([(name: String, entry: Entry)])
        case records(StoredRecords)
    }

    let incoming: Incoming
    let names: NameOrder
    let stored: StoredRecords?
    private(set) var edited: [(name: [UInt8], entry: Entry)] = []
    private(set) var pieces: [Piece] = []
    /// The length of the records, and their number.
    private(set) var length = 0
    private(set) var count = 0

    /// The plan, or nil when the one-by-one path must decide (an entry the fast checks refuse, a
    /// name given twice, too many entries, contents over the limit, or an existing entry replaced
    /// when not `replacing`).
    init?(_ incoming: Incoming, checkedIn checked: NameOrder?, into vault: Vault, replacing: Bool) {
        self.incoming = incoming
        stored = vault.storedRecords
        let newCount: Int
        switch incoming {
        case .entries(let entries): newCount = entries.count
        case .records(let records): newCount = records.count
        }
        if let checked, checked.count == newCount {
            names = checked  // valid and distinct: ImportedEntries checked them
        } else {
            guard case .entries(let entries) = incoming else { return nil }
            names = NameOrder(entries.lazy.map(\.name))
            guard names.firstRepeat == nil else { return nil }
            for index in entries.indices {
                guard names.withName(index, { Vault.isValidPut(entries[index].entry, name: $0) }) else { return nil }
            }
        }
        var next = 0  // the next new entry, in name order
        var replaced = 0
        let sorted = names.sorted
        vault.forEachSegment { segment in
            switch segment {
            case .stored(let records, let range):
                var first = range.lowerBound
                while next < sorted.count {
                    let (position, found) = names.withName(sorted[next]) { records.position(of: $0, in: first..<range.upperBound) }
                    guard position < range.upperBound else { break }
                    if position > first { add(.stored(first..<position)) }
                    add(.new(sorted[next]))
                    if found { replaced += 1 }
                    first = found ? position + 1 : position
                    next += 1
                }
                if first < range.upperBound { add(.stored(first..<range.upperBound)) }
            case .edited(let name, let entry):
                var replacedHere = false
                while next < sorted.count {
                    let order = names.withName(sorted[next]) { new in name.withUnsafeBytes { compareBytes(new, $0) } }
                    guard order <= 0 else { break }
                    add(.new(sorted[next]))
                    next += 1
                    if order == 0 { replacedHere = true; break }
                }
                if replacedHere {
                    replaced += 1
                } else {
                    edited.append((name, entry))
                    add(.edited(edited.count - 1))
                }
            }
        }
        while next < sorted.count {
            add(.new(sorted[next]))
            next += 1
        }
        // The one-by-one path throws the limits where the reference does.
        guard replacing || replaced == 0, vault.count + newCount - replaced <= VaultLimits.maxEntries, count == vault.count + newCount - replaced,
              length <= VaultLimits.maxContentLength - EntryCodec.prefixLength else { return nil }
    }

    private mutating func add(_ piece: Piece) {
        pieces.append(piece)
        switch piece {
        case .stored(let range):
            length += stored!.records(range).count
            count += range.count
        case .edited(let index):
            length += RecordLayout.length(nameLength: edited[index].name.count, entry: edited[index].entry)
            count += 1
        case .new(let index):
            switch incoming {
            case .entries(let entries): length += RecordLayout.length(nameLength: entries[index].name.utf8.count, entry: entries[index].entry)
            case .records(let records): length += records.records(index..<index + 1).count
            }
            count += 1
        }
    }

    /// Writes the planned records into one new plaintext buffer, indexed.
    func records() throws(VaultError) -> StoredRecords {
        let plaintext = try PlaintextBuffer.forVault(uninitializedCount: length)
        var sink = BufferSink(plaintext.bytes)
        var starts: [StoredRecords.Offset] = []
        starts.reserveCapacity(count + 1)
        for piece in pieces {
            switch piece {
            case .stored(let range):
                let records = stored!
                records.appendStarts(of: range, copiedTo: sink.offset, into: &starts)
                withExtendedLifetime(records) { sink.append(raw: records.records(range)) }
            case .edited(let index):
                starts.append(StoredRecords.Offset(sink.offset))
                RecordLayout.write(name: edited[index].name, entry: edited[index].entry, into: &sink)
            case .new(let index):
                starts.append(StoredRecords.Offset(sink.offset))
                switch incoming {
                case .entries(let entries):
                    var name = entries[index].name
                    name.withUTF8 { RecordLayout.write(name: UnsafeRawBufferPointer($0), entry: entries[index].entry, into: &sink) }
                case .records(let records):
                    withExtendedLifetime(records) { sink.append(raw: records.records(index..<index + 1)) }
                }
            }
        }
        precondition(sink.offset == length, "the records written have the planned length")
        starts.append(StoredRecords.Offset(sink.offset))
        return StoredRecords(plaintext: plaintext, starts: starts)
    }
}

/// Writes into a buffer of known size, checking every run against its end.
private struct BufferSink: ByteSink {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    mutating func append(raw run: UnsafeRawBufferPointer) {
        precondition(run.count <= buffer.count - offset, "a record past the planned length")
        if let source = run.baseAddress, run.count > 0 {
            (buffer.baseAddress! + offset).copyMemory(from: source, byteCount: run.count)
        }
        offset += run.count
    }
}
