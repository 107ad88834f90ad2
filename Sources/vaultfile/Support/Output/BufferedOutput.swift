#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel
import VaultInterchange

// MARK: - Output through one buffer

/// Standard output gathered in one 64 KiB buffer and written whenever it fills: the verbs that
/// print every entry (`list --json`, `git textconv`) write as they go instead of building their
/// whole text first (`list --json` of 100,000 entries peaked at 110 MB that way).
///
/// The buffer is wiped after each write and at the end, so a value printed through it (textconv's
/// `--show-secrets`) leaves no copy. A failed write is remembered and reported by `finish()`, which
/// every caller ends with; appends after a failure are dropped.
final class BufferedOutput {
    private static let capacity = 64 * 1024
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: BufferedOutput.capacity, alignment: 16)
    private var count = 0
    private var failure: Int32?
    private let descriptor: Int32

    init(descriptor: Int32 = STDOUT_FILENO) { self.descriptor = descriptor }

    deinit {
        wipe(buffer)
        buffer.deallocate()
    }

    /// Appends bytes.
    func append(_ bytes: UnsafeRawBufferPointer) {
        // Most appends are a few bytes that fit: one copy.
        if bytes.count <= Self.capacity - count, let source = bytes.baseAddress {
            (buffer.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
            count += bytes.count
            return
        }
        var remaining = bytes
        while remaining.count > 0 {
            if count == Self.capacity { flush() }
            let taken = min(remaining.count, Self.capacity - count)
            UnsafeMutableRawBufferPointer(rebasing: buffer[count..<count + taken]).copyMemory(from: UnsafeRawBufferPointer(rebasing: remaining[..<taken]))
            count += taken
            remaining = UnsafeRawBufferPointer(rebasing: remaining[taken...])
        }
    }

    /// Appends one byte.
    @inline(__always)
    func append(_ byte: UInt8) {
        if count == Self.capacity { flush() }
        buffer[count] = byte
        count += 1
    }

    /// Appends the UTF-8 bytes of a literal, without a `String` (`git textconv` writes several per entry).
    func append(literal text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 bytes of `text`.
    func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `text` as a JSON string literal, byte for byte what `JSON.quote` returns.
    func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): append(UInt8(ascii: "\\")); append(byte)
            case UInt8(ascii: "\\"): append(UInt8(ascii: "\\")); append(byte)
            case 0x0A: append(UInt8(ascii: "\\")); append(UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "\\")); append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "\\")); append(UInt8(ascii: "t"))
            case 0x00..<0x20, 0x7F:
                // Only ASCII scalars are escaped, so their single bytes can be escaped one by one.
                let digits = Array("0123456789abcdef".utf8)
                for escaped in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]] { append(escaped) }
            default: append(byte)
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// Appends `bytes` as a JSON string literal, byte for byte `appendJSONString(String(decoding: bytes, as: UTF8.self))`:
    /// UTF-8 text is escaped where it lies, without a string (a copy of a secret that is never wiped);
    /// anything else goes through that string, whose decoding replaces what is not UTF-8.
    func appendJSONString(utf8 bytes: UnsafeRawBufferPointer) {
        guard UTF8Bytes.isValid(bytes) else { return appendJSONString(String(decoding: bytes, as: UTF8.self)) }
        append(UInt8(ascii: "\""))
        var run = 0
        for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            append(UnsafeRawBufferPointer(rebasing: bytes[run..<index]))
            run = index + 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(UInt8(ascii: "\\")); append(byte)
            case 0x0A: append(UInt8(ascii: "\\")); append(UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "\\")); append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "\\")); append(UInt8(ascii: "t"))
            default:
                let digits: StaticString = "0123456789abcdef"
                for escaped in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")] { append(escaped) }
                append(digits.utf8Start[Int(byte >> 4)])
                append(digits.utf8Start[Int(byte & 0x0F)])
            }
        }
        append(UnsafeRawBufferPointer(rebasing: bytes[run...]))
        append(UInt8(ascii: "\""))
    }

    /// Appends `bytes` in lower-case hexadecimal, as `hex(_:)` writes them.
    func appendHex(_ bytes: UnsafeRawBufferPointer) {
        let digits: StaticString = "0123456789abcdef"
        for byte in bytes {
            append(digits.utf8Start[Int(byte >> 4)])
            append(digits.utf8Start[Int(byte & 0x0F)])
        }
    }

    /// Appends an RFC 3339 UTC timestamp, byte for byte what `timestamp(milliseconds:)` returns,
    /// without building strings for the common four-digit years.
    ///
    /// The same split as `UTCTime.rfc3339` (floored: −5 ms is 23:59:59.995 of the day before); the
    /// date is made once per day met (`lastDay`), the time of day by arithmetic.
    func appendTimestamp(milliseconds: Int64) {
        let (day, time) = UTCTime.split(milliseconds: milliseconds)
        if lastDay?.day != day {
            let date = UTCTime.date(ofDay: day)
            var text: (UInt64, UInt64) = (0, 0)
            let fourDigits = (0...9999).contains(date.year)
            if fourDigits {
                withUnsafeMutableBytes(of: &text) { text in
                    Self.putDigits(Int(date.year), 4, at: 0, in: text)
                    text[4] = UInt8(ascii: "-")
                    Self.putDigits(date.month, 2, at: 5, in: text)
                    text[7] = UInt8(ascii: "-")
                    Self.putDigits(date.day, 2, at: 8, in: text)
                }
            }
            lastDay = (day, fourDigits ? text : nil)
        }
        guard let date = lastDay?.date else { return append(timestamp(milliseconds: milliseconds)) }
        // "YYYY-MM-DD" (10 bytes of `date`), then "Thh:mm:ss.mmmZ".
        let secondOfDay = Int(time / 1000)
        var text: (UInt64, UInt64, UInt64) = (date.0, date.1, 0)
        withUnsafeMutableBytes(of: &text) { text in
            text[10] = UInt8(ascii: "T")
            Self.putDigits(secondOfDay / 3600, 2, at: 11, in: text)
            text[13] = UInt8(ascii: ":")
            Self.putDigits(secondOfDay / 60 % 60, 2, at: 14, in: text)
            text[16] = UInt8(ascii: ":")
            Self.putDigits(secondOfDay % 60, 2, at: 17, in: text)
            text[19] = UInt8(ascii: ".")
            Self.putDigits(Int(time % 1000), 3, at: 20, in: text)
            text[23] = UInt8(ascii: "Z")
            append(UnsafeRawBufferPointer(text))
        }
    }

    /// The day `appendTimestamp` met last (days since the epoch) and its "YYYY-MM-DD" in the first
    /// ten bytes, nil when its year is not four digits.
    private var lastDay: (day: Int64, date: (UInt64, UInt64)?)?

    /// Writes `value` as `width` decimal digits, zero-padded, at `offset`.
    private static func putDigits(_ value: Int, _ width: Int, at offset: Int, in text: UnsafeMutableRawBufferPointer) {
        var value = value
        for position in (offset..<offset + width).reversed() {
            text[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
        }
    }

    /// Writes what the buffer holds, then wipes it.
    private func flush() {
        if failure == nil && count > 0 && !Stream.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), to: descriptor) {
            failure = errno
        }
        wipe(UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
        count = 0
    }

    /// Writes the rest; throws when any write failed (stdout closed or full).
    func finish() throws(CLIError) {
        flush()
        if let failure { throw .outputFailed(errno: failure) }
    }
}
