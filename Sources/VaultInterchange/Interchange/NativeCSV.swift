import VaultModel

// MARK: - vaultfile CSV

/// vaultfile CSV: header `name,value,FIELD…`; every other column is a field, empty cells are absent fields.
enum NativeCSV {
    /// The entries of a vaultfile CSV file, in file order.
    ///
    /// Row by row as the scan reads them (`CSV.forEachRecord`), each cell taken as bytes, and a
    /// string made only of the name: holding every row's cells as strings first took a third of the
    /// import and most of its memory.
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        var list = ImportedEntryList()
        _ = try read(bytes, now: now, into: &list)
        return list.entries
    }

    /// What `parse(_:now:)` reads, each entry written as its record (`ImportRecordWriter`), by the
    /// same rows; the error `parse` throws, or nil when the writer declines an entry (a non-ASCII
    /// name, a limit, a field name a vault refuses: `parse` then reads them, and the put names the
    /// problem). `ImportRecordsTests.test_importRecords_csvMatchesTheEntryPath` ties the two.
    static func records(_ bytes: some CSVSource, now: Int64) throws(VaultError) -> WrittenRecords? {
        // A record is longer than its row (times, lengths, each field's name): room for twice the
        // input, mapped but not touched until written, so that the buffer never grows (a growth
        // held the old records and their copy at once, the import's peak).
        guard var writer = ImportRecordWriter(capacity: bytes.byteCount * 2) else { return nil }
        // A run that could not be written (a full disk): read the plain way, in memory.
        guard try read(bytes, now: now, into: &writer), writer.failure == nil else { return nil }
        return try? writer.records()
    }

    /// Reads every row into `output`; false when it declined an entry (the rows after it are still
    /// read, for their errors, and not given to it).
    private static func read(_ bytes: some CSVSource, now: Int64, into output: inout some ImportedEntrySink) throws(VaultError) -> Bool {
        var width: Int?
        var nameColumn = 0, valueColumn = 0
        var fieldColumns: [(index: Int, name: ImportBytes)] = []
        var fields: [ImportField] = []
        var declined = false
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            guard let width else {
                let names = record.strings
                width = names.count
                let columns = CSV.columns(names)
                guard let name = columns["name"], let value = columns["value"] else {
                    throw .malformedInput("line 1: the header must name the columns 'name' and 'value'")
                }
                (nameColumn, valueColumn) = (name, value)
                fieldColumns = try Self.fieldColumns(names, name: name, value: value).map { (index: $0.index, name: .owned(Array($0.name.utf8))) }
                return
            }
            try CSV.checkWidth(line: record.line, columns: record.count, header: width)
            fields.removeAll(keepingCapacity: true)
            for (index, column) in fieldColumns where !record.isEmpty(index) {
                fields.append(ImportField(name: column, value: .input(record.range(index))))
            }
            if !EntryName.isValid(utf8: UnsafeRawBufferPointer(record.cell(nameColumn))) {
                do throws(VaultError) { _ = try EntryName.validate(record.string(nameColumn)) } catch { throw .malformedInput("line \(record.line): \(error.description)") }
            }
            if !declined {
                declined = !output.add(name: .input(record.range(nameColumn)), created: now, modified: now,
                                       value: .input(record.range(valueColumn)), fields: &fields, in: record.allBytes)
            }
        }
        return !declined
    }

    /// The field columns of `header` (every column but `name` and `value`) and their names, trimmed
    /// once rather than on every row; a field named by two columns is refused (one of the two values
    /// was dropped without a word, where a JSON file that gives a key twice is refused).
    static func fieldColumns(_ header: [String], name: Int, value: Int) throws(VaultError) -> [(index: Int, name: String)] {
        let columns = header.enumerated().filter { $0.offset != name && $0.offset != value }.map { (index: $0.offset, name: $0.element.trimmed) }
        var seen: Swift.Set<String> = []
        for column in columns where !seen.insert(column.name).inserted {
            throw .malformedInput("line 1: the column '\(column.name)' is given twice; each field needs one column")
        }
        return columns
    }

    /// The entries of `vault` whose names start with `prefix` as vaultfile CSV: byte for byte what
    /// `export(_:)` writes of `sortedEntries`, and the same error.
    ///
    /// Two passes over the entries' bytes where they lie (`Vault.forEachEntryBytes`): the field
    /// names in use (a hash set of their bytes), then the rows, each entry's fields (stored in name
    /// order) met in step with the sorted columns. On binary data the output is wiped and the plain
    /// reference runs instead, so that the error names the same entry in the same words.
    static func export(_ vault: Vault, prefix: String) throws(VaultError) -> [UInt8] {
        // The field names: ASCII (`EntryName.validateField`), so byte order is `sorted()`'s order.
        var names: [UInt8] = []
        var distinct = ByteRanges(expected: 8)
        vault.forEachEntryBytes(withPrefix: prefix) { entry in
            for field in entry.fields {
                let start = names.count
                names.append(contentsOf: field.name.assumingMemoryBound(to: UInt8.self))
                let inserted = names.withUnsafeBytes { distinct.insert(start..<names.count, of: $0).inserted }
                if !inserted { names.removeSubrange(start...) }
            }
        }
        let fieldNames = distinct.ranges.map { Array(names[$0]) }.sorted { $0.lexicographicallyPrecedes($1) }
        var out = ExportBuffer(capacity: vault.storedRecordsByteCount + vault.count * (8 + fieldNames.count))
        out.append("name,value")
        for name in fieldNames {
            out.append(UInt8(ascii: ","))
            name.withUnsafeBytes { out.append($0) }
        }
        out.append("\r\n")
        var refused = false
        vault.forEachEntryBytes(withPrefix: prefix) { entry in
            guard !refused, UTF8Bytes.isText(entry.value) else { refused = true; return }
            appendCell(entry.name, to: &out)
            out.append(UInt8(ascii: ","))
            appendCell(entry.value, to: &out)
            var next = 0
            for column in fieldNames {
                out.append(UInt8(ascii: ","))
                guard next < entry.fields.count,
                      column.withUnsafeBytes({ compareBytes(entry.fields[next].name, $0) }) == 0 else { continue }
                let value = entry.fields[next].value
                next += 1
                guard UTF8Bytes.isText(value) else { refused = true; return }
                appendCell(value, to: &out)
            }
            out.append("\r\n")
        }
        guard refused else { return out.take() }
        out.wipe()
        return try export(vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) })
    }

    /// `appendCell(_:to:)` into an export's buffer. A cell that needs quoting goes through `CSV.quote`.
    private static func appendCell(_ text: UnsafeRawBufferPointer, to out: inout ExportBuffer) {
        let special = text.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard special || text.first == UInt8(ascii: " ") || text.last == UInt8(ascii: " ") else { return out.append(text) }
        var quoted = CSV.quote(String(decoding: text, as: UTF8.self))
        quoted.withUTF8 { out.append(UnsafeRawBufferPointer($0)) }
    }

    /// The entries as vaultfile CSV, one column per field name used by any entry; binary data is
    /// refused (the plain reference of `export(_:prefix:)`).
    ///
    /// Written into one byte buffer: a cell without a comma, quote, CR or LF and without a space at
    /// either end is copied as it is; only the others go through `CSV.quote` (the rows were built as
    /// strings and joined, 6.8× a `verify` at 100,000 entries).
    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let fieldNames = Set(entries.flatMap { $0.entry.fields.keys }).sorted()
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 64)
        out += (["name", "value"] + fieldNames).joined(separator: ",").utf8
        out += "\r\n".utf8
        for (name, entry) in entries {
            appendCell(name.utf8, to: &out)
            out.append(UInt8(ascii: ","))
            try appendText(entry.value, to: &out, name)
            for field in fieldNames {
                out.append(UInt8(ascii: ","))
                if let bytes = entry.fields[field] { try appendText(bytes, to: &out, "\(name)#\(field)") }
            }
            out += "\r\n".utf8
        }
        return out
    }

    /// Appends `bytes` as one CSV cell, or throws naming `name` when they are not text.
    private static func appendText(_ bytes: [UInt8], to out: inout [UInt8], _ name: @autoclosure () -> String) throws(VaultError) {
        guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil else {
            throw .malformedInput("'\(name())' holds binary data, which CSV cannot carry; export json instead")
        }
        appendCell(bytes, to: &out)
    }

    /// Appends UTF-8 text as one cell: as it is when nothing in it needs quoting, else `CSV.quote`.
    private static func appendCell(_ text: some BidirectionalCollection<UInt8>, to out: inout [UInt8]) {
        let special = text.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard special || text.first == UInt8(ascii: " ") || text.last == UInt8(ascii: " ") else {
            out.append(contentsOf: text)
            return
        }
        out += CSV.quote(String(decoding: text, as: UTF8.self)).utf8
    }
}
