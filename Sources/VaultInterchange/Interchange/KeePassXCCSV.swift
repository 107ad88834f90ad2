#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - KeePassXC CSV

/// `keepassxc-cli export --format csv`: Group, Title, Username, Password, URL, Notes[, TOTP, Icon, Last Modified, Created].
enum KeePassXCCSV {
    /// The items of a KeePassXC CSV export for the one builder (`ForeignImport.entries`), which
    /// names, numbers and fills them as it does for every other manager's export: Group (the root
    /// group dropped) → folders, Title, Password → value, Username, URL, Notes, TOTP (a bare Base32
    /// secret made an otpauth:// URI by the builder), the two times; an entry icon other than the
    /// default is counted as not kept.
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: InterchangeFormat.keepassxcCSV.rawValue)
        var width: Int?
        var title = 0, password = 0
        var columns: [String: Int] = [:]
        var times = Timestamps.Cache()
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            guard let width else {
                let header = record.strings
                width = header.count
                columns = CSV.columns(header)
                guard let titleColumn = columns["title"], let passwordColumn = columns["password"] else {
                    throw .malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")
                }
                (title, password) = (titleColumn, passwordColumn)
                return
            }
            try CSV.checkWidth(line: record.line, columns: record.count, header: width)
            func text(_ name: String) -> String? {
                guard let index = columns[name], !record.isEmpty(index) else { return nil }
                return record.string(index)
            }
            // "Root/Email/Work" → "Email/Work"; the database root adds nothing to a name.
            var folders = (text("group") ?? "").split(separator: "/").map(String.init)
            if folders.first == "Root" || folders.first == "Passwords" { folders.removeFirst() }
            var item = ForeignItem(folders: folders, title: record.isEmpty(title) ? "" : record.string(title),
                                   value: Array(record.cell(password)))
            item.username = text("username")
            item.urls = text("url").map { [$0] } ?? []
            item.notes = text("notes")
            item.totp = text("totp")
            item.created = columns["created"].flatMap { record.isEmpty($0) ? nil : times.parse(utf8: record.cell($0)) }
            item.modified = columns["last modified"].flatMap { record.isEmpty($0) ? nil : times.parse(utf8: record.cell($0)) } ?? item.created
            if let icon = text("icon"), icon != "0" { result.notKeep("KeePassXC's entry icons") }
            result.items.append(item)
        }
        return result
    }
}
