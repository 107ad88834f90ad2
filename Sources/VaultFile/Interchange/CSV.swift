// MARK: - CSV (RFC 4180)

/// Reads and writes RFC 4180 records; quoted fields may hold commas, quotes and newlines.
enum CSV {
    /// Records with the 1-based line each starts on.
    ///
    /// Byte by byte: everything with a meaning here (quotes, commas, CR, LF, the BOM at the start)
    /// is ASCII or the BOM's whole bytes, and no byte of a multi-byte UTF-8 character is ASCII, so the
    /// fields come out as the same text as when this walked Unicode scalars into strings (which made a
    /// 100,000-row import 20× a `set`).
    ///
    /// Runs of bytes without a meaning (inside a field, inside quotes) are found by a tight scan and
    /// copied in one piece rather than byte by byte; the states and their order are those of the
    /// byte-by-byte walk (`InterchangeTests.test_csvRecords_runsMatchTheByteWalk` keeps that walk
    /// as the reference).
    static func records(_ bytes: [UInt8]) throws(VaultError) -> [(line: Int, fields: [String])] {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .malformedInput("the CSV file is not UTF-8") }
        return try bytes.withUnsafeBufferPointer { (bytes) throws(VaultError) in try scan(bytes, runs: true) }
    }

    /// The byte-by-byte walk (`runs` false) or the walk with runs copied whole (`runs` true).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, runs: Bool) throws(VaultError) -> [(line: Int, fields: [String])] {
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
            let width = fields.count
            fields = []; quotedField = false
            fields.reserveCapacity(width)  // the next record is most likely as wide
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == quote {
                    if index < bytes.count && bytes[index] == quote { field.append(quote); index += 1 } else { inQuotes = false }
                } else if runs {
                    // Up to the next quote, counting line ends.
                    var end = index
                    while end < bytes.count && bytes[end] != quote { end += 1 }
                    for offset in index - 1..<end where bytes[offset] == lf { line += 1 }
                    field.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index - 1..<end]))
                    index = end
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
                if runs {
                    // Up to the next byte with a meaning.
                    var end = index
                    while end < bytes.count {
                        let next = bytes[end]
                        if next == quote || next == comma || next == cr || next == lf { break }
                        end += 1
                    }
                    field.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index - 1..<end]))
                    index = end
                } else {
                    field.append(byte)
                }
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
