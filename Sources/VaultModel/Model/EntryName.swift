// MARK: - Entry and field names

/// The rules for entry and field names (docs/FORMAT.md §7).
///
/// Entry names have two checks that must agree on every input: the reference rule
/// `validate(utf8:display:)`, plain and explaining each failure, and the decoder's fast scan
/// `isValid(utf8:)`, which checks every name of a vault word at a time. The test
/// `VaultModelTests.test_isValid_agreesWithTheFullRules` ties them (300,000 random names on
/// the edges of UTF-8 and of the rules, and '/', '.' and multi-byte pairs at every place).
public enum EntryName {
    // MARK: Entry names

    /// Checks an entry name and returns its UTF-8 bytes.
    ///
    /// A name is 1…1024 bytes of UTF-8 without control characters, made of
    /// `/`-separated components that are neither empty nor `.` or `..`.
    public static func validate(_ name: String) throws(VaultError) -> [UInt8] {
        let bytes = Array(name.utf8)
        try validate(utf8: bytes, display: name)
        return bytes
    }

    /// Whether `validate(_:)` passes for `name`, without copying it (`isValid(utf8:)`, tied to the
    /// full rules by `VaultModelTests.test_isValid_agreesWithTheFullRules`): the importers check every
    /// name so and ask `validate(_:)` only for the message of one that fails.
    package static func isValid(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isValid(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// The reference rule, over UTF-8 bytes already known to be valid UTF-8. The decoder calls it
    /// only to explain a name `isValid(utf8:)` refused.
    static func validate(utf8 bytes: [UInt8], display: @autoclosure () -> String) throws(VaultError) {
        guard !bytes.isEmpty else { throw .invalidName("an entry name cannot be empty") }
        guard bytes.count <= VaultLimits.maxNameLength else {
            throw .invalidName("an entry name is at most \(VaultLimits.maxNameLength) bytes; this one is \(bytes.count)")
        }
        var componentStart = 0
        for index in 0...bytes.count {
            let byte: UInt8 = index < bytes.count ? bytes[index] : 0x2F  // a virtual '/' closes the last component
            // C0 controls, DEL, and C1 controls (U+0080–U+009F, encoded C2 80…C2 9F).
            if byte < 0x20 || byte == 0x7F || (byte == 0xC2 && index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1])) {
                throw .invalidName("an entry name cannot contain control characters (newline, tab, NUL, …)")
            }
            guard byte == 0x2F else { continue }
            let length = index - componentStart
            if length == 0 {
                throw .invalidName("'\(display())' has an empty path component (leading, trailing or double '/')")
            }
            if (length == 1 && bytes[componentStart] == 0x2E) || (length == 2 && bytes[componentStart] == 0x2E && bytes[componentStart + 1] == 0x2E) {
                throw .invalidName("'\(display())' has a '.' or '..' component")
            }
            componentStart = index + 1
        }
    }

