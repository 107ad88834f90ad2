#if canImport(Glibc)
import Glibc
#endif

// MARK: - Password strength

/// An estimate of a password's strength in bits: log2 of the guesses an attacker who tries the
/// likely passwords first would need, after the approach of zxcvbn (Wheeler, USENIX Security 2016).
///
/// No zxcvbn port exists for Swift on Linux, so this is vaultfile's own estimate, documented in
/// man/vaultfile.1 (STRENGTH ESTIMATE). The password is read as a sequence of pieces, each priced
/// in bits, and the cheapest reading of the whole is the estimate:
///
/// - a character costs log2 of the alphabet its classes span (26 lower, 26 upper, 10 digits,
///   33 ASCII symbols and space, 100 for anything beyond ASCII);
/// - a word of the dictionaries (3 letters or more; `CommonPasswords`: 10,000 common passwords,
///   5,000 English words, 2,000 names, each log2 of its rank; the EFF list, 12.9 bits) costs its
///   price plus the ways of capitalising it, 1 bit per look-alike substitution (`p@ssw0rd`), and
///   1 bit when spelt backwards; at least 5.6 bits when it is only part of the password;
/// - a walk on a US keyboard or a numeric keypad (`qwerty`, `1qaz2wsx`, `zaq12wsx`) costs the
///   starting keys, the turns and the shifted keys, as zxcvbn counts them;
/// - a date (`1984-05-12`, `120584`) costs log2 of 365 days times the years from now (at least
///   20), 2 bits more with separators; a year alone (`1984`) the years from now;
/// - a run of one character (`aaaa`), a step of a sequence (`abcd`, `4321`) or of a keyboard row
///   costs 1 bit per character after the first;
/// - a stretch of 3 characters or more that appeared earlier (`abc!abc!`) costs log2 of where it
///   could have been copied from.
///
/// The cheapest reading is found by dynamic programming over the first 256 bytes (each byte
/// beyond costs 1 bit). It is a screen for obvious weakness, not a promise. It reads the bytes
/// where they lie and copies none of them, so no copy of the password is left behind.
public enum PasswordStrength {
    /// The strength below which `init`, `passwd` and `slot add password` warn, and `audit` reports
    /// a password as weak unless `--min-bits` says otherwise: about 50 bits (a 4-word EFF
    /// passphrase is 51.7).
    public static let recommendedBits = 50.0

    /// Passwords longer than this are estimated on their first bytes, plus one bit per byte beyond.
    static let estimatedPrefix = 256

    /// A dictionary word, keyboard walk or date that is only part of the password costs at least
    /// this (zxcvbn's 50 guesses): otherwise a short word inside random characters would be free.
    static let minimumPieceBits = log2(50.0)

    /// The estimated strength of `password` in bits.
    public static func estimatedBits(_ password: UnsafeRawBufferPointer) -> Double {
        estimate(password).bits
    }

    /// The estimated strength of `password`, with the kinds of pattern its cheapest reading used.
    public static func estimate(_ password: UnsafeRawBufferPointer) -> StrengthEstimate {
        let bytes = UnsafeRawBufferPointer(rebasing: password.prefix(estimatedPrefix))
        let beyond = Double(password.count - bytes.count)
        guard !bytes.isEmpty else { return StrengthEstimate(bits: 0, patterns: []) }
        let perCharacter = log2(Double(max(alphabetSize(bytes), 1)))
        var pieces = [[Piece]](repeating: [], count: bytes.count)
        collectWords(in: bytes, into: &pieces)
        collectKeyboardWalks(in: bytes, into: &pieces)
        collectDates(in: bytes, into: &pieces)
        // cheapest[i]: the fewest bits that spell bytes[i...], over every reading (from the end back);
        // chosen[i]: the piece that reading starts with.
        var cheapest = [Double](repeating: .infinity, count: bytes.count + 1)
        var chosen = [Piece](repeating: Piece(length: 1, bits: 0, pattern: nil), count: bytes.count)
        cheapest[bytes.count] = 0
        var starts = [Bool](repeating: false, count: bytes.count)
        var start = 0
        while start < bytes.count { starts[start] = true; start += characterLength(bytes, at: start) }
        for index in stride(from: bytes.count - 1, through: 0, by: -1) where starts[index] {
            let character = characterLength(bytes, at: index)
            var best = Piece(length: character, bits: perCharacter, pattern: nil)
            if index > 0, let continued = continuedPattern(bytes, at: index) {
                best = Piece(length: character, bits: 1, pattern: continued)
            }
            var bestTotal = best.bits + cheapest[index + character]
            func consider(_ piece: Piece) {
                let whole = index == 0 && piece.length == bytes.count
                let bits = whole ? piece.bits : max(piece.bits, minimumPieceBits)
                let total = bits + cheapest[index + piece.length]
                if total < bestTotal { bestTotal = total; best = Piece(length: piece.length, bits: bits, pattern: piece.pattern) }
            }
            pieces[index].forEach(consider)
            if let longest = longestRepeat(in: bytes, at: index) {
                for length in 3...longest {
                    let bits = max(1, log2(Double(index)) + log2(Double(length)))
                    let total = bits + cheapest[index + length]
                    if total < bestTotal { bestTotal = total; best = Piece(length: length, bits: bits, pattern: .repeated) }
                }
            }
            cheapest[index] = bestTotal
            chosen[index] = best
        }
        var patterns: [StrengthPattern] = []
        var index = 0
        while index < bytes.count {
            if let pattern = chosen[index].pattern, !patterns.contains(pattern) { patterns.append(pattern) }
            index += chosen[index].length
        }
        return StrengthEstimate(bits: (cheapest.first ?? 0) + beyond, patterns: patterns)
    }

