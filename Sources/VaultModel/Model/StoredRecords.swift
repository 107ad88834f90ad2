import SecureMemory

// MARK: - The records of a decrypted vault, where they lie

/// The entries of a vault as decrypted: one buffer, validated once by `EntryCodec.decode`,
/// indexed by where each record starts, and decoded only when an entry is asked for.
///
/// Records are in name order (the decoder checked it), so a name is found by binary search,
/// and an untouched record is re-sealed by copying its bytes.
package final class StoredRecords: Sendable {
    private let plaintext: PlaintextBuffer
    /// Where each record starts in the plaintext, then where the last one ends: 4 bytes an entry,
    /// not 8 (a plaintext is at most `VaultLimits.maxContentLength` and some history, far below
    /// 4 GiB; 0.4 MB less at 100,000 entries, for every command that decrypts a vault and every
    /// import, issue 44's memory rule).
    private let starts: [Offset]

    /// An offset into the plaintext.
    package typealias Offset = UInt32

    /// Wraps validated records; `starts` holds one offset per record plus the end of the last.
    package init(plaintext: PlaintextBuffer, starts: [Offset]) {
        precondition(!starts.isEmpty && Int(starts.last!) <= plaintext.count, "record offsets outside the plaintext")
        self.plaintext = plaintext
        self.starts = starts
    }

    /// The number of records.
    package var count: Int { starts.count - 1 }

    private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(plaintext.bytes) }

    // MARK: Names

    /// The name of record `index`. Valid while this object lives.
    package func name(at index: Int) -> UnsafeRawBufferPointer {
        var reader = reader(at: index)
        do { return try RecordLayout.readName(&reader, entry: index) } catch { Self.recordEndedEarly(error) }
    }

    /// Whether a name of the records `range` holds a byte of 0x80 or more (a non-ASCII name):
    /// the twin check of a new name (EntryName+Normalization.swift) needs to look further only
    /// then. One pass over the name bytes, each read where it lies after its length prefix: the
    /// decoder checked every record, so no bound is checked again.
    func hasNonASCIIName(in range: Range<Int>) -> Bool {
        let bytes = self.bytes
        let prefix = MemoryLayout<RecordLayout.NameLength>.size
        var words: UInt64 = 0, tail: UInt8 = 0
        starts.withUnsafeBufferPointer { starts in
            for index in range {
                let start = Int(starts[index])
                let length = Int(RecordLayout.NameLength(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: RecordLayout.NameLength.self)))
                // Offsets inside the validated plaintext: wrapping arithmetic, no overflow checks.
                let name = start &+ prefix, end = name &+ length
                if length >= 8 {
                    // Whole words, the last one overlapping the one before it.
                    var offset = name
                    while offset &+ 8 < end {
                        words |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                        offset &+= 8
                    }
                    words |= bytes.loadUnaligned(fromByteOffset: end &- 8, as: UInt64.self)
                } else {
                    for offset in name..<end { tail |= bytes[offset] }
                }
            }
        }
        return words & 0x8080_8080_8080_8080 != 0 || tail >= 0x80
    }

    /// Whether every name comes after the one before it in byte order (so none repeats): true for
    /// the records of a vault, checked for those an import wrote.
    package var namesIncrease: Bool {
        var previous: UnsafeRawBufferPointer?, increase = true
        forEachName { _, name in
            if let previous, compareBytes(previous, name) >= 0 { increase = false }
            previous = name
        }
        return increase
    }

    /// Calls `body` with each record's index and name, in order: each name read where it lies after
    /// its length prefix (the records were validated or written whole, so only the slice is checked).
    package func forEachName(_ body: (Int, UnsafeRawBufferPointer) -> Void) {
        let bytes = self.bytes
        let prefix = MemoryLayout<RecordLayout.NameLength>.size
        starts.withUnsafeBufferPointer { starts in
            for index in 0..<starts.count - 1 {
                let start = Int(starts[index])
                let length = Int(RecordLayout.NameLength(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: RecordLayout.NameLength.self)))
                body(index, UnsafeRawBufferPointer(rebasing: bytes[start + prefix..<start + prefix + length]))
            }
        }
    }

    /// The encoded records `range`, which lie back to back. Valid while this object lives.
    package func records(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[Int(starts[range.lowerBound])..<Int(starts[range.upperBound])])
    }

    /// The index of the record called `key`, by binary search.
    func index(of key: [UInt8]) -> Int? {
        let (position, found) = position(of: key)
        return found ? position : nil
    }

    /// Where `key` is or would be inserted in name order, and whether a record has that name.
    func position(of key: [UInt8]) -> (index: Int, found: Bool) {
        key.withUnsafeBytes { position(of: $0, in: 0..<count) }
    }

    /// Where `name` is or would be inserted among the records `range` in name order, and whether
    /// one of them has that name (a bulk put places each imported name so).
    func position(of name: UnsafeRawBufferPointer, in range: Range<Int>) -> (index: Int, found: Bool) {
        var low = range.lowerBound, high = range.upperBound
        while low < high {
            let middle = (low + high) / 2
            let order = compareBytes(self.name(at: middle), name)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    /// Appends where each record of `range` starts once the run `records(range)` is copied to
    /// offset `destination` of another buffer.
    func appendStarts(of range: Range<Int>, copiedTo destination: Int, into other: inout [Offset]) {
        let shift = destination - Int(starts[range.lowerBound])
        for index in range { other.append(Offset(Int(starts[index]) + shift)) }
    }

    // MARK: Entries

    /// Decodes record `index` into an entry (copies its value and fields).
    package func entry(at index: Int) -> Entry {
        var decoder = EntryDecoder()
        read(index, into: &decoder)
        return decoder.entry
    }

    /// Record `index` without its value and field values: name, field names, times (nothing is copied
    /// but the names).
    func summary(at index: Int) -> EntrySummary {
        var reader = SummaryReader()
        read(index, into: &reader)
        return reader.summary
    }

    /// The value of record `index`, or of its field `field`, where it lies; nil when there is no such field.
    /// Valid while this object lives.
    func value(at index: Int, field: String?) -> UnsafeRawBufferPointer? {
        var finder = ValueFinder(field: field.map { Array($0.utf8) })
        read(index, into: &finder)
        return finder.found
    }

    // MARK: Name order

    /// These records in name order in a new buffer, and where each went (`positions[i]` is the new
    /// index of record `i`); nil when their names increase already, when a name repeats (the
    /// import's check names it, in file order), or when the system refuses the memory.
    ///
    /// The bulk put of records out of name order copied them into order at the vault's write, beside
    /// the import's own (a KeePass database puts a group's entries before its subgroups': 9 MB
    /// held twice at 100,000 entries). With `releasing`, for a caller that holds the only reference
    /// and reads these records no more, each 64 KiB block of this buffer is wiped and given back to
    /// the system once every record on it is copied: records that come in a few runs of name order
    /// are never held twice. They read as zeros afterwards.
    package func sortedByName(releasing: Bool) -> (records: StoredRecords, positions: [Int32])? {
        guard count > 1, count <= Int(Int32.max), !namesIncrease else { return nil }
        var order = (0..<Int32(count)).map { $0 }
        order.sort { compareBytes(name(at: Int($0)), name(at: Int($1))) < 0 }
        for position in 1..<order.count where compareBytes(name(at: Int(order[position - 1])), name(at: Int(order[position]))) == 0 {
            return nil
        }
        let first = Int(starts[0]), length = Int(starts[count]) - first
        guard let sorted = try? PlaintextBuffer(uninitializedCount: length) else { return nil }
        // Bytes of records not yet copied, by block of this buffer.
        let block = 64 << 10
        var left = releasing ? (0..<(length + block - 1) / block).map { min(block, length - $0 * block) } : []
        var newStarts: [Offset] = []
        newStarts.reserveCapacity(count + 1)
        var positions = [Int32](repeating: 0, count: count)
        var offset = 0
        for (position, index) in order.enumerated() {
            let record = records(Int(index)..<Int(index) + 1)
            newStarts.append(Offset(offset))
            positions[Int(index)] = Int32(position)
            if let source = record.baseAddress, !record.isEmpty {
                (sorted.bytes.baseAddress! + offset).copyMemory(from: source, byteCount: record.count)
            }
            offset += record.count
            guard releasing else { continue }
            var start = Int(starts[Int(index)]) - first
            let end = Int(starts[Int(index) + 1]) - first
            while start < end {
                let number = start / block, stop = min(end, (number + 1) * block)
                left[number] -= stop - start
                if left[number] == 0 { plaintext.release(first + number * block..<first + min(length, (number + 1) * block)) }
                start = stop
            }
        }
        if releasing, first == 0, plaintext.written <= length { plaintext.written = 0 }  // wiped block by block
        newStarts.append(Offset(offset))
        return (StoredRecords(plaintext: sorted, starts: newStarts), positions)
    }

    // MARK: Reading validated records

    /// A reader over exactly the bytes of record `index`.
    private func reader(at index: Int) -> RecordReader {
        RecordReader(bytes[Int(starts[index])..<Int(starts[index + 1])], reading: .contents)
    }

    /// Reads record `index` into `visitor`, part by part (Vault+EntryBytes.swift reads every record so).
    func read(_ index: Int, into visitor: inout some RecordVisitor) {
        var reader = reader(at: index)
        do { try RecordLayout.read(&reader, entry: index, into: &visitor) } catch { Self.recordEndedEarly(error) }
    }

    /// The decoder validated every record, so a read that fails is a bug: stop.
    private static func recordEndedEarly(_ error: VaultError) -> Never {
        preconditionFailure("a validated record ends early: \(error.description)")
    }
}

// MARK: - What the readers keep

/// Keeps a whole entry, copying its value and fields.
private struct EntryDecoder: RecordVisitor {
    var entry = Entry(value: [], created: 0, modified: 0)
    private var fieldName = ""

    mutating func visitTimes(created: Int64, modified: Int64) {
        entry.created = created
        entry.modified = modified
    }

    mutating func visitValue(_ value: UnsafeRawBufferPointer) { entry.value = Array(value) }

    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) {
        fieldName = String(decoding: name, as: UTF8.self)
    }

    mutating func visitFieldValue(_ value: UnsafeRawBufferPointer, at index: Int) { entry.fields[fieldName] = Array(value) }
}

