// MARK: - Times as vaultfile prints them

/// The one conversion of a time (milliseconds since the Unix epoch, UTC) into a calendar date and
/// a time of day, for every output that prints a time: `list --json`, `get --json`, `history`,
/// `trash list`, `slot list`, `git textconv`, keygen's `# created:` line, the state folder's
/// messages (issue 39: `list --json` printed −5 ms one second late, as `1970-01-01T00:00:00.995Z`).
///
/// A time is split by **floored** division: −5 ms is 5 ms before midnight of 31 December 1969,
/// `1969-12-31T23:59:59.995Z`, and every millisecond lies in exactly one second. The date is
/// computed in the proleptic Gregorian calendar without `gmtime` (Howard Hinnant's
/// `civil_from_days`), so every `Int64` is a valid input and no year wraps: years 0000–9999 have
/// four digits (RFC 3339); a year before 0000 or after 9999 (only an import can store one) is
/// written with its sign and at least four digits, ISO 8601's expanded form (`-0001`, `+10000`).
package enum UTCTime {
    /// Milliseconds in a day.
    package static let millisecondsPerDay: Int64 = 86_400_000

    /// `milliseconds` brought into the years 0000–9999 (0000-01-01T00:00:00.000Z to
    /// 9999-12-31T23:59:59.999Z), which every export writes its times in: another manager reads
    /// no year of five digits (KeePass refuses it, JavaScript's `Date` past 275760), so a vault's
    /// time beyond them (only an import can store one) is written as the nearest (cold62 L2).
    package static func withinFourDigitYears(milliseconds: Int64) -> Int64 {
        min(max(milliseconds, -62_167_219_200_000), 253_402_300_799_999)
    }

    /// A time split into the day it falls on (days since 1970-01-01, negative before) and the
    /// milliseconds since that day's midnight (0 ..< 86,400,000).
    package static func split(milliseconds: Int64) -> (day: Int64, millisecondOfDay: Int64) {
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: millisecondsPerDay)
        return remainder < 0 ? (quotient - 1, remainder + millisecondsPerDay) : (quotient, remainder)
    }

    /// The calendar date of `day` (days since 1970-01-01).
    package static func date(ofDay day: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = day + 719_468  // days since 0000-03-01; no overflow for any day an Int64 of milliseconds gives
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153  // March = 0
        let dayOfMonth = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfMonth)
    }

    /// `YYYY-MM-DD` of `day` (days since 1970-01-01), the year as `year(_:)` writes it.
    package static func dateText(ofDay day: Int64) -> String {
        let date = date(ofDay: day)
        return year(date.year) + "-" + digits(Int64(date.month), 2) + "-" + digits(Int64(date.day), 2)
    }

    /// `hh:mm:ss` of a time of day given in milliseconds since midnight (the milliseconds dropped).
    package static func timeText(millisecondOfDay: Int64) -> String {
        let second = millisecondOfDay / 1000
        return digits(second / 3600, 2) + ":" + digits(second / 60 % 60, 2) + ":" + digits(second % 60, 2)
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-22T06:13:01.123Z`.
    package static func rfc3339(milliseconds: Int64) -> String {
        let (day, time) = split(milliseconds: milliseconds)
        return dateText(ofDay: day) + "T" + timeText(millisecondOfDay: time) + "." + digits(time % 1000, 3) + "Z"
    }

    /// RFC 3339 of a time in whole seconds (`….000Z`), for any `Int64` (no multiplication by 1000 to overflow).
    package static func rfc3339(seconds: Int64) -> String {
        let (day, secondOfDay) = split(seconds: seconds)
        return dateText(ofDay: day) + "T" + timeText(millisecondOfDay: secondOfDay * 1000) + ".000Z"
    }

    /// Seconds since 1970 as people read them: `2026-05-01 12:00:00 UTC`.
    package static func text(seconds: Int64) -> String {
        let (day, secondOfDay) = split(seconds: seconds)
        return dateText(ofDay: day) + " " + timeText(millisecondOfDay: secondOfDay * 1000) + " UTC"
    }

    /// Whole seconds split as `split(milliseconds:)` splits milliseconds.
    private static func split(seconds: Int64) -> (day: Int64, secondOfDay: Int64) {
        let (quotient, remainder) = seconds.quotientAndRemainder(dividingBy: 86_400)
        return remainder < 0 ? (quotient - 1, remainder + 86_400) : (quotient, remainder)
    }

    /// A year: four digits for 0000–9999, else its sign and at least four digits.
    package static func year(_ year: Int64) -> String {
        if (0...9999).contains(year) { return digits(year, 4) }
        return (year < 0 ? "-" : "+") + digits(year.magnitude, 4)
    }

    /// `value` (not negative) in decimal, zero-padded to `width` digits.
    private static func digits(_ value: some BinaryInteger, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

/// Seconds since 1970 as `2026-05-01 12:00:00 UTC` (`UTCTime.text(seconds:)`).
package func utcText(seconds: Int64) -> String { UTCTime.text(seconds: seconds) }
