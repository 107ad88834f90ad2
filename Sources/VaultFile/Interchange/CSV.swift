// MARK: - CSV (RFC 4180)

/// Reads and writes RFC 4180 records; quoted fields may hold commas, quotes and newlines.
enum CSV {
    /// Records with the 1-based line each starts on.
    static func records(_ bytes: [UInt8]) throws(VaultError) -> [(line: Int, fields: [String])] {
        guard var text = String(validating: bytes, as: UTF8.self) else { throw .malformedInput("the CSV file is not UTF-8") }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var records: [(Int, [String])] = []
        var fields: [String] = [], field = "", inQuotes = false, quotedField = false
        var line = 1, recordLine = 1
        var chars = Array(text.unicodeScalars)[...]
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty && !quotedField) { records.append((recordLine, fields)) }
            fields = []; field = ""; quotedField = false
        }
        while let char = chars.popFirst() {
            if inQuotes {
                if char == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { inQuotes = false }
                } else {
                    if char == "\n" { line += 1 }
                    field.unicodeScalars.append(char)
                }
                continue
            }
            switch char {
            case "\"":
                guard field.isEmpty else { throw .malformedInput("line \(line): a quote inside an unquoted field") }
                inQuotes = true; quotedField = true
            case ",":
                fields.append(field); field = ""
            case "\r":
                if chars.first == "\n" { continue }
                endRecord(); line += 1; recordLine = line
            case "\n":
                endRecord(); line += 1; recordLine = line
            default:
                field.unicodeScalars.append(char)
            }
        }
        if inQuotes { throw .malformedInput("line \(recordLine): unterminated quoted field") }
        if !field.isEmpty || !fields.isEmpty || quotedField { endRecord() }
        return records
    }

    /// One CSV field, quoted when it must be.
    static func quote(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) || text.hasPrefix(" ") || text.hasSuffix(" ") else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// Throws unless `record` has as many columns as `header`.
    static func checkWidth(_ record: (line: Int, fields: [String]), _ header: (line: Int, fields: [String])) throws(VaultError) {
        guard record.fields.count == header.fields.count else {
            throw .malformedInput("line \(record.line): \(record.fields.count) columns, the header has \(header.fields.count)")
        }
    }

    /// Maps a header row to column indexes by lower-cased name.
    static func columns(_ header: [String]) -> [String: Int] {
        var map: [String: Int] = [:]
        for (index, name) in header.enumerated() { map[name.lowercased().trimmed] = map[name.lowercased().trimmed] ?? index }
        return map
    }
}