/// Keeps the name, the field names and the times; skips the values.
private struct SummaryReader: RecordVisitor {
    var summary = EntrySummary(name: "", fieldNames: [], created: 0, modified: 0)

    mutating func visitName(_ name: UnsafeRawBufferPointer) { summary.name = String(decoding: name, as: UTF8.self) }

    mutating func visitTimes(created: Int64, modified: Int64) {
        summary.created = created
        summary.modified = modified
    }

    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) {
        summary.fieldNames.append(String(decoding: name, as: UTF8.self))
    }
}

/// Keeps where the value, or the value of one field, lies.
private struct ValueFinder: RecordVisitor {
    /// The wanted field's name bytes; nil for the entry's value.
    let field: [UInt8]?
    private(set) var found: UnsafeRawBufferPointer?
    private var isWanted = false

    init(field: [UInt8]?) { self.field = field }

    mutating func visitValue(_ value: UnsafeRawBufferPointer) {
        if field == nil { found = value }
    }

    mutating func visitFieldName(_ name: UnsafeRawBufferPointer, at index: Int) {
        isWanted = field?.withUnsafeBytes { compareBytes(name, $0) } == 0
    }

    mutating func visitFieldValue(_ value: UnsafeRawBufferPointer, at index: Int) {
        if isWanted { found = value }
    }
}
