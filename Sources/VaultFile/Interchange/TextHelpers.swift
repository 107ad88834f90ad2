// MARK: - Text helpers of the interchange parsers

extension String {
    /// The index where `needle` first occurs.
    func indexOf(_ needle: String) -> String.Index? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(needle) { return index }
            index = self.index(after: index)
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
