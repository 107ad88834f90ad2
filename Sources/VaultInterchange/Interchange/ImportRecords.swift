#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
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
        case .string(var text): return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
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
struct ImportRecordWriter: ImportedEntrySink {
    private var plaintext: PlaintextBuffer
    private var length = 0
    private var starts: [StoredRecords.Offset] = [0]

    /// A writer whose first buffer holds `capacity` bytes (the input's size is a good guess: a
    /// record is shorter than the text it comes from); nil when the system refuses the memory.
    init?(capacity: Int) {
        guard let buffer = Self.buffer(max(capacity, 4096)) else { return nil }
        buffer.written = 0
        plaintext = buffer
        starts.reserveCapacity(capacity / 64)
    }

    /// A buffer of `count` bytes, mapped in small pages only.
    private static func buffer(_ count: Int) -> PlaintextBuffer? {
        guard let buffer = try? PlaintextBuffer(uninitializedCount: count) else { return nil }
        _ = madvise(buffer.bytes.baseAddress!, buffer.count, MADV_NOHUGEPAGE)  // advice only, as the mapping's own
        return buffer
    }

    /// The number of records written.
    var count: Int { starts.count - 1 }

    mutating func add(name: ImportBytes, created: Int64, modified: Int64, value: ImportBytes, fields: inout [ImportField],
                      in input: UnsafeRawBufferPointer) -> Bool {
        guard value.count <= VaultLimits.maxValueLength, fields.count <= VaultLimits.maxFieldsPerEntry else { return false }
        // Fields in name order (an insertion sort: an entry has a handful), each name valid and once.
        if fields.count > 1 {
            for index in 1..<fields.count {
                var position = index
                while position > 0 && Self.compare(fields[position - 1].name, fields[position].name, in: input) > 0 {
                    fields.swapAt(position - 1, position)
                    position -= 1
                }
            }
        }
        var fieldBytes = 0
        for index in fields.indices {
            let field = fields[index]
            guard field.value.count <= VaultLimits.maxValueLength, field.name.withBytes(in: input, EntryName.isValidField) else { return false }
            if index > 0 && Self.compare(fields[index - 1].name, field.name, in: input) == 0 { return false }
            fieldBytes += field.name.count + field.value.count
        }
        let fieldsRead = fields
        return name.withBytes(in: input) { name in
            guard Self.isASCII(name), EntryName.isValid(utf8: name) else { return false }
            let recordLength = RecordLayout.length(nameLength: name.count, valueLength: value.count, fieldCount: fieldsRead.count,
                                                   fieldBytes: fieldBytes)
            // Offsets of 4 bytes: records past 4 GiB (four times what a vault holds) go the plain way, which refuses them.
            guard recordLength <= Int(StoredRecords.Offset.max) - length else { return false }
            if recordLength > plaintext.count - length { guard grow(recordLength) else { return false } }
            // Written where the record goes, the room checked above.
            let start = plaintext.bytes.baseAddress! + length
            var sink = UnsafeByteCursor(start)
            value.withBytes(in: input) { value in
                RecordLayout.write(name: name, created: created, modified: modified, value: value, fieldCount: fieldsRead.count,
                                   intoCursor: &sink) { appendField in
                    for field in fieldsRead {
                        field.name.withBytes(in: input) { fieldName in field.value.withBytes(in: input) { appendField(fieldName, $0) } }
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

    /// The name of record `index`, where it lies; valid until the next `add`.
    func name(at index: Int) -> UnsafeRawBufferPointer {
        let start = Int(starts[index])
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        let length = Int(RecordLayout.NameLength(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: RecordLayout.NameLength.self)))
        let name = start + MemoryLayout<RecordLayout.NameLength>.size
        return UnsafeRawBufferPointer(rebasing: bytes[name..<name + length])
    }

    /// The records written, indexed.
    consuming func records() -> StoredRecords {
        StoredRecords(plaintext: plaintext, starts: starts)
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

    private static func compare(_ left: ImportBytes, _ right: ImportBytes, in input: UnsafeRawBufferPointer) -> Int {
        left.withBytes(in: input) { a in right.withBytes(in: input) { b in compareBytes(a, b) } }
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

// MARK: - Whether a streamed name came before

/// Whether each name a streaming build hands its record writer is new, without a table of every
/// name while they come in increasing byte order (an export sorted by title, the bench's): each is
/// compared with the last record written only. The first name that does not follow it hashes every
/// name written so far into a `NameHashes`, which then decides (false may then be a collision of
/// two hashes: the caller takes false as "maybe repeated" and reads the items again for a plan of
/// their numbers, which costs time, never a wrong name). A repeat is said at once either way, so a
/// build whose titles repeat is declined at its first repeat, not after every record is written.
///
/// The table was 2 MiB at 100,000 names, 3 MiB while it doubled (issue 44's memory rule); sorted
/// exports no longer pay it, unsorted ones still do.
struct StreamedNameCheck {
    private var hashes: NameHashes?

    /// Whether `name` is new among the names of the records `writer` holds (every earlier name).
    mutating func isNew(_ name: String, among writer: ImportRecordWriter) -> Bool {
        if hashes == nil {
            guard writer.count > 0 else { return true }
            var name = name
            let order = name.withUTF8 { compareBytes(writer.name(at: writer.count - 1), UnsafeRawBufferPointer($0)) }
            if order < 0 { return true }
            if order == 0 { return false }
            var table = NameHashes(expected: writer.count)
            for index in 0..<writer.count { _ = table.insert(String(decoding: writer.name(at: index), as: UTF8.self)) }
            hashes = table
        }
        return hashes!.insert(name)
    }
}
