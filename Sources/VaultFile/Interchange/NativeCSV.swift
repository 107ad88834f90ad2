// MARK: - vaultfile CSV

/// vaultfile CSV: header `name,value,FIELD…`; every other column is a field, empty cells are absent fields.
enum NativeCSV {
    /// The entries of a vaultfile CSV file, in file order.
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        let records = try CSV.records(bytes)
        guard let header = records.first else { return [] }
        let columns = CSV.columns(header.fields)
        guard let nameColumn = columns["name"], let valueColumn = columns["value"] else {
            throw .malformedInput("line 1: the header must name the columns 'name' and 'value'")
        }
        var result: [(String, Entry)] = []
        for record in records.dropFirst() {
            try CSV.checkWidth(record, header)
            var fields: [String: [UInt8]] = [:]
            for (index, column) in header.fields.enumerated() where index != nameColumn && index != valueColumn && !record.fields[index].isEmpty {
                fields[column.trimmed] = Array(record.fields[index].utf8)
            }
            let name = record.fields[nameColumn]
            do { _ = try EntryName.validate(name) } catch { throw .malformedInput("line \(record.line): \(error.description)") }
            result.append((name, Entry(value: Array(record.fields[valueColumn].utf8), fields: fields, created: now, modified: now)))
        }
        return result
    }

    /// The entries as vaultfile CSV, one column per field name used by any entry; binary data is refused.
    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let fieldNames = Set(entries.flatMap { $0.entry.fields.keys }).sorted()
        var out = (["name", "value"] + fieldNames).joined(separator: ",") + "\r\n"
        for (name, entry) in entries {
            var row = [CSV.quote(name), try text(entry.value, name)]
            for field in fieldNames {
                if let bytes = entry.fields[field] { row.append(try text(bytes, "\(name)#\(field)")) } else { row.append("") }
            }
            out += row.joined(separator: ",") + "\r\n"
        }
        return Array(out.utf8)
    }

    /// `bytes` as one CSV cell, or an error naming `name` when they are not text.
    private static func text(_ bytes: [UInt8], _ name: String) throws(VaultError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw .malformedInput("'\(name)' holds binary data, which CSV cannot carry; export json instead")
        }
        return CSV.quote(text)
    }
}
