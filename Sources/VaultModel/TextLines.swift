// MARK: - Lines of a text file a user wrote

package extension StringProtocol {
    /// The lines of a text, split at LF and at CRLF alike, keeping empty lines.
    ///
    /// Swift joins `\r\n` into one `Character`, so `split(separator: "\n")` never splits a CRLF
    /// line: a recipients file saved on Windows read as one line, and a comment line swallowed the
    /// recipient after it. A lone `\r` is left in the line, for the caller's own rule.
    func textLines() -> [SubSequence] {
        split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    }
}
