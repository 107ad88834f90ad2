#if canImport(Glibc)
import Glibc
#endif

// MARK: - Password strength

/// A rough estimate of a password's strength in bits: log2 of the guesses an attacker who tries
/// the likely passwords first would need.
///
/// No zxcvbn port exists for Swift on Linux, so this is vaultfile's own estimate, documented in
/// man/vaultfile.1 (init): each character costs log2 of the alphabet its classes span (26 lower,
/// 26 upper, 10 digits, 33 ASCII symbols and space, 100 for anything beyond ASCII), except
///
/// - a word of the shipped EFF list (3 letters or more, any case) costs 12.9 bits, plus 1 when it
///   has capitals;
/// - a run of one character (`aaaa`), a step of a sequence (`abcd`, `4321`) or of a keyboard row
///   (`qwerty`, `asdf`) costs 1 bit per character after the first;
/// - a stretch of 3 characters or more that appeared earlier (`abc!abc!`) costs log2 of where it
///   could have been copied from.
///
/// The estimate is the cheapest way to spell the whole password with these readings (found by
/// dynamic programming over its first 256 bytes, so a lucky early reading cannot hide a word). It is
/// a screen for obvious weakness (a short, repeated, patterned or one-word password), not a
/// promise: names, dates and common passwords outside the word list are not recognised. It reads
/// the bytes where they lie and copies none of them, so no copy of the password is left behind.
public enum PasswordStrength {
    /// The strength below which `init` and `passwd` warn: about 50 bits (a 4-word EFF passphrase
    /// is 51.7).
    public static let recommendedBits = 50.0

    /// Passwords longer than this are estimated on their first bytes, plus one bit per byte beyond.
    static let estimatedPrefix = 256

    /// The estimated strength of `password` in bits.
    public static func estimatedBits(_ password: UnsafeRawBufferPointer) -> Double {
        let bytes = UnsafeRawBufferPointer(rebasing: password.prefix(estimatedPrefix))
        let perCharacter = log2(Double(max(alphabetSize(bytes), 1)))
        // cheapest[i]: the fewest bits that spell bytes[i...], over every reading (from the end back).
        var cheapest = [Double](repeating: .infinity, count: bytes.count + 1)
        cheapest[bytes.count] = 0
        var starts = [Bool](repeating: false, count: bytes.count)
        var start = 0
        while start < bytes.count { starts[start] = true; start += characterLength(bytes, at: start) }
        for index in stride(from: bytes.count - 1, through: 0, by: -1) where starts[index] {
            let character = characterLength(bytes, at: index)
            var best = (index > 0 && continuesPattern(bytes, at: index) ? 1 : perCharacter) + cheapest[index + character]
            forEachWord(in: bytes, at: index) { length in
                let cost = wordBits + (hasCapital(bytes, index..<index + length) ? 1 : 0)
                best = min(best, cost + cheapest[index + length])
            }
            if let longest = longestRepeat(in: bytes, at: index) {
                for length in 3...longest {
                    best = min(best, max(1, log2(Double(index)) + log2(Double(length))) + cheapest[index + length])
                }
            }
            cheapest[index] = best
        }
        return (cheapest.first ?? 0) + Double(password.count - bytes.count)
    }

    // MARK: Alphabet

    /// The sum of the sizes of the character classes that appear.
    static func alphabetSize(_ bytes: UnsafeRawBufferPointer) -> Int {
        var lower = false, upper = false, digit = false, symbol = false, other = false
        for byte in bytes {
            switch byte {
            case 0x61...0x7A: lower = true
            case 0x41...0x5A: upper = true
            case 0x30...0x39: digit = true
            case 0x20...0x7E: symbol = true
            default: other = true
            }
        }
        return (lower ? 26 : 0) + (upper ? 26 : 0) + (digit ? 10 : 0) + (symbol ? 33 : 0) + (other ? 100 : 0)
    }

    /// The bytes of the character at `index`: 1 for ASCII, the UTF-8 sequence's length otherwise.
    private static func characterLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        var end = index + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        return end - index
    }

    // MARK: Patterns

    /// The rows of a US keyboard, for `qwerty` and `asdf`.
    private static let keyboardRows: [[UInt8]] = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"].map { Array($0.utf8) }

    /// Whether the ASCII character at `index` repeats the one before it, or steps from it as a
    /// sequence (`b` after `a`, `3` after `4`) or along a keyboard row (`w` after `q`).
    static func continuesPattern(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        let current = lowercased(bytes[index]), previous = lowercased(bytes[index - 1])
        guard current < 0x80, previous < 0x80 else { return false }
        if current == previous { return true }
        let isAlphanumeric: (UInt8) -> Bool = { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
        if isAlphanumeric(current) && isAlphanumeric(previous) && (current &+ 1 == previous || previous &+ 1 == current) {
            return true
        }
        for row in keyboardRows {
            guard let a = row.firstIndex(of: previous), let b = row.firstIndex(of: current) else { continue }
            if abs(a - b) == 1 { return true }
        }
        return false
    }

    /// The length of the longest stretch of 3 bytes or more at `index` that also lies wholly before it.
    static func longestRepeat(in bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        var best = 0
        for start in 0..<index {
            var length = 0
            while start + length < index && index + length < bytes.count && bytes[start + length] == bytes[index + length] {
                length += 1
            }
            best = max(best, length)
        }
        return best >= 3 ? best : nil
    }

    // MARK: Words

    /// log2 of the number of words in the shipped list.
    private static let wordBits = log2(Double(EFFWordList.words.count))

    /// The shipped word list as bytes, sorted byte-wise.
    private static let sortedWords: [[UInt8]] = EFFWordList.words.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }

    /// The longest word of the list's length range.
    private static let longestWordLength = sortedWords.map(\.count).max() ?? 0

    /// Calls `body` with the length of each list word (3 letters or more, any case) that starts at `index`.
    static func forEachWord(in bytes: UnsafeRawBufferPointer, at index: Int, _ body: (Int) -> Void) {
        let longest = min(longestWordLength, bytes.count - index)
        guard longest >= 3 else { return }
        for length in 3...longest where isWord(bytes, index..<index + length) { body(length) }
    }

    /// Whether `bytes[range]`, in lower case, is a word of the list (a binary search that compares
    /// in place).
    private static func isWord(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        var low = 0, high = sortedWords.count
        while low < high {
            let middle = (low + high) / 2
            switch compare(sortedWords[middle], bytes, range) {
            case 0: return true
            case ..<0: low = middle + 1
            default: high = middle
            }
        }
        return false
    }

    /// -1, 0 or 1 as `word` sorts before, equal to or after the lower-cased `bytes[range]`.
    private static func compare(_ word: [UInt8], _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int {
        for (offset, index) in range.enumerated() {
            guard offset < word.count else { return -1 }
            let byte = lowercased(bytes[index])
            if word[offset] != byte { return word[offset] < byte ? -1 : 1 }
        }
        return word.count > range.count ? 1 : 0
    }

    private static func hasCapital(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        range.contains { (0x41...0x5A).contains(bytes[$0]) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
