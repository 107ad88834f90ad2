@testable import VaultInterchange
@testable import VaultModel

// MARK: - The plain references of the importers

// Test-only: `InterchangeTests.test_csvParsers_rowByRowMatchTheRecordsFirst` ties the CSV readers
// that read each row as the scan reaches it (`NativeCSV.records`/`parse`; KeePassXC's CSV goes through the one builder since issue 44)
// to these, which read every record first as strings.

extension CSV {
    /// Records with the 1-based line each starts on.
    ///
    /// Byte by byte: everything with a meaning here (quotes, commas, CR, LF, the BOM at the start)
    /// is ASCII or the BOM's whole bytes, and no byte of a multi-byte UTF-8 character is ASCII, so the
    /// fields come out as the same text as when this walked Unicode scalars into strings (which made a
    /// 100,000-row import 20× a `set`).
    static func records(_ bytes: [UInt8]) throws(VaultError) -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        try forEachRecord(bytes) { record in records.append((record.line, record.strings)) }
        return records
    }

    /// Throws unless `record` has as many columns as `header`.
    static func checkWidth(_ record: (line: Int, fields: [String]), _ header: (line: Int, fields: [String])) throws(VaultError) {
        try checkWidth(line: record.line, columns: record.fields.count, header: header.fields.count)
    }
}

extension NativeCSV {
    /// `parse(_:now:)` over every record read first (`CSV.records`), cells as strings: the plain
    /// reference of the row-by-row parse (`InterchangeTests.test_csvParsers_rowByRowMatchTheRecordsFirst`).
    static func parseReference(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        let records = try CSV.records(bytes)
        guard let header = records.first else { return [] }
        let columns = CSV.columns(header.fields)
        guard let nameColumn = columns["name"], let valueColumn = columns["value"] else {
            throw .malformedInput("line 1: the header must name the columns 'name' and 'value'")
        }
        let fieldColumns = try Self.fieldColumns(header.fields, name: nameColumn, value: valueColumn)
        var result: [(String, Entry)] = []
        result.reserveCapacity(records.count)
        for record in records.dropFirst() {
            try CSV.checkWidth(record, header)
            var fields: [String: [UInt8]] = [:]
            for (index, column) in fieldColumns where !record.fields[index].isEmpty {
                fields[column] = Array(record.fields[index].utf8)
            }
            let name = record.fields[nameColumn]
            if !EntryName.isValid(name) { do { _ = try EntryName.validate(name) } catch { throw .malformedInput("line \(record.line): \(error.description)") } }
            result.append((name, Entry(value: Array(record.fields[valueColumn].utf8), fields: fields, created: now, modified: now)))
        }
        return result
    }
}
