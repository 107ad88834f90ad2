// MARK: - Text helpers of the interchange parsers

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
