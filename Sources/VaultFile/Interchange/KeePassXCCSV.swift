// MARK: - KeePassXC CSV

/// `keepassxc-cli export --format csv`: Group, Title, Username, Password, URL, Notes[, TOTP, Icon, Last Modified, Created].
enum KeePassXCCSV {
    /// The entries of a KeePassXC CSV export, named `Group/Title` (the root group dropped).
    static func parse(_ bytes: [UInt8], now: Int64, names: inout ImportedNameCleaner.Names) throws(VaultError) -> [(String, Entry)] {
        let records = try CSV.records(bytes)
        guard let header = records.first else { return [] }
        let columns = CSV.columns(header.fields)
        guard let titleColumn = columns["title"], let passwordColumn = columns["password"] else {
            throw .malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")
        }
        // The columns looked up once, not by name on every row.
        let groupColumn = columns["group"], createdColumn = columns["created"], modifiedColumn = columns["last modified"]
        let fieldColumns = [("username", "username"), ("url", "url"), ("notes", "notes"), ("totp", "totp")].compactMap { column, field in
            columns[column].map { (index: $0, field: field) }
        }
        var result: [(String, Entry)] = []
        result.reserveCapacity(records.count)
        for record in records.dropFirst() {
            try CSV.checkWidth(record, header)
            func cell(_ index: Int?) -> String? {
                guard let index, !record.fields[index].isEmpty else { return nil }
                return record.fields[index]
            }
            // "Root/Email/Work" → "Email/Work"; the database root adds nothing to a name.
            var groups = (cell(groupColumn) ?? "").split(separator: "/").map(String.init)
            if groups.first == "Root" || groups.first == "Passwords" { groups.removeFirst() }
            let title = record.fields[titleColumn].isEmpty ? "untitled" : record.fields[titleColumn]
            let name = names.name(fromParts: groups + [title])
            var fields: [String: [UInt8]] = [:]
            for (index, field) in fieldColumns {
                if let text = cell(index) { fields[field] = Array(text.utf8) }
            }
            let created = cell(createdColumn).flatMap(Timestamps.parse) ?? now
            let modified = cell(modifiedColumn).flatMap(Timestamps.parse) ?? created
            if !EntryName.isValid(name) { do { _ = try EntryName.validate(name) } catch { throw .malformedInput("line \(record.line): \(error.description)") } }
            result.append((name, Entry(value: Array(record.fields[passwordColumn].utf8), fields: fields, created: created, modified: modified)))
        }
        return result
    }
}
