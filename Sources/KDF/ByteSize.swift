// MARK: - Sizes as people type and read them

/// Parsing and formatting of byte sizes with K/M/G/T suffixes (powers of 1024).
public enum ByteSize {
    /// Parses `"64M"`, `"64MiB"`, `"1g"`, `"512K"` or a plain byte count such as `"1048576"`.
    ///
    /// Suffixes are powers of 1024 and case-insensitive; `B`, `iB` after the
    /// letter are accepted. Returns `nil` for anything else, including overflow.
    public static func parse(_ text: String) -> UInt64? {
        var body = Substring(text.trimmingSpaces())
        for suffix in ["ib", "b"] where body.lowercased().hasSuffix(suffix) {
            body = body.dropLast(suffix.count)
            break
        }
        var multiplier: UInt64 = 1
        if let last = body.last?.lowercased() {
            switch last {
            case "k": multiplier = 1 << 10
            case "m": multiplier = 1 << 20
            case "g": multiplier = 1 << 30
            case "t": multiplier = 1 << 40
            default: break
            }
            if multiplier != 1 { body = body.dropLast() }
        }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isNumber }), let number = UInt64(body) else {
            return nil
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    /// Formats a byte count as a person reads it: `"64 MiB"`, `"1.5 GiB"`, `"512 bytes"`.
    public static func format(_ bytes: UInt64) -> String {
        let units: [(UInt64, String)] = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, name) in units where bytes >= size {
            let whole = bytes / size
            let tenths = (bytes % size) * 10 / size
            return tenths == 0 ? "\(whole) \(name)" : "\(whole).\(tenths) \(name)"
        }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }

    /// Formats a byte count so that `parse` reads it back and it is at least
    /// `bytes`: `"2G"`, `"1536M"`, `"100K"` (rounded up to whole KiB).
    public static func argument(_ bytes: UInt64) -> String {
        for (size, suffix) in [(UInt64(1) << 40, "T"), (1 << 30, "G"), (1 << 20, "M")] where bytes >= size && bytes % size == 0 {
            return "\(bytes / size)\(suffix)"
        }
        return "\(bytes / 1024 + (bytes % 1024 == 0 ? 0 : 1))K"
    }

    /// Formats two sizes that are compared in one message: rounded as `format` does, unless they
    /// would round to the same text (8193 KiB against a cap of 8 MiB), then exactly, in KiB when
    /// both are whole KiB, else in bytes.
    public static func formatDistinct(_ first: UInt64, _ second: UInt64) -> (String, String) {
        let rounded = (format(first), format(second))
        guard rounded.0 == rounded.1, first != second else { return rounded }
        if first % 1024 == 0 && second % 1024 == 0 { return ("\(first / 1024) KiB", "\(second / 1024) KiB") }
        return ("\(first) bytes", "\(second) bytes")
    }

    /// Formats a size given in KiB.
    public static func format(kibibytes: UInt64) -> String {
        format(bytes(kibibytes: kibibytes))
    }

    /// A size in KiB as bytes, saturating at `UInt64.max`.
    public static func bytes(kibibytes: UInt64) -> UInt64 {
        kibibytes.multipliedReportingOverflow(by: 1024).overflow ? UInt64.max : kibibytes * 1024
    }
}

// MARK: - Durations

/// Parsing of durations as people type them: `"500ms"`, `"1s"`, `"1.5s"`, `"2"` (seconds).
public enum TimeSpan {
    /// Returns the duration in seconds, or `nil` when the text is not a positive duration.
    public static func parseSeconds(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces().lowercased()
        let (number, scale): (Substring, Double) =
            trimmed.hasSuffix("ms") ? (trimmed.dropLast(2), 0.001)
            : trimmed.hasSuffix("s") ? (trimmed.dropLast(1), 1)
            : (Substring(trimmed), 1)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite, value > 0 else { return nil }
        return value * scale
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (no Foundation needed).
    func trimmingSpaces() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return self[start...end]
    }
}
