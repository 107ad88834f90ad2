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
        var result: [(String, Entry)] = []
        for record in records.dropFirst() {
            try CSV.checkWidth(record, header)
            func cell(_ column: String) -> String? {
                guard let index = columns[column], !record.fields[index].isEmpty else { return nil }
                return record.fields[index]
            }
            // "Root/Email/Work" → "Email/Work"; the database root adds nothing to a name.
            var groups = (cell("group") ?? "").split(separator: "/").map(String.init)
            if groups.first == "Root" || groups.first == "Passwords" { groups.removeFirst() }
            let title = record.fields[titleColumn].isEmpty ? "untitled" : record.fields[titleColumn]
            let name = names.name(fromParts: groups + [title])
            var fields: [String: [UInt8]] = [:]
            for (column, field) in [("username", "username"), ("url", "url"), ("notes", "notes"), ("totp", "totp")] {
                if let text = cell(column) { fields[field] = Array(text.utf8) }
            }
            let created = cell("created").flatMap(Timestamps.parse) ?? now
            let modified = cell("last modified").flatMap(Timestamps.parse) ?? created
            do { _ = try EntryName.validate(name) } catch { throw .malformedInput("line \(record.line): \(error.description)") }
            result.append((name, Entry(value: Array(record.fields[passwordColumn].utf8), fields: fields, created: created, modified: modified)))
        }
        return result
    }
}
