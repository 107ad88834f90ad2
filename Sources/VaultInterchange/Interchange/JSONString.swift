import SecureMemory

// MARK: - JSON string literals

/// The one reader of JSON string literals over bytes, shared by the importers' two JSON scanners
/// (`NativeJSONReader`, which reads vaultfile's own export directly, and `JSONDocument.KeyScanner`,
/// which finds duplicate keys before `JSONDecoder` runs).
enum JSONString {
    /// Reads the string whose opening quote is at `position`, resolving escapes and joining
    /// surrogate pairs, and leaves `position` after its closing quote. Nil for a missing quote,
    /// a control character, an unknown escape, a lone surrogate or bytes that are not UTF-8.
    ///
    /// `wordAtATime` false scans byte by byte: the plain reference of the word-at-a-time scan
    /// (`InterchangeTests.test_jsonString_wordScanMatchesTheByteScan`).
    static func read(_ bytes: [UInt8], at position: inout Int, wordAtATime: Bool = true) -> String? {
        switch scan(bytes, at: &position, wordAtATime: wordAtATime) {
        case .plain(let range, let ascii)?:
            return bytes.withUnsafeBufferPointer { buffer in
                let text = UnsafeBufferPointer(rebasing: buffer[range])
                // ASCII is UTF-8 as it is: only other text goes through the (unspecialized, slower) validation.
                return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
        case .escaped(var text)?:
            defer { SecureMemory.wipe(&text) }
            return String(decoding: text, as: UTF8.self)
        case nil:
            return nil
        }
    }

    /// The UTF-8 bytes of the string `read(_:at:wordAtATime:)` reads, without making a string of
    /// them when the literal is ASCII without an escape (a value's bytes are what an import keeps).
    static func readBytes(_ bytes: [UInt8], at position: inout Int) -> [UInt8]? {
        switch scan(bytes, at: &position, wordAtATime: true) {
        case .plain(let range, true)?:
            return Array(bytes[range])
        case .plain(let range, false)?:
            return bytes.withUnsafeBufferPointer { isUTF8(UnsafeBufferPointer(rebasing: $0[range])) } ? Array(bytes[range]) : nil
        case .escaped(let text)?:
            return text  // handed over: the caller's to wipe
        case nil:
            return nil
        }
    }

    /// What `readBytes(_:at:)` reads, without copying the bytes of a literal without an escape:
    /// where they lie in `bytes` (the record writer of an import copies them from there).
    static func readImportBytes(_ bytes: [UInt8], at position: inout Int) -> ImportBytes? {
        switch scan(bytes, at: &position, wordAtATime: true) {
        case .plain(let range, true)?:
            return .input(range)
        case .plain(let range, false)?:
            return bytes.withUnsafeBufferPointer { isUTF8(UnsafeBufferPointer(rebasing: $0[range])) } ? .input(range) : nil
        case .escaped(let text)?:
            return .owned(text)  // handed over, not copied
        case nil:
            return nil
        }
    }

    /// A string literal as read: its bytes as they lie (no escape; `ascii` when no byte is 0x80 or
    /// more, else still to be checked as UTF-8), or the text with its escapes resolved.
    enum Literal {
        case plain(Range<Int>, ascii: Bool)
        case escaped(String)
    }

    /// The literal whose opening quote is at `position` (`read(_:at:wordAtATime:)`'s rules).
    static func literal(_ bytes: [UInt8], at position: inout Int, wordAtATime: Bool = true) -> Literal? {
        switch scan(bytes, at: &position, wordAtATime: wordAtATime) {
        case .plain(let range, let ascii)?: return .plain(range, ascii: ascii)
        case .escaped(var text)?:
            defer { SecureMemory.wipe(&text) }
            return .escaped(String(decoding: text, as: UTF8.self))
        case nil: return nil
        }
    }

    /// A literal as scanned: `Literal`, with the text of one with escapes as its UTF-8 bytes
    /// (checked), which the caller owns and wipes (values are secrets).
    private enum Scanned {
        case plain(Range<Int>, ascii: Bool)
        case escaped([UInt8])
    }

    /// The scan behind every reader here. The text of a literal with escapes is written into one
    /// buffer sized to the literal beforehand (escapes only shrink it), so no copy of a secret is
    /// left behind in memory freed by a growing array; a literal refused half-way wipes it.
    private static func scan(_ bytes: [UInt8], at position: inout Int, wordAtATime: Bool) -> Scanned? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        // The common case: no escape, copied in one piece.
        let run = bytes.withUnsafeBufferPointer { plainRun($0, from: start, wordAtATime: wordAtATime) }
        position = run.end
        guard position < bytes.count, bytes[position] >= 0x20 else { return nil }
        if bytes[position] == UInt8(ascii: "\"") {
            position += 1
            return .plain(start..<position - 1, ascii: !run.high)
        }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(literalLength(bytes, from: start))
        utf8.append(contentsOf: bytes[start..<position])
        var done = false
        defer { if !done { SecureMemory.wipe(&utf8) } }
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard utf8.withUnsafeBufferPointer(isUTF8) else { return nil }
                done = true
                return .escaped(utf8)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = escapedScalar(bytes, at: &position) else { return nil }
                    UTF8.encode(scalar) { utf8.append($0) }
                default: return nil
                }
            case ..<0x20:
                return nil
            default:
                utf8.append(byte)
            }
        }
        return nil
    }

    /// Where the plain run of a literal's text that starts at `start` ends: the first quote,
    /// backslash or control character from there (or the end of `buffer`), and whether a byte
    /// before it is 0x80 or more (text still to be checked as UTF-8). Scanned through a pointer,
    /// eight bytes at a time while none of them is such a byte: the bounds are the loop's.
    @inline(__always)
    static func plainRun(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int, wordAtATime: Bool = true) -> (end: Int, high: Bool) {
        var index = start, high: UInt8 = 0
        let raw = UnsafeRawBufferPointer(buffer)
        var words: UInt64 = 0
        while wordAtATime && index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let marks = byteMarks(below: 1, word ^ Word.quotes) | byteMarks(below: 1, word ^ Word.backslashes) | byteMarks(below: 0x20, word)
            guard marks == 0 else {
                // The lowest mark is the first such byte (a false mark only ever lies above a
                // true one): the bytes before it are plain, and the byte loop starts at it.
                let plain = marks.trailingZeroBitCount / 8
                if plain > 0 { words |= word & (UInt64.max >> UInt64(64 - 8 * plain)) }
                index += plain
                break
            }
            words |= word
            index += 8
        }
        if words & Word.highBits != 0 { high = 0x80 }
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= byte
            index += 1
        }
        return (index, high >= 0x80)
    }

    /// Whether `text` is UTF-8 (`UTF8Bytes.isValid`), checked where it lies: a string made only
    /// to check a value would be one more copy of a secret, freed without a wipe.
    static func isUTF8(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        UTF8Bytes.isValid(UnsafeRawBufferPointer(text))
    }

    /// The number of bytes between `start` and the closing quote of the literal (to the end of
    /// `bytes` when there is none): at least the length of its text once its escapes are resolved.
    private static func literalLength(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): return index - start
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return bytes.count - start
    }

    /// Eight copies of the bytes the scan looks for.
    private enum Word {
        static let ones: UInt64 = 0x0101_0101_0101_0101
        static let highBits: UInt64 = 0x8080_8080_8080_8080
        static let quotes: UInt64 = ones &* UInt64(UInt8(ascii: "\""))
        static let backslashes: UInt64 = ones &* UInt64(UInt8(ascii: "\\"))
    }

    /// The high bit of each byte of `word` below `limit` (at most 128), and of none below the
    /// lowest such byte: the subtraction's borrows only mark bytes above one that is.
    @inline(__always)
    private static func byteMarks(below limit: UInt64, _ word: UInt64) -> UInt64 {
        (word &- Word.ones &* limit) & ~word & Word.highBits
    }

    /// The scalar of `\uXXXX` (from after the `u`), joining a surrogate pair; nil for a lone surrogate.
    private static func escapedScalar(_ bytes: [UInt8], at position: inout Int) -> Unicode.Scalar? {
        guard let first = hex4(bytes, at: &position) else { return nil }
        guard (0xD800...0xDBFF).contains(first) else { return Unicode.Scalar(first) }
        guard position + 2 <= bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else { return nil }
        position += 2
        guard let second = hex4(bytes, at: &position), (0xDC00...0xDFFF).contains(second) else { return nil }
        return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }

    /// Four hexadecimal digits, either case.
    private static func hex4(_ bytes: [UInt8], at position: inout Int) -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}

// MARK: - Bytes between the values

/// The steps every JSON reader (`NativeJSONReader`, `BitwardenJSONReader` through `JSONWalker`,
/// and `JSONTape`) takes between values, over a document's bytes and a position in them.
enum JSONBytes {
    /// Moves past `byte` when it is next; whether it was.
    static func take(_ byte: UInt8, in bytes: [UInt8], at position: inout Int) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Moves past `literal` (`true`, `null`…) when it is next; whether it was.
    static func takeLiteral(_ literal: StaticString, in bytes: [UInt8], at position: inout Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] { return false }
        position += count
        return true
    }

    /// Moves past JSON whitespace (space, LF, CR, tab).
    static func skipWhitespace(in bytes: [UInt8], at position: inout Int) {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }
}
