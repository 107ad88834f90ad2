import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The records of a decrypted vault, where they lie

/// The entries of a vault as decrypted: one buffer, validated once by `EntryCodec.decode`,
/// indexed by where each record starts, and decoded only when an entry is asked for.
///
/// Records are in name order (the decoder checked it), so a name is found by binary search,
/// and an untouched record is re-sealed by copying its bytes.
final class StoredRecords: Sendable {
    private let plaintext: PlaintextBuffer
    /// Where each record starts in the plaintext, then where the last one ends.
    private let starts: [Int]

    /// Wraps validated records; `starts` holds one offset per record plus the end of the last.
    init(plaintext: PlaintextBuffer, starts: [Int]) {
        precondition(!starts.isEmpty && starts.last! <= plaintext.count, "record offsets outside the plaintext")
        self.plaintext = plaintext
        self.starts = starts
    }

    /// The number of records.
    var count: Int { starts.count - 1 }

    private var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(plaintext.bytes) }

    // MARK: Names

    /// The name of record `index`. Valid while this object lives.
    func name(at index: Int) -> UnsafeRawBufferPointer {
        var cursor = RecordCursor(bytes, at: starts[index])
        return cursor.take(cursor.uint(2))
    }

    /// The encoded records `range`, which lie back to back. Valid while this object lives.
    func records(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[starts[range.lowerBound]..<starts[range.upperBound]])
    }

    /// Negative, zero or positive as the name of record `index` sorts before, equal to or after `key`.
    func compareName(at index: Int, to key: [UInt8]) -> Int {
        let name = name(at: index)
        return key.withUnsafeBytes { compareBytes(name, $0) }
    }

    /// The index of the record called `key`, by binary search.
    func index(of key: [UInt8]) -> Int? {
        let (position, found) = position(of: key)
        return found ? position : nil
    }

    /// Where `key` is or would be inserted in name order, and whether a record has that name.
    func position(of key: [UInt8]) -> (index: Int, found: Bool) {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            let order = compareName(at: middle, to: key)
            if order == 0 { return (middle, true) }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    // MARK: Entries

    /// Decodes record `index` into an entry (copies its value and fields).
    func entry(at index: Int) -> Entry {
        var cursor = RecordCursor(bytes, at: starts[index])
        _ = cursor.take(cursor.uint(2))
        let created = Int64(bitPattern: cursor.uint64())
        let modified = Int64(bitPattern: cursor.uint64())
        let value = Array(cursor.take(cursor.uint(4)))
        var fields: [String: [UInt8]] = [:]
        for _ in 0..<cursor.uint(1) {
            let field = String(decoding: cursor.take(cursor.uint(1)), as: UTF8.self)
            fields[field] = Array(cursor.take(cursor.uint(4)))
        }
        return Entry(value: value, fields: fields, created: created, modified: modified)
    }

    /// The value of record `index`, or of its field `field`, where it lies; nil when there is no such field.
    /// Valid while this object lives.
    func value(at index: Int, field: String?) -> UnsafeRawBufferPointer? {
        var cursor = RecordCursor(bytes, at: starts[index])
        _ = cursor.take(cursor.uint(2) + 16)
        let value = cursor.take(cursor.uint(4))
        guard let field else { return value }
        let wanted = Array(field.utf8)
        for _ in 0..<cursor.uint(1) {
            let name = cursor.take(cursor.uint(1))
            let fieldValue = cursor.take(cursor.uint(4))
            if wanted.withUnsafeBytes({ compareBytes(name, $0) }) == 0 { return fieldValue }
        }
        return nil
    }
}

// MARK: - Reading validated records

/// Reads a record the decoder has already validated; traps instead of reading out of bounds.
private struct RecordCursor {
    private let bytes: UnsafeRawBufferPointer
    private var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    /// A little-endian unsigned integer of `width` (1, 2 or 4) bytes.
    mutating func uint(_ width: Int) -> Int {
        Int(truncatingIfNeeded: uint64(width: width))
    }

    mutating func uint64(width: Int = 8) -> UInt64 {
        let field = take(width)
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(field[index]) << (8 * UInt64(index)) }
        return value
    }

    /// The next `count` bytes.
    mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        precondition(count >= 0 && count <= bytes.count - offset, "a validated record ends early")
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }
}

/// Byte-wise order: negative, zero or positive as `a` sorts before, equal to or after `b`
/// (a prefix sorts first, as `lexicographicallyPrecedes`).
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0 {
        let order = memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return Int(order) }
    }
    return a.count - b.count
}