    /// One way to read a stretch of the password: its length in bytes, its price, and its kind
    /// (nil for characters taken one by one).
    struct Piece {
        var length: Int
        var bits: Double
        var pattern: StrengthPattern?
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
        continuedPattern(bytes, at: index) != nil
    }

    /// The pattern the ASCII character at `index` continues from the one before it, if any.
    static func continuedPattern(_ bytes: UnsafeRawBufferPointer, at index: Int) -> StrengthPattern? {
        let current = lowercased(bytes[index]), previous = lowercased(bytes[index - 1])
        guard current < 0x80, previous < 0x80 else { return nil }
        if current == previous { return .repeated }
        let isAlphanumeric: (UInt8) -> Bool = { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
        if isAlphanumeric(current) && isAlphanumeric(previous) && (current &+ 1 == previous || previous &+ 1 == current) {
            return .sequence
        }
        for row in keyboardRows {
            guard let a = row.firstIndex(of: previous), let b = row.firstIndex(of: current) else { continue }
            if abs(a - b) == 1 { return .keyboard }
        }
        return nil
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

    static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }

    static func isUpper(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }

    static func isLower(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) }

    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// log2 of the binomial coefficient C(n, k).
    static func log2Binomial(_ n: Int, _ k: Int) -> Double {
        guard k >= 0, k <= n else { return -.infinity }
        var sum = 0.0
        for step in 0..<min(k, n - k) { sum += log2(Double(n - step)) - log2(Double(step + 1)) }
        return sum
    }

    /// log2 of Σ C(n, i) for i in 1...k: the ways to choose which of n characters (up to k) are the odd ones.
    static func log2SumOfBinomials(_ n: Int, upTo k: Int) -> Double {
        guard k >= 1 else { return 0 }
        var total = 0.0
        for i in 1...min(k, n) { total += exp2(log2Binomial(n, i)) }
        return log2(max(total, 1))
    }
}

// MARK: - The estimate

/// What `PasswordStrength.estimate` found: the bits and the kinds of pattern that made them fewer.
public struct StrengthEstimate: Equatable, Sendable {
    /// log2 of the guesses the estimate expects an attacker to need.
    public let bits: Double
    /// The kinds of pattern in the cheapest reading, in the order they appear (none for a
    /// password read character by character).
    public let patterns: [StrengthPattern]

    /// log10 of the guesses, as zxcvbn reports them.
    public var guessesLog10: Double { bits * log10(2.0) }
}

/// A kind of pattern the estimate recognises, named as `audit` prints it.
public enum StrengthPattern: String, Equatable, Sendable, CaseIterable {
    /// One of the 10,000 most common passwords.
    case commonPassword = "common password"
    /// A word of the English or EFF lists.
    case word = "word"
    /// A common first or last name.
    case name = "name"
    /// A walk on a keyboard or keypad, or along a keyboard row.
    case keyboard = "keyboard pattern"
    /// A date or a year.
    case date = "date"
    /// A character or stretch repeated.
    case repeated = "repeat"
    /// A step of an alphabetic or numeric sequence.
    case sequence = "sequence"
}
