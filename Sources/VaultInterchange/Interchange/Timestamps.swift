// MARK: - Timestamps in import files

/// RFC 3339 / ISO 8601 times (`2023-04-05T06:07:08Z`, `2023-04-05T08:07:08.5+02:00`, and the
/// expanded years `-0001-…`, `+10000-…` that vaultfile prints outside 0000–9999) to
/// milliseconds since 1970: a vaultfile JSON export's `created`/`modified` as text (what every
/// newer output writes, docs/JSON.md), and the times of KeePassXC and Bitwarden exports.
package enum Timestamps {
    /// Milliseconds since 1970 for `text`, or nil when it is not such a time.
    ///
    /// A day the month does not have (`2024-02-30`, `2023-02-29`, `2024-04-31`) is no time: it
    /// was taken as a day past the month's end (`2024-03-01`), a date nobody wrote (issue 47).
    /// The date and time are separated by `T`, `t` or a space; a fraction of a second may have
    /// any number of digits (beyond milliseconds they are dropped); the zone is `Z`, `z`, or an
    /// offset `±HH:MM` (or `±HHMM`), which is subtracted; a time without a zone is taken as UTC.
    package static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// `parse(_:)` over the text's UTF-8 bytes.
    static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(bytes[index]) else { return nil }
                value = value * 10 + Int64(bytes[index] - 0x30)
            }
            return value
        }
        // The year: four digits, or (ISO 8601's expanded form, which vaultfile prints for a year
        // outside 0000–9999) a sign and 4 to 9 digits. `o` is where the `-MM-DD` after it starts.
        var o = 4
        var year: Int64
        if bytes[0] == 0x2B || bytes[0] == 0x2D {
            var end = 1
            while end < bytes.count, end <= 10, (0x30...0x39).contains(bytes[end]) { end += 1 }
            guard (5...10).contains(end), let magnitude = number(1..<end) else { return nil }
            (o, year) = (end, bytes[0] == 0x2D ? -magnitude : magnitude)
        } else {
            guard let digits = number(0..<4) else { return nil }
            year = digits
        }
        guard bytes.count >= o + 15, bytes[o] == 0x2D, bytes[o + 3] == 0x2D,
              bytes[o + 6] == 0x54 || bytes[o + 6] == 0x74 || bytes[o + 6] == 0x20, bytes[o + 9] == 0x3A, bytes[o + 12] == 0x3A,
              let month = number(o + 1..<o + 3), let day = number(o + 4..<o + 6),
              let hour = number(o + 7..<o + 9), let minute = number(o + 10..<o + 12), let second = number(o + 13..<o + 15),
              (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 61 else { return nil }
        var index = o + 15
        var millis: Int64 = 0
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            var scale: Int64 = 100
            let digitsStart = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                millis += Int64(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > digitsStart else { return nil }
        }
        var offsetMinutes: Int64 = 0
        if index < bytes.count {
            switch bytes[index] {
            case 0x5A, 0x7A:  // Z, z
                index += 1
            case 0x2B, 0x2D:  // +, -
                let sign: Int64 = bytes[index] == 0x2D ? -1 : 1
                let colon = index + 3 < bytes.count && bytes[index + 3] == 0x3A
                guard let hours = number(index + 1..<index + 3), let minutes = number((colon ? index + 4 : index + 3)..<(colon ? index + 6 : index + 5)),
                      hours < 24, minutes < 60 else { return nil }
                offsetMinutes = sign * (hours * 60 + minutes)
                index += colon ? 6 : 5
            default:
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        // Nine digits of year fit in days; the milliseconds of the furthest years may not fit in an
        // Int64 (nil then). Before 1970 the day is counted from its end, so that the first days of
        // Int64's range, whose midnight lies before it, still fit.
        let timeOfDay = ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis
        let (dayStart, over1) = (days < 0 ? days + 1 : days).multipliedReportingOverflow(by: 86_400_000)
        let (result, over2) = dayStart.addingReportingOverflow(days < 0 ? timeOfDay - 86_400_000 : timeOfDay)
        return over1 || over2 ? nil : result
    }
}

// MARK: - The calendar

extension Timestamps {
    /// The number of days of `month` (1–12) in `year` of the proleptic Gregorian calendar (ISO
    /// 8601's: year 0 is a leap year, as 2000 and -400 are; 1900 and 2100 are not).
    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

// MARK: - One time, parsed once

extension Timestamps {
    /// `Timestamps.parse` remembering the last text it parsed: an export repeats its times (a
    /// KeePassXC row's two, a Bitwarden item's two, the same time on many items), and each repeat
    /// costs a comparison of at most 32 bytes instead of a parse. The text is kept in the struct
    /// itself (no allocation); longer text is parsed every time.
    /// `InterchangeTests.test_timestampCache_agreesWithParse` ties it to `parse(utf8:)`.
    struct Cache {
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var count = -1  // nothing remembered
        private var result: Int64?

        /// `Timestamps.parse(utf8:)` of `bytes`.
        mutating func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
            guard bytes.count <= 32 else { return Timestamps.parse(utf8: bytes) }
            var given: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
            withUnsafeMutableBytes(of: &given) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
            if bytes.count == count && given == words { return result }
            (words, count, result) = (given, bytes.count, Timestamps.parse(utf8: bytes))
            return result
        }

        /// `Timestamps.parse(_:)` of `text`.
        mutating func parse(_ text: String) -> Int64? {
            var text = text
            return text.withUTF8 { parse(utf8: $0) }
        }
    }
}
