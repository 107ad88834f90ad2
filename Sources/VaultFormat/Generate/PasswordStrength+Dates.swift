#if canImport(Glibc)
import Glibc
#endif

// MARK: - Dates and years

extension PasswordStrength {
    /// The year dates are priced from: the current one (a date near now is guessed first).
    static let referenceYear: Int = {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return Int(parts.tm_year) + 1900
    }()

    /// Years closer to now than this are priced as this far (zxcvbn's minimum year space).
    static let minimumYearSpace = 20

    /// How zxcvbn splits a run of 4 to 8 digits into three numbers (the ends of the first two).
    private static let splits: [Int: [(Int, Int)]] = [
        4: [(1, 2), (2, 3)], 5: [(1, 3), (2, 3)], 6: [(1, 2), (2, 4), (4, 5)],
        7: [(1, 3), (2, 3), (4, 5), (4, 6)], 8: [(2, 4), (4, 6)],
    ]

    /// The separators a date may have between its numbers (the same one twice).
    private static let separators: [UInt8] = Array(" /\\_.-".utf8)

    /// Adds a piece for every date (`120584`, `1984-05-12`, `5/12/84`) and year (`1984`) in `bytes`.
    static func collectDates(in bytes: UnsafeRawBufferPointer, into pieces: inout [[Piece]]) {
        for start in 0..<bytes.count where isDigit(bytes[start]) {
            var run = 0
            while start + run < bytes.count && run < 8 && isDigit(bytes[start + run]) { run += 1 }
            if run >= 4, let year = number(bytes, start..<start + 4), (1900...2039).contains(year) {
                pieces[start].append(Piece(length: 4, bits: yearBits(year), pattern: .date))
            }
            // Without separators: every split of every length from 4 to `run`.
            if run >= 4 {
                for length in 4...run {
                    for (first, second) in splits[length] ?? [] {
                        let parts = [start..<start + first, start + first..<start + second, start + second..<start + length]
                        if let bits = dateBits(bytes, parts) { pieces[start].append(Piece(length: length, bits: bits, pattern: .date)) }
                    }
                }
            }
            // With separators: 1-4 digits, a separator, 1-2 digits, the same separator, 1-4 digits.
            for firstLength in 1...min(4, run) {
                let separatorAt = start + firstLength
                guard separatorAt < bytes.count, separators.contains(bytes[separatorAt]) else { continue }
                let second = digits(bytes, from: separatorAt + 1, most: 2)
                let thirdAt = separatorAt + 1 + second
                guard second > 0, thirdAt < bytes.count, bytes[thirdAt] == bytes[separatorAt] else { continue }
                let third = digits(bytes, from: thirdAt + 1, most: 4)
                guard third > 0 else { continue }
                let parts = [start..<separatorAt, separatorAt + 1..<thirdAt, thirdAt + 1..<thirdAt + 1 + third]
                if let bits = dateBits(bytes, parts) {
                    pieces[start].append(Piece(length: thirdAt + 1 + third - start, bits: bits + 2, pattern: .date))
                }
            }
        }
    }

    /// The bits of a year: log2 of how far it is from now, at least `minimumYearSpace`.
    static func yearBits(_ year: Int) -> Double {
        log2(Double(max(abs(year - referenceYear), minimumYearSpace)))
    }

    /// The bits of three numbers read as a date (day, month, year in any of the usual orders), or
    /// nil when no order makes a valid date. The cheapest reading wins.
    private static func dateBits(_ bytes: UnsafeRawBufferPointer, _ parts: [Range<Int>]) -> Double? {
        guard let a = number(bytes, parts[0]), let b = number(bytes, parts[1]), let c = number(bytes, parts[2]) else { return nil }
        var best: Double?
        // Year last (d m y, m d y) or first (y m d, y d m).
        for (yearPart, year, first, second) in [(parts[2], c, a, b), (parts[0], a, b, c)] {
            guard let fullYear = fullYear(year, digits: yearPart.count) else { continue }
            let valid = (1...31).contains(first) && (1...12).contains(second) || (1...12).contains(first) && (1...31).contains(second)
            guard valid else { continue }
            let bits = log2(365) + yearBits(fullYear)
            best = min(best ?? bits, bits)
        }
        return best
    }

    /// A year of 4 digits (1000...2050) as it is, or of 2 digits as 19xx or 20xx (the nearer to 2000).
    private static func fullYear(_ year: Int, digits: Int) -> Int? {
        switch digits {
        case 4: return (1000...2050).contains(year) ? year : nil
        case 2: return year > 50 ? 1900 + year : 2000 + year
        default: return nil
        }
    }

    /// The decimal number `bytes[range]` spells, or nil when it is not all digits.
    private static func number(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard !range.isEmpty, range.upperBound <= bytes.count else { return nil }
        var value = 0
        for index in range {
            guard isDigit(bytes[index]) else { return nil }
            value = value * 10 + Int(bytes[index] - 0x30)
        }
        return value
    }

    /// How many digits (up to `most`) follow from `start`.
    private static func digits(_ bytes: UnsafeRawBufferPointer, from start: Int, most: Int) -> Int {
        var count = 0
        while start + count < bytes.count && count < most && isDigit(bytes[start + count]) { count += 1 }
        return count
    }
}
