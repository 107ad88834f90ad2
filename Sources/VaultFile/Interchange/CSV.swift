// MARK: - CSV (RFC 4180)

/// Reads and writes RFC 4180 records; quoted fields may hold commas, quotes and newlines.
enum CSV {
    /// Records with the 1-based line each starts on.
    ///
    /// Byte by byte: everything with a meaning here (quotes, commas, CR, LF, the BOM at the start)
    /// is ASCII or the BOM's whole bytes, and no byte of a multi-byte UTF-8 character is ASCII, so the
    /// fields come out as the same text as when this walked Unicode scalars into strings (which made a
    /// 100,000-row import 20× a `set`).
    static func records(_ bytes: [UInt8]) throws(VaultError) -> [(line: Int, fields: [String])] {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .malformedInput("the CSV file is not UTF-8") }
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(0x0D), lf = UInt8(0x0A)
        var records: [(Int, [String])] = []
        var fields: [String] = [], field: [UInt8] = [], inQuotes = false, quotedField = false
        var line = 1, recordLine = 1
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        func endRecord() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty && !quotedField) { records.append((recordLine, fields)) }
            fields = []; quotedField = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == quote {
                    if index < bytes.count && bytes[index] == quote { field.append(quote); index += 1 } else { inQuotes = false }
                } else {
                    if byte == lf { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case quote:
                guard field.isEmpty else { throw .malformedInput("line \(line): a quote inside an unquoted field") }
                inQuotes = true; quotedField = true
            case comma:
                endField()
            case cr:
                if index < bytes.count && bytes[index] == lf { continue }
                endRecord(); line += 1; recordLine = line
            case lf:
                endRecord(); line += 1; recordLine = line
            default:
                field.append(byte)
            }
        }
        if inQuotes { throw .malformedInput("line \(recordLine): unterminated quoted field") }
        if !field.isEmpty || !fields.isEmpty || quotedField { endRecord() }
        return records
    }

    /// One CSV field, quoted when it holds a comma, a quote, CR or LF, or a space at either end;
    /// each quote inside doubled.
    ///
    /// By bytes, as `records` reads them: by characters, "\r\n" is one Character (neither "\r"
    /// nor "\n") and a comma or quote followed by a combining mark is another Character, so such
    /// values were written unquoted and split the row or opened a quote on reading.
    static func quote(_ text: String) -> String {
        let bytes = text.utf8
        let special = bytes.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard special || bytes.first == UInt8(ascii: " ") || bytes.last == UInt8(ascii: " ") else { return text }
        var quoted: [UInt8] = [UInt8(ascii: "\"")]
        quoted.reserveCapacity(bytes.count + 2)
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { quoted.append(byte) }
            quoted.append(byte)
        }
        quoted.append(UInt8(ascii: "\""))
        return String(decoding: quoted, as: UTF8.self)
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
