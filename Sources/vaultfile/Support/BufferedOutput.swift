#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFile

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
    func appendTimestamp(milliseconds: Int64) {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (1000...9999).contains(year) else { return append(timestamp(milliseconds: milliseconds)) }
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4); append(UInt8(ascii: "-")); digits(Int(parts.tm_mon) + 1, 2); append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); append(UInt8(ascii: "T")); digits(Int(parts.tm_hour), 2); append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); append(UInt8(ascii: ":")); digits(Int(parts.tm_sec), 2); append(UInt8(ascii: "."))
        digits(Int(((milliseconds % 1000) + 1000) % 1000), 3); append(UInt8(ascii: "Z"))
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
