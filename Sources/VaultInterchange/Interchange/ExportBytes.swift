import SecureMemory
#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - UTF-8 without a String

/// Checks UTF-8 where the bytes lie: `String(validating:as:)` answers the same question but builds
/// a string, a copy of the secret that is never wiped, for every value an export or a search reads.
public enum UTF8Bytes {
    /// Whether `bytes` are well-formed UTF-8 (Unicode Table 3-7: no overlong forms, no surrogates,
    /// nothing above U+10FFFF), exactly as `String(validating: bytes, as: UTF8.self) != nil`.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            // Eight ASCII bytes at a time.
            if index &+ 8 <= count, base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index &+= 8
                continue
            }
            let lead = base.load(fromByteOffset: index, as: UInt8.self)
            if lead < 0x80 { index &+= 1; continue }
            let length: Int, low: UInt8, high: UInt8
            switch lead {
            case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
            case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
            case 0xED: (length, low, high) = (3, 0x80, 0x9F)
            case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
            case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
            case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
            default: return false
            }
            guard count &- index >= length else { return false }
            let second = base.load(fromByteOffset: index &+ 1, as: UInt8.self)
            guard second >= low && second <= high else { return false }
            for offset in 2..<length where base.load(fromByteOffset: index &+ offset, as: UInt8.self) & 0xC0 != 0x80 { return false }
            index &+= length
        }
        return true
    }

    /// Whether `bytes` are UTF-8 text without a NUL: what dotenv and CSV can carry.
    static func isText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, memchr(base, 0, bytes.count) != nil else { return isValid(bytes) }
        return false
    }
}

// MARK: - The buffer an export is written into

/// A growing byte buffer for an export, which holds every secret of a vault in plain text: when it
/// must grow, the bytes move to a buffer twice as large and the old one is wiped (an array that
/// grows by itself frees its old buffers unwiped), and `wipe()` clears what was written when the
/// export fails halfway. The caller wipes the finished bytes (`Export` does, after writing them).
///
/// The array is as long as its capacity and written with `memcpy`: `Array.append(contentsOf:)`
/// of many short runs was a seventh of a JSON export's instructions. Bytes past `count` are never
/// read and are dropped by `take()`.
struct ExportBuffer {
    private var storage: [UInt8]
    /// The number of bytes written.
    private(set) var count = 0

    init(capacity: Int) { storage = Self.uninitialized(max(capacity, 64)) }

    private static func uninitialized(_ capacity: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
    }

    private mutating func grow(_ extra: Int) {
        var larger = Self.uninitialized(max(storage.count * 2, count + extra))
        let written = count
        storage.withUnsafeMutableBytes { old in
            larger.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: old.baseAddress!, byteCount: written) }
            SecureMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: old[..<written]))
        }
        storage = larger
    }

    /// Appends raw bytes.
    @inline(__always)
    mutating func append(_ run: UnsafeRawBufferPointer) {
        guard let source = run.baseAddress, run.count > 0 else { return }
        if count &+ run.count > storage.count { grow(run.count) }
        let offset = count
        storage.withUnsafeMutableBytes { ($0.baseAddress! + offset).copyMemory(from: source, byteCount: run.count) }
        count &+= run.count
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == storage.count { grow(1) }
        storage[count] = byte
        count &+= 1
    }

    /// Appends the UTF-8 bytes of a literal.
    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of `number`, as `String(number)` writes them, two digits per division.
    mutating func appendDecimal(_ number: Int64) {
        let pairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 19 digits and a sign
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = number.magnitude
            var position = buffer.count
            while magnitude >= 100 {
                let pair = Int(magnitude % 100) &* 2
                magnitude /= 100
                position &-= 2
                buffer[position] = pairs.utf8Start[pair]
                buffer[position &+ 1] = pairs.utf8Start[pair &+ 1]
            }
            if magnitude >= 10 {
                position &-= 2
                buffer[position] = pairs.utf8Start[Int(magnitude) &* 2]
                buffer[position &+ 1] = pairs.utf8Start[Int(magnitude) &* 2 &+ 1]
            } else {
                position &-= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(magnitude)
            }
            if number < 0 {
                position &-= 1
                buffer[position] = UInt8(ascii: "-")
            }
            append(UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }

    /// Calls `body` with the bytes written so far.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Clears what was written (an export that fails drops its half-written text).
    mutating func wipe() {
        let written = count
        storage.withUnsafeMutableBytes { SecureMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: $0[..<written])) }
        count = 0
    }

    /// The bytes written, leaving this buffer empty (the caller wipes them).
    mutating func take() -> [UInt8] {
        var taken = storage
        storage = []
        taken.removeLast(taken.count - count)
        count = 0
        return taken
    }
}

// MARK: - Distinct byte strings

/// A hash set of byte strings that lie in one buffer the caller owns, each given as its range
/// there: the variables of a dotenv export (to find two entries that clash) and the field names
/// of a CSV export, without a `String` or an array per entry.
struct ByteRanges {
    /// The ranges inserted, in order.
    private(set) var ranges: [Range<Int>] = []
    /// Open addressing: an index into `ranges` plus one, 0 for an empty slot; a power of two long.
    private var slots: [Int]
    private var hashes: [Int] = []

    init(expected: Int) {
        var size = 16
        while size < 2 * expected { size *= 2 }
        slots = [Int](repeating: 0, count: size)
    }

    /// Inserts the bytes `range` of `storage` unless equal bytes are in already; returns the index
    /// of the range that holds them (`ranges.count - 1` when inserted).
    mutating func insert(_ range: Range<Int>, of storage: UnsafeRawBufferPointer) -> (inserted: Bool, index: Int) {
        let bytes = UnsafeRawBufferPointer(rebasing: storage[range])
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        let hash = hasher.finalize()
        var slot = hash & (slots.count - 1)
        while slots[slot] != 0 {
            let index = slots[slot] - 1
            if hashes[index] == hash && compareBytes(UnsafeRawBufferPointer(rebasing: storage[ranges[index]]), bytes) == 0 {
                return (false, index)
            }
            slot = (slot + 1) & (slots.count - 1)
        }
        ranges.append(range)
        hashes.append(hash)
        slots[slot] = ranges.count
        if ranges.count * 2 > slots.count { rehash() }
        return (true, ranges.count - 1)
    }

    private mutating func rehash() {
        slots = [Int](repeating: 0, count: slots.count * 2)
        for (index, hash) in hashes.enumerated() {
            var slot = hash & (slots.count - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = index + 1
        }
    }
}
