#if canImport(Glibc)
import Glibc
#endif

// MARK: - Keyboard walks

extension PasswordStrength {
    /// A keyboard as the estimate sees it: each character's key, each key's position, and the
    /// numbers zxcvbn prices a walk with (how many characters a walk may start on, and how many
    /// neighbours a key has on average).
    struct KeyboardLayout {
        /// For each ASCII byte: its key and whether it is the shifted character, or nil.
        let keys: [(key: Int, shifted: Bool)?]
        /// Each key's row and position across (half keys count: rows are offset as on the keyboard).
        let positions: [(row: Int, x: Double)]
        let startingCharacters: Double
        let averageDegree: Double

        /// A layout from rows of (unshifted, shifted) character pairs, each row starting at `offset`.
        init(rows: [(offset: Double, keys: [String])], diagonals: Bool) {
            var keys = [(key: Int, shifted: Bool)?](repeating: nil, count: 128)
            var positions: [(row: Int, x: Double)] = []
            var characters = 0
            for (row, line) in rows.enumerated() {
                for (column, pair) in line.keys.enumerated() {
                    for (shift, byte) in pair.utf8.enumerated() where keys[Int(byte)] == nil {
                        keys[Int(byte)] = (positions.count, shift == 1)
                        characters += 1
                    }
                    positions.append((row, line.offset + Double(column)))
                }
            }
            self.keys = keys
            self.positions = positions
            startingCharacters = Double(characters)
            var degrees = 0
            for a in positions.indices { for b in positions.indices where a != b && Self.direction(positions[a], positions[b], diagonals) != nil { degrees += 1 } }
            averageDegree = Double(degrees) / Double(max(positions.count, 1))
            self.diagonals = diagonals
        }

        private let diagonals: Bool

        /// The direction from key `a` to key `b` when they are neighbours (0...7), else nil.
        func direction(_ a: Int, _ b: Int) -> Int? { Self.direction(positions[a], positions[b], diagonals) }

        private static func direction(_ a: (row: Int, x: Double), _ b: (row: Int, x: Double), _ diagonals: Bool) -> Int? {
            let rows = b.row - a.row, across = b.x - a.x
            switch rows {
            case 0: return abs(across) == 1 ? (across > 0 ? 0 : 1) : nil
            case -1, 1:
                let base = rows == 1 ? 2 : 5
                if diagonals { return abs(across) <= 1 ? base + Int(across.rounded()) + 1 : nil }
                // A slanted keyboard: the keys above and below overlap by half a key or more.
                return abs(across) <= 0.75 ? base + (across < 0 ? 0 : 1) : nil
            default: return nil
            }
        }
    }

    /// A US keyboard, rows offset as they are (zxcvbn's `qwerty` graph).
    static let qwerty = KeyboardLayout(rows: [
        (0, ["`~", "1!", "2@", "3#", "4$", "5%", "6^", "7&", "8*", "9(", "0)", "-_", "=+"]),
        (1.5, ["qQ", "wW", "eE", "rR", "tT", "yY", "uU", "iI", "oO", "pP", "[{", "]}", "\\|"]),
        (1.75, ["aA", "sS", "dD", "fF", "gG", "hH", "jJ", "kK", "lL", ";:", "'\""]),
        (2.25, ["zZ", "xX", "cC", "vV", "bB", "nN", "mM", ",<", ".>", "/?"]),
    ], diagonals: false)

    /// A numeric keypad, keys in a grid with diagonal neighbours (zxcvbn's `keypad` graph).
    static let keypad = KeyboardLayout(rows: [
        (1, ["//", "**", "--"]), (0, ["77", "88", "99", "++"]), (0, ["44", "55", "66"]), (0, ["11", "22", "33"]), (1, ["00", ".."]),
    ], diagonals: true)

    /// Adds a piece for every walk of 3 keys or more on either layout, at the position where it starts.
    static func collectKeyboardWalks(in bytes: UnsafeRawBufferPointer, into pieces: inout [[Piece]]) {
        for layout in [qwerty, keypad] {
            for start in 0..<bytes.count {
                guard bytes[start] < 0x80, var key = layout.keys[Int(bytes[start])] else { continue }
                var turns = 0, shifted = key.shifted ? 1 : 0, last: Int?
                var end = start + 1
                while end < bytes.count, bytes[end] < 0x80, let next = layout.keys[Int(bytes[end])],
                      let direction = layout.direction(key.key, next.key) {
                    if direction != last { turns += 1; last = direction }
                    if next.shifted { shifted += 1 }
                    key = next
                    end += 1
                    let length = end - start
                    if length >= 3 { pieces[start].append(Piece(length: length, bits: walkBits(layout, length: length, turns: turns, shifted: shifted), pattern: .keyboard)) }
                }
            }
        }
    }

    /// zxcvbn's guesses for a walk: Σ over lengths 2...L and turns 1...min(t, i−1) of
    /// C(i−1, j−1)·s·d^j, times the ways to place the shifted keys.
    static func walkBits(_ layout: KeyboardLayout, length: Int, turns: Int, shifted: Int) -> Double {
        var guesses = 0.0
        for i in 2...length {
            for j in 1...max(1, min(turns, i - 1)) {
                guesses += exp2(log2Binomial(i - 1, j - 1)) * layout.startingCharacters * pow(layout.averageDegree, Double(j))
            }
        }
        var bits = log2(guesses)
        let unshifted = length - shifted
        if shifted > 0 { bits += unshifted == 0 ? 1 : log2SumOfBinomials(length, upTo: min(shifted, unshifted)) }
        return bits
    }
}
