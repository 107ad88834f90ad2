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
    /// default is counted as not kept, and entries in the recycle bin (the group "Recycle Bin" right
    /// under the root) are not imported and counted.
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: InterchangeFormat.keepassxcCSV.rawValue)
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var width: Int?
        var title = 0, password = 0
        // The other columns, found once by name (not at every row).
        var group: Int?, username: Int?, url: Int?, notes: Int?, totp: Int?, icon: Int?, created: Int?, modified: Int?
        var times = Timestamps.Cache()
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            guard let width else {
                let header = record.strings
                width = header.count
                let columns = CSV.columns(header)
                guard let titleColumn = columns["title"], let passwordColumn = columns["password"] else {
                    throw .malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")
                }
                (title, password) = (titleColumn, passwordColumn)
                (group, username, url, notes) = (columns["group"], columns["username"], columns["url"], columns["notes"])
                (totp, icon, created, modified) = (columns["totp"], columns["icon"], columns["created"], columns["last modified"])
                return
            }
            try CSV.checkWidth(line: record.line, columns: record.count, header: width)
            func text(_ index: Int?) -> String? {
                guard let index, !record.isEmpty(index) else { return nil }
                return record.string(index)
            }
            // "Root/Email/Work" → "Email/Work"; the database root adds nothing to a name.
            var folders = text(group).map { $0.split(separator: "/").map(String.init) } ?? []
            // KeePassXC's recycle bin, "Recycle Bin" right under the root group (the path's first
            // part): what the user deleted stays deleted, counted as the XML and KDBX readers do.
            if folders.count >= 2, folders[1] == "Recycle Bin" { result.notKeep("entries in KeePass's recycle bin", reason: .deletedInSource); return }
            if folders.first == "Root" || folders.first == "Passwords" { folders.removeFirst() }
            var item = ForeignItem(folders: folders, title: record.isEmpty(title) ? "" : record.string(title),
                                   value: Array(record.cell(password)))
            item.username = text(username)
            item.urls = text(url).map { [$0] } ?? []
            item.notes = text(notes)
            item.totp = text(totp)
            item.created = created.flatMap { record.isEmpty($0) ? nil : times.parse(utf8: record.cell($0)) }
            item.modified = modified.flatMap { record.isEmpty($0) ? nil : times.parse(utf8: record.cell($0)) } ?? item.created
            // The default icon (0, most entries) is kept without a string.
            if let icon, !record.isEmpty(icon), !record.cell(icon).elementsEqual([UInt8(ascii: "0")]) { result.notKeep("KeePassXC's entry icons") }
            result.add(&item, to: sink)
        }
        return result
    }
}
