#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The bytes of an imported entry

/// Bytes a reader of an import found: where they lie in its input, resolved from escapes, a
/// string it made (a cleaned name), or a literal (a field name the format fixes).
enum ImportBytes {
    case input(Range<Int>)
    case owned([UInt8])
    case string(String)
    case literal(StaticString)

    /// Calls `body` with the bytes; `input` is the reader's input, which `.input` ranges index.
    @inline(__always)
    func withBytes<R>(in input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch self {
        case .input(let range): return body(UnsafeRawBufferPointer(rebasing: input[range]))
        case .owned(let bytes): return bytes.withUnsafeBytes(body)
        case .string(let text):
            // In place, without a copy of the string (a retain) when its bytes are contiguous, as a native string's are.
            if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
            var copy = text
            return copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        case .literal(let text): return body(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
    }

    /// The number of bytes.
    var count: Int {
        switch self {
        case .input(let range): return range.count
        case .owned(let bytes): return bytes.count
        case .string(let text): return text.utf8.count
        case .literal(let text): return text.utf8CodeUnitCount
        }
    }

    /// The bytes as an array (the plain reference keeps them so).
    func array(in input: UnsafeRawBufferPointer) -> [UInt8] { withBytes(in: input) { Array($0) } }

    /// The bytes as a string (they are UTF-8: the readers checked them).
    func string(in input: UnsafeRawBufferPointer) -> String {
        if case .string(let text) = self { return text }
        return withBytes(in: input) { String(decoding: $0, as: UTF8.self) }
    }
}

/// One field of an imported entry.
struct ImportField {
    var name: ImportBytes
    var value: ImportBytes
}

// MARK: - Where a reader puts each entry

/// Where the readers of vaultfile JSON, KeePassXC CSV and Bitwarden JSON put each entry they read:
/// an `Entry` per entry (`ImportedEntryList`, the plain reference) or a vault record written in
/// place (`ImportRecordWriter`). One reader body serves both, so what is read is the same.
protocol ImportedEntrySink {
    /// Adds an entry whose field names are distinct; false when the sink declines it (the record
    /// writer declines what `Vault.isValidPut` refuses and non-ASCII names, which the caller then
    /// reads through the plain path, whose checks name the problem).
    mutating func add(name: ImportBytes, created: Int64, modified: Int64, value: ImportBytes, fields: inout [ImportField],
                      in input: UnsafeRawBufferPointer) -> Bool
}

/// The plain reference: an `Entry` per entry, a dictionary of its fields.
struct ImportedEntryList: ImportedEntrySink {
    private(set) var entries: [(String, Entry)] = []

    mutating func add(name: ImportBytes, created: Int64, modified: Int64, value: ImportBytes, fields: inout [ImportField],
                      in input: UnsafeRawBufferPointer) -> Bool {
        var map: [String: [UInt8]] = [:]
        for field in fields { map[field.name.string(in: input)] = field.value.array(in: input) }
        entries.append((name.string(in: input), Entry(value: value.array(in: input), fields: map, created: created, modified: modified)))
        return true
    }
}

// MARK: - Entries written as records

/// Writes each imported entry straight into a vault plaintext buffer as its record
/// (`RecordLayout`, fields sorted by their name bytes), in file order: no `Entry`, value array or
/// fields dictionary per entry. `Vault.put(contentsOf:)` then copies the records (or, into an empty
/// vault and in name order already, keeps the buffer).
///
/// The buffer is a `PlaintextBuffer` (wiped when it goes); when it must grow, the records move to
/// one twice as large and the old one is wiped. It takes only entries that `Vault.isValidPut`
/// passes and whose names are ASCII (their own NFC form); anything else is declined.
/// `ImportRecordsTests` ties every reader's records to its entries through `ImportedEntryList`.
///
/// Memory (issue 44's rule: peak within 2× the input): the buffer's room is a guess from the
/// input's size, mapped but not touched until written, so it is kept out of transparent huge
/// pages: a huge page is faulted in whole, and the one the records end in held up to 2 MiB of
/// room never written (about 2 MB of the peak of a 100,000-entry CSV import). Each record's start is
/// 4 bytes (`StoredRecords.Offset`), not 8.
///
/// Past one buffer (`ImportRuns.current`, set by `import` around its read: 512 KiB), the records are
/// not all held until the seal: each full buffer is sorted by name and written as an encrypted run
/// (`RecordRuns`), and `records()` hands over the runs, which the seal merges. An import that fits
/// one buffer never writes a run.
struct ImportRecordWriter: ImportedEntrySink {
    private var plaintext: PlaintextBuffer
    private var length = 0
    private var starts: [StoredRecords.Offset] = [0]
    /// The runs written so far (nil until a buffer was full), where they go, and how many records they hold.
    private var runs: RecordRuns?
    /// Nil once the disk had no room for a run (`takeBackRuns`): the records then stay in memory.
    private var spill: ImportRuns?
    private var spilled = 0
    /// The names of the spilled records that `import` warns about, in input order.
    private var dangerous: [String] = []
    /// Why a run could not be written (the writer then declines every entry; the caller reads the
    /// input the plain way, in memory).
    private(set) var failure: VaultError?

    /// A writer whose first buffer holds `capacity` bytes (the input's size is a good guess: a
    /// record is shorter than the text it comes from), or `ImportRuns.current`'s buffer when runs
    /// are written; nil when the system refuses the memory.
    init?(capacity: Int) {
        spill = ImportRuns.current
        let room = spill.map { min(capacity, $0.bufferLimit) } ?? capacity
        guard let buffer = Self.buffer(max(room, 4096)) else { return nil }
        buffer.written = 0
        plaintext = buffer
        starts.reserveCapacity(room / 64)
    }

    /// A buffer of `count` bytes, mapped in small pages only.
    private static func buffer(_ count: Int) -> PlaintextBuffer? {
        guard let buffer = try? PlaintextBuffer(uninitializedCount: count) else { return nil }
        _ = madvise(buffer.bytes.baseAddress!, buffer.count, MADV_NOHUGEPAGE)  // advice only, as the mapping's own
        return buffer
    }

    /// The number of records written.
    var count: Int { spilled + starts.count - 1 }

    mutating func add(name: ImportBytes, created: Int64, modified: Int64, value: ImportBytes, fields: inout [ImportField],
                      in input: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= VaultLimits.maxValueLength, fields.count <= VaultLimits.maxFieldsPerEntry else { return false }
        // Fields in name order (an insertion sort: an entry has a handful), each name valid and once.
        if fields.count > 1 {
            // Compared where they lie (a copy of a name is a retain of its text).
            fields.withUnsafeMutableBufferPointer { fields in
                for index in 1..<fields.count {
                    var position = index
                    while position > 0 && Self.compare(fields.baseAddress! + position - 1, fields.baseAddress! + position, in: input) > 0 {
                        fields.swapAt(position - 1, position)
                        position -= 1
                    }
                }
            }
        }
        var fieldBytes = 0
        for index in fields.indices {
            // Each read where it lies (a copy of a field is a retain of its texts).
            let valueCount = fields[index].value.count, nameCount = fields[index].name.count
            guard valueCount <= VaultLimits.maxValueLength, fields[index].name.withBytes(in: input, EntryName.isValidField) else { return false }
            if index > 0, fields.withUnsafeBufferPointer({ Self.compare($0.baseAddress! + index - 1, $0.baseAddress! + index, in: input) }) == 0 {
                return false
            }
            fieldBytes += nameCount + valueCount
        }
        let fieldsRead = fields
        return name.withBytes(in: input) { name in
            guard Self.isASCII(name), EntryName.isValid(utf8: name) else { return false }
            let recordLength = RecordLayout.length(nameLength: name.count, valueLength: value.count, fieldCount: fieldsRead.count,
                                                   fieldBytes: fieldBytes)
            // Offsets of 4 bytes: records past 4 GiB (four times what a vault holds) go the plain way, which refuses them.
            guard failure == nil, recordLength <= Int(StoredRecords.Offset.max) - length else { return false }
            if let spill, length > 0, recordLength > spill.bufferLimit - length, spilled + starts.count - 1 < Int(UInt32.max) {
                // The buffer is full: its records go to a run, and this one starts the buffer again.
                do throws(VaultError) { try writeRun(in: spill.directory) } catch {
                    guard error.isOutOfSpace, takeBackRuns() else {
                        failure = error
                        return false
                    }
                }
            }
            if recordLength > plaintext.count - length { guard grow(recordLength) else { return false } }
            // Written where the record goes, the room checked above.
            let start = plaintext.bytes.baseAddress! + length
            var sink = UnsafeByteCursor(start)
            value.withBytes(in: input) { value in
                RecordLayout.write(name: name, created: created, modified: modified, value: value, fieldCount: fieldsRead.count,
                                   intoCursor: &sink) { appendField in
                    for index in fieldsRead.indices {
                        fieldsRead[index].name.withBytes(in: input) { fieldName in fieldsRead[index].value.withBytes(in: input) { appendField(fieldName, $0) } }
                    }
                }
            }
            precondition(sink.position - start == recordLength, "a record of its computed length")
            length += recordLength
            plaintext.written = length
            starts.append(StoredRecords.Offset(length))
            return true
        }
    }

    /// The name of record `index` of the buffer, where it lies; valid until the next `add`.
    private func bufferedName(at index: Int) -> UnsafeRawBufferPointer {
        let start = Int(starts[index])
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        let length = Int(RecordLayout.NameLength(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: RecordLayout.NameLength.self)))
        let name = start + MemoryLayout<RecordLayout.NameLength>.size
        return UnsafeRawBufferPointer(rebasing: bytes[name..<name + length])
    }

    /// The name of the last record written (the buffer holds it: a run is written only before a
    /// record that starts the buffer again); valid until the next `add`.
    var lastName: UnsafeRawBufferPointer { starts.count > 1 ? bufferedName(at: starts.count - 2) : UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Calls `body` with the name of every record written (those in runs in name order, then the
    /// buffer's); false when a run does not read back.
    func forEachName(_ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        do throws(VaultError) { try runs?.forEachItem { _, name, _ in body(name) } } catch { return false }
        for index in 0..<starts.count - 1 { body(bufferedName(at: index)) }
        return true
    }

    /// The records written: indexed in their buffer, or, when runs were written, the buffer's
    /// records written as the last run and the runs handed over.
    consuming func records() throws(VaultError) -> WrittenRecords {
        guard let spill, runs != nil else { return .memory(StoredRecords(plaintext: plaintext, starts: starts)) }
        if let failure { throw failure }
        do throws(VaultError) { try writeRun(in: spill.directory) } catch {
            guard error.isOutOfSpace, takeBackRuns() else { throw error }
            return .memory(StoredRecords(plaintext: plaintext, starts: starts))
        }
        return .runs(runs!, dangerous: dangerous)
    }

    /// After the disk had no room for a run (ENOSPC, EDQUOT): the records of the runs brought back
    /// into the buffer, in input order before its own, their file freed, and no run written again,
    /// so that the import holds its records in memory as it did before runs. False when the runs
    /// do not read back or the records would pass the buffer's 4-byte offsets.
    private mutating func takeBackRuns() -> Bool {
        spill = nil
        dangerous = []
        guard let taken = runs else { return true }
        // Each record's end in input order from the lengths (one pass of the runs), then each copied there (another).
        var ends = [Int](repeating: 0, count: spilled)
        do throws(VaultError) { try taken.forEachItem { record, _, index in ends[index] = record.count } } catch { return false }
        for index in ends.indices.dropFirst() { ends[index] += ends[index - 1] }
        let before = ends.last ?? 0
        guard before + length <= Int(StoredRecords.Offset.max), let buffer = Self.buffer(max(before + length, plaintext.count)) else { return false }
        let base = buffer.bytes.baseAddress!
        do throws(VaultError) {
            try taken.forEachItem { record, _, index in
                if record.count > 0 { (base + ends[index] - record.count).copyMemory(from: record.baseAddress!, byteCount: record.count) }
            }
        } catch {
            return false
        }
        if length > 0 { (base + before).copyMemory(from: plaintext.bytes.baseAddress!, byteCount: length) }
        starts = [0] + ends.map { StoredRecords.Offset($0) } + starts.dropFirst().map { $0 + StoredRecords.Offset(before) }
        length += before
        buffer.written = length
        plaintext = buffer
        runs = nil
        spilled = 0
        return true
    }

    /// Sorts the buffer's records by name (equal names in input order) and writes them as a run;
    /// the buffer is wiped and starts again.
    private mutating func writeRun(in directory: String) throws(VaultError) {
        let buffered = starts.count - 1
        guard buffered > 0 else { return }
        let records = StoredRecords(plaintext: plaintext, starts: starts)
        records.forEachName { index, name in
            guard DangerousEnvironmentNames.isDangerous(entryName: name) else { return }
            dangerous.append(String(decoding: name, as: UTF8.self))
        }
        var order = (0..<Int32(buffered)).map { $0 }
        if !records.namesIncrease {
            // Each name's place found once (not read through its record at every comparison), compared by memcmp.
            let bytes = UnsafeRawPointer(plaintext.bytes.baseAddress!)
            let prefix = MemoryLayout<RecordLayout.NameLength>.size
            let names = (0..<buffered).map { index -> (start: Int, count: Int) in
                let start = Int(starts[index])
                return (start + prefix, Int(RecordLayout.NameLength(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: RecordLayout.NameLength.self))))
            }
            names.withUnsafeBufferPointer { names in
                // By name, then input order: a total order, so any sort gives the same order.
                func precedes(_ left: Int32, _ right: Int32) -> Bool {
                    let a = names[Int(left)], b = names[Int(right)]
                    let common = memcmp(bytes + a.start, bytes + b.start, min(a.count, b.count))
                    if common != 0 { return common < 0 }
                    return a.count != b.count ? a.count < b.count : left < right
                }
                // Names that almost increase (an export whose titles repeat: `T (10)` written after
                // `T (9)`, a few places from its own) are put in place one by one; past a few moves
                // a record, the merge sort.
                guard !Self.insertionSort(&order, by: precedes, moves: 8 * buffered) else { return }
                order.sort(by: precedes)
            }
        }
        if runs == nil {
            runs = try RecordRuns(directory: directory)
            runs!.room = spill?.room ?? .max
        }
        let first = spilled
        try withExtendedLifetime(records) { () throws(VaultError) in
            try runs!.append(buffered, record: { records.records(Int(order[$0])..<Int(order[$0]) + 1) }, inputIndex: { first + Int(order[$0]) })
        }
        spilled += buffered
        // Wiped, its pages kept: the next run fills them again at once (given back, each of its
        // 128 pages was faulted in again at every run).
        wipe(UnsafeMutableRawBufferPointer(rebasing: plaintext.bytes[..<length]))
        plaintext.written = 0
        length = 0
        starts.removeAll(keepingCapacity: true)
        starts.append(0)
    }

    /// Sorts `order` by insertion while it takes at most `moves` moves; false (`order` then
    /// holds the same indices in another order) past them.
    private static func insertionSort(_ order: inout [Int32], by precedes: (Int32, Int32) -> Bool, moves: Int) -> Bool {
        order.withUnsafeMutableBufferPointer { order in
            var left = moves
            for index in order.indices.dropFirst() {
                let item = order[index]
                var place = index
                while place > 0 && precedes(item, order[place - 1]) {
                    order[place] = order[place - 1]
                    place -= 1
                    left -= 1
                }
                order[place] = item
                if left < 0 { return false }
            }
            return true
        }
    }

    /// Moves the records to a buffer with room for `extra` more bytes (at least twice as large);
    /// the old one is wiped as it goes.
    private mutating func grow(_ extra: Int) -> Bool {
        guard length <= Int.max / 4, extra <= Int.max / 4, let larger = Self.buffer(max(plaintext.count * 2, length + extra)) else { return false }
        larger.bytes.baseAddress!.copyMemory(from: plaintext.bytes.baseAddress!, byteCount: length)
        larger.written = length
        plaintext = larger
        return true
    }

    /// The order of the names of the fields at `left` and `right` (`compareBytes`').
    @inline(__always)
    private static func compare(_ left: UnsafePointer<ImportField>, _ right: UnsafePointer<ImportField>, in input: UnsafeRawBufferPointer) -> Int {
        // Two literals (the foreign builder's own field names, most of an entry's): their bytes
        // where they lie, without the closures.
        if case .literal(let a) = left.pointee.name, case .literal(let b) = right.pointee.name {
            let order = memcmp(a.utf8Start, b.utf8Start, min(a.utf8CodeUnitCount, b.utf8CodeUnitCount))
            return order != 0 ? Int(order) : a.utf8CodeUnitCount - b.utf8CodeUnitCount
        }
        return left.pointee.name.withBytes(in: input) { a in right.pointee.name.withBytes(in: input) { b in compareBytes(a, b) } }
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var words: UInt64 = 0, tail: UInt8 = 0, index = 0
        while index + 8 <= bytes.count {
            words |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            tail |= bytes[index]
            index += 1
        }
        return words & 0x8080_8080_8080_8080 == 0 && tail < 0x80
    }
}
