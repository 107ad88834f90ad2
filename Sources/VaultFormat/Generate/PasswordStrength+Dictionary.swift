#if canImport(Glibc)
import Glibc
#endif

// MARK: - Dictionary words

extension PasswordStrength {
    /// One word of the dictionaries: its lower-case bytes, its price in bits, and its kind.
    struct DictionaryWord {
        let bytes: [UInt8]
        let bits: Double
        let pattern: StrengthPattern
    }

    /// Every dictionary word, sorted byte-wise; a word in several lists keeps its cheapest price.
    static let dictionary: [DictionaryWord] = {
        var best: [[UInt8]: (bits: Double, pattern: StrengthPattern)] = [:]
        func add(_ words: some Sequence<Substring>, pattern: StrengthPattern, price: (Int) -> Double) {
            for (rank, word) in words.enumerated() {
                let bytes = Array(word.utf8).map(lowercased)
                guard bytes.count >= 3 else { continue }
                let bits = price(rank + 1)
                if let known = best[bytes], known.bits <= bits { continue }
                best[bytes] = (bits, pattern)
            }
        }
        let rankBits: (Int) -> Double = { log2(Double($0)) }
        add(CommonPasswords.passwords.split(separator: "\n"), pattern: .commonPassword, price: rankBits)
        add(CommonPasswords.english.split(separator: "\n"), pattern: .word, price: rankBits)
        add(CommonPasswords.names.split(separator: "\n"), pattern: .name, price: rankBits)
        let effBits = log2(Double(EFFWordList.words.count))
        add(EFFWordList.words.map { Substring($0) }, pattern: .word, price: { _ in effBits })
        return best.map { DictionaryWord(bytes: $0.key, bits: $0.value.bits, pattern: $0.value.pattern) }
            .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
    }()

    /// The longest dictionary word.
    static let longestDictionaryWord = dictionary.map(\.bytes.count).max() ?? 0

    /// The letters a look-alike character may stand for (zxcvbn's l33t table, inverted).
    private static let lookAlikes: [UInt8: [UInt8]] = {
        let table: [(Character, String)] = [("a", "4@"), ("b", "8"), ("c", "({[<"), ("e", "3"), ("g", "69"), ("i", "1!|"),
                                            ("l", "1|7"), ("o", "0"), ("s", "$5"), ("t", "+7"), ("x", "%"), ("z", "2")]
        var inverted: [UInt8: [UInt8]] = [:]
        for (letter, symbols) in table {
            for symbol in symbols.utf8 { inverted[symbol, default: []].append(letter.asciiValue!) }
        }
        return inverted
    }()

    /// At most this many look-alike substitutions are tried in one word (the search branches on each).
    private static let maximumSubstitutions = 4

    /// Adds a piece for every dictionary word in `bytes`, forwards and backwards, with look-alikes
    /// (`p@ssw0rd`) and any capitals, at the position where it starts.
    static func collectWords(in bytes: UnsafeRawBufferPointer, into pieces: inout [[Piece]]) {
        for start in 0..<bytes.count where bytes[start] < 0x80 {
            // Forwards from `start`.
            search(bytes, from: start, step: 1, low: 0, high: dictionary.count, depth: 0, substitutions: 0) { length, word, substitutions in
                let bits = word.bits + capitalBits(bytes, start..<start + length) + Double(substitutions)
                pieces[start].append(Piece(length: length, bits: bits, pattern: word.pattern))
            }
            // Backwards from `start` (the word ends at `start`, read right to left).
            search(bytes, from: start, step: -1, low: 0, high: dictionary.count, depth: 0, substitutions: 0) { length, word, substitutions in
                let first = start - length + 1
                let bits = word.bits + capitalBits(bytes, first..<start + 1) + Double(substitutions) + 1
                pieces[first].append(Piece(length: length, bits: bits, pattern: word.pattern))
            }
        }
    }

    /// Walks the sorted dictionary: `low..<high` are the words whose first `depth` letters the
    /// bytes read so far spell; each next byte narrows it to the words with that letter (or one a
    /// look-alike stands for) next. Calls `found` with the length of each whole word met.
    private static func search(_ bytes: UnsafeRawBufferPointer, from position: Int, step: Int, low: Int, high: Int, depth: Int,
                               substitutions: Int, _ found: (Int, DictionaryWord, Int) -> Void) {
        guard low < high else { return }
        if depth >= 3 && dictionary[low].bytes.count == depth { found(depth, dictionary[low], substitutions) }
        let next = position + step * depth
        guard depth < longestDictionaryWord, next >= 0, next < bytes.count else { return }
        let byte = bytes[next]
        guard byte < 0x80 else { return }
        let letter = lowercased(byte)
        var (from, to) = narrow(low..<high, depth: depth, to: letter)
        search(bytes, from: position, step: step, low: from, high: to, depth: depth + 1, substitutions: substitutions, found)
        guard substitutions < maximumSubstitutions, let letters = lookAlikes[byte] else { return }
        for stand in letters where stand != letter {
            (from, to) = narrow(low..<high, depth: depth, to: stand)
            search(bytes, from: position, step: step, low: from, high: to, depth: depth + 1, substitutions: substitutions + 1, found)
        }
    }

    /// The words of `range` (which share their first `depth` letters) whose letter at `depth` is `letter`.
    private static func narrow(_ range: Range<Int>, depth: Int, to letter: UInt8) -> (Int, Int) {
        // A word that ends at `depth` sorts before every longer one: its key is -1.
        func key(_ index: Int) -> Int { dictionary[index].bytes.count > depth ? Int(dictionary[index].bytes[depth]) : -1 }
        var low = range.lowerBound, high = range.upperBound
        while low < high { let middle = (low + high) / 2; if key(middle) < Int(letter) { low = middle + 1 } else { high = middle } }
        let from = low
        high = range.upperBound
        while low < high { let middle = (low + high) / 2; if key(middle) <= Int(letter) { low = middle + 1 } else { high = middle } }
        return (from, low)
    }

    /// The bits of a word's capitals (zxcvbn's uppercase variations): none for all lower case, 1 for
    /// a first or last capital or all capitals, else the ways to choose which letters are capitals.
    static func capitalBits(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Double {
        var upper = 0, lower = 0
        for index in range {
            if isUpper(bytes[index]) { upper += 1 } else if isLower(bytes[index]) { lower += 1 }
        }
        guard upper > 0 else { return 0 }
        if lower == 0 { return 1 }
        if upper == 1 && (isUpper(bytes[range.lowerBound]) || isUpper(bytes[range.upperBound - 1])) { return 1 }
        return log2SumOfBinomials(upper + lower, upTo: min(upper, lower))
    }
}