    /// Whether `bytes` are UTF-8 and a valid entry name, in one pass that allocates nothing.
    ///
    /// The decoder's fast path over every name of a vault; it must agree with `String(validating:)`
    /// plus `validate(utf8:display:)`, which explains a failure (see the type's comment for the test).
    package static func isValid(utf8 bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= VaultLimits.maxNameLength else { return false }
        var index = 0, componentStart = 0
        while index < bytes.count {
            // Printable ASCII eight bytes at a time, the last word overlapping the one before it
            // (its bytes already checked are printable ASCII too); each '/' in the new bytes
            // ends a component, which is then checked.
            if bytes.count >= 8 {
                let wordStart = min(index, bytes.count - 8)
                let word = bytes.loadUnaligned(fromByteOffset: wordStart, as: UInt64.self)
                if isPrintableASCII(word) {
                    var slashes = zeroBytes(word ^ ASCIIWord.slash) >> UInt64(8 * (index - wordStart))
                    while slashes != 0 {
                        let slash = index + slashes.trailingZeroBitCount / 8
                        guard isValidComponent(bytes, componentStart..<slash) else { return false }
                        componentStart = slash + 1
                        slashes &= slashes &- 1
                    }
                    index = wordStart + 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte < 0x80 {
                if byte < 0x20 || byte == 0x7F { return false }
                if byte == 0x2F {
                    guard isValidComponent(bytes, componentStart..<index) else { return false }
                    componentStart = index + 1
                }
                index += 1
                continue
            }
            // The allowed second bytes exclude overlong forms, surrogates, code points above U+10FFFF
            // and, after C2, the C1 controls U+0080–U+009F.
            let length: Int, second: ClosedRange<UInt8>
            switch byte {
            case 0xC2: (length, second) = (2, 0xA0...0xBF)
            case 0xC3...0xDF: (length, second) = (2, 0x80...0xBF)
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xE1...0xEC, 0xEE...0xEF: (length, second) = (3, 0x80...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF1...0xF3: (length, second) = (4, 0x80...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            default: return false
            }
            guard index + length <= bytes.count, second.contains(bytes[index + 1]) else { return false }
            for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) { return false }
            index += length
        }
        return isValidComponent(bytes, componentStart..<bytes.count)
    }

    /// The longest start of `text` that ends at a character (grapheme) boundary and takes at most
    /// `limit` UTF-8 bytes: how a name is cut to fit the name limit (a merge's parking name, an
    /// import's name too long) without splitting a character. Empty when the first character is
    /// longer than `limit`.
    public static func prefix(of text: String, fittingIn limit: Int) -> Substring {
        var end = text.startIndex, used = 0
        for index in text.indices {
            let next = text.index(after: index)
            let length = text.utf8.distance(from: index, to: next)
            guard used + length <= limit else { break }
            used += length
            end = next
        }
        return text[..<end]
    }

    // MARK: Field names

    /// Checks a field name: 1…64 characters from `A–Z a–z 0–9 _ . -`.
    public static func validateField(_ field: String) throws(VaultError) {
        let bytes = Array(field.utf8)
        guard (1...VaultLimits.maxFieldNameLength).contains(bytes.count) else {
            throw .invalidName("a field name is 1 to \(VaultLimits.maxFieldNameLength) characters")
        }
        guard bytes.allSatisfy(isFieldByte) else {
            throw .invalidName("field name '\(field)' may hold only letters, digits, '_', '.' and '-'")
        }
    }

    /// Whether `bytes` form a valid field name (1…64 of `A–Z a–z 0–9 _ . -`).
    package static func isValidField(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (1...VaultLimits.maxFieldNameLength).contains(bytes.count) && bytes.allSatisfy(isFieldByte)
    }

    /// `A–Z a–z 0–9 _ . -` as a bit set over the ASCII codes: bits 0–63, then 64–127.
    private static let fieldBytes: (low: UInt64, high: UInt64) = (0x03FF_6000_0000_0000, 0x07FF_FFFE_87FF_FFFE)

    @inline(__always)
    private static func isFieldByte(_ byte: UInt8) -> Bool {
        let bits = byte < 64 ? fieldBytes.low : (byte < 128 ? fieldBytes.high : 0)
        return (bits >> UInt64(byte & 63)) & 1 == 1
    }

    // MARK: Word-at-a-time and component checks

    /// Eight copies of a byte, for the word-at-a-time checks.
    private enum ASCIIWord {
        static let ones: UInt64 = 0x0101_0101_0101_0101
        static let highBits: UInt64 = 0x8080_8080_8080_8080
        static let lowBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        static let slash: UInt64 = ones &* 0x2F
    }

    /// Whether all eight bytes of `word` are in 0x20…0x7E (bit tricks on the whole word).
    @inline(__always)
    private static func isPrintableASCII(_ word: UInt64) -> Bool {
        // With no high bit set, (x - n) borrows into a byte's high bit exactly when that byte is below n:
        // the word has a control byte iff some byte is below 0x20, a DEL iff some byte of word ^ 7F is zero.
        func hasByteBelow(_ x: UInt64, _ n: UInt64) -> Bool { (x &- ASCIIWord.ones &* n) & ~x & ASCIIWord.highBits != 0 }
        return word & ASCIIWord.highBits == 0 && !hasByteBelow(word, 0x20) && zeroBytes(word ^ (ASCIIWord.ones &* 0x7F)) == 0
    }

    /// The high bit of each zero byte of `word`, and no other bit (exact: no borrow between bytes).
    @inline(__always)
    private static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(((word & ASCIIWord.lowBits) &+ ASCIIWord.lowBits) | word | ASCIIWord.lowBits)
    }

    /// A path component is neither empty nor `.` nor `..`.
    private static func isValidComponent(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        switch range.count {
        case 0: return false
        case 1: return bytes[range.lowerBound] != 0x2E
        case 2: return bytes[range.lowerBound] != 0x2E || bytes[range.lowerBound + 1] != 0x2E
        default: return true
        }
    }
}
