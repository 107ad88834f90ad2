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

    /// The entries of a KeePassXC CSV export, named `Group/Title` (the root group dropped).
    ///
    /// Row by row as the scan reads them (`CSV.forEachRecord`): cells taken as bytes, times parsed
    /// where they lie, strings made only of the group and the title.
    static func parse(_ bytes: [UInt8], now: Int64, names: inout ImportedNameCleaner.Names) throws(VaultError) -> [(String, Entry)] {
        var list = ImportedEntryList()
        _ = try read(bytes, now: now, names: &names, into: &list)  // the list takes every entry
        return list.entries
    }

    /// What `parse(_:now:names:)` reads, each entry written as its record (`ImportRecordWriter`), by
    /// the same rows; the error `parse` throws, or nil when the writer declines an entry (a
    /// non-ASCII name, a limit: `parse` then reads them). `ImportRecordsTests.test_keePassXCRecords_matchTheEntries`
    /// ties the two.
    static func records(_ bytes: [UInt8], now: Int64, names: ImportedNameCleaner.Names) throws(VaultError) -> (records: StoredRecords, names: ImportedNameCleaner.Names)? {
        guard var writer = ImportRecordWriter(capacity: bytes.count) else { return nil }
        var names = names
        guard try read(bytes, now: now, names: &names, into: &writer) else { return nil }
        return (writer.records(), names)
    }

    /// Reads every row into `output`; false when it declined an entry (the rows after it are still
    /// read, for their errors, and not given to it).
    private static func read(_ bytes: [UInt8], now: Int64, names: inout ImportedNameCleaner.Names,
                             into output: inout some ImportedEntrySink) throws(VaultError) -> Bool {
        var width: Int?
        var titleColumn = 0, passwordColumn = 0
        var groupColumn: Int?, createdColumn: Int?, modifiedColumn: Int?
        var fieldColumns: [(index: Int, field: StaticString)] = []
        var fields: [ImportField] = []
        var declined = false
        var times = Timestamps.Cache()
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            guard let width else {
                let header = record.strings
                width = header.count
                let columns = CSV.columns(header)
                guard let title = columns["title"], let password = columns["password"] else {
                    throw .malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")
                }
                (titleColumn, passwordColumn) = (title, password)
                // The columns looked up once, not by name on every row.
                (groupColumn, createdColumn, modifiedColumn) = (columns["group"], columns["created"], columns["last modified"])
                fieldColumns = [("username", "username"), ("url", "url"), ("notes", "notes"), ("totp", "totp")].compactMap { column, field in
                    columns[column].map { (index: $0, field: field) }
                }
                return
            }
            try CSV.checkWidth(line: record.line, columns: record.count, header: width)
            func present(_ index: Int?) -> Int? {
                guard let index, !record.isEmpty(index) else { return nil }
                return index
            }
            // "Root/Email/Work" → "Email/Work"; the database root adds nothing to a name. A group
            // that is the root alone (most rows) is no part: no split, no strings.
            var groups: [String] = []
            if let group = present(groupColumn), !Self.isRootAlone(record.cell(group)) {
                groups = record.string(group).split(separator: "/").map(String.init)
                if groups.first == "Root" || groups.first == "Passwords" { groups.removeFirst() }
            }
            let name: ImportBytes
            if groups.isEmpty && !record.isEmpty(titleColumn) {
                // A title outside groups, by its bytes: a string is made only of a renamed one.
                name = names.changedName(ofTitle: UnsafeRawBufferPointer(record.cell(titleColumn))).map(ImportBytes.string) ?? .input(record.range(titleColumn))
            } else {
                let title = record.isEmpty(titleColumn) ? "untitled" : record.string(titleColumn)
                name = .string(names.name(fromParts: groups.isEmpty ? [title] : groups + [title]))
            }
            fields.removeAll(keepingCapacity: true)
            for (index, field) in fieldColumns where !record.isEmpty(index) {
                fields.append(ImportField(name: .literal(field), value: .input(record.range(index))))
            }
            let created = present(createdColumn).flatMap { times.parse(utf8: record.cell($0)) } ?? now
            let modified = present(modifiedColumn).flatMap { times.parse(utf8: record.cell($0)) } ?? created
            if !name.withBytes(in: record.allBytes, EntryName.isValid(utf8:)) {
                do throws(VaultError) { _ = try EntryName.validate(name.string(in: record.allBytes)) } catch { throw .malformedInput("line \(record.line): \(error.description)") }
            }
            if !declined {
                declined = !output.add(name: name, created: created, modified: modified, value: .input(record.range(passwordColumn)),
                                       fields: &fields, in: record.allBytes)
            }
        }
        return !declined
    }

    /// Whether a group cell is `Root` or `Passwords` alone: what the split and the root's removal
    /// turn into no group at all.
    private static func isRootAlone(_ cell: UnsafeBufferPointer<UInt8>) -> Bool {
        func equals(_ text: StaticString) -> Bool {
            cell.count == text.utf8CodeUnitCount && memcmp(cell.baseAddress!, text.utf8Start, cell.count) == 0
        }
        return equals("Root") || equals("Passwords")
    }
}
