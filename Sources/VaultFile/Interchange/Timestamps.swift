// MARK: - Timestamps in other tools' exports

/// RFC 3339 / ISO 8601 UTC timestamps (`2023-04-05T06:07:08Z`, with optional fraction) to milliseconds.
enum Timestamps {
    /// Milliseconds since 1970 for `text`, or nil when it is not such a timestamp.
    static func parse(_ text: String) -> Int64? {
        let digits = Array(text.utf8)
        guard digits.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(digits[index]) else { return nil }
                value = value * 10 + Int64(digits[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var millis: Int64 = 0
        if digits.count > 20, digits[19] == 0x2E {
            var index = 20, scale: Int64 = 100
            while index < digits.count, (0x30...0x39).contains(digits[index]) {
                millis += Int64(digits[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }
}
