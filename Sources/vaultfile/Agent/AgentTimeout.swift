// MARK: - Idle timeouts

/// The durations of `unlock --timeout`: a whole number with s, m, h or d (none: seconds), or 0
/// for "until lock"; at most 365 days.
enum AgentTimeout {
    /// The longest timeout, in seconds.
    static let maxSeconds: UInt32 = 365 * 86_400

    /// The duration in seconds, or nil when `text` is not one.
    static func seconds(_ text: String) -> UInt32? {
        let units: [Character: UInt64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var digits = Substring(text)
        var scale: UInt64 = 1
        if let last = text.last, let unit = units[last] {
            digits = digits.dropLast()
            scale = unit
        }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt64(digits) else { return nil }
        let seconds = value * scale
        guard seconds <= UInt64(maxSeconds) else { return nil }
        return UInt32(seconds)
    }

    /// `seconds` as people say it: 15m, 1h 30m, 45s.
    static func text(_ seconds: UInt32) -> String {
        guard seconds > 0 else { return "0s" }
        let parts: [(UInt32, String)] = [(seconds / 86_400, "d"), (seconds % 86_400 / 3_600, "h"), (seconds % 3_600 / 60, "m"), (seconds % 60, "s")]
        return parts.filter { $0.0 > 0 }.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }
}
