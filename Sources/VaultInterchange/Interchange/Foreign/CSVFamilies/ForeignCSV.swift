import VaultModel

// MARK: - CSV exports of other password managers

/// The header of a peer's CSV export and the rows under it, read by the one CSV scanner
/// (`CSV.forEachRecord`). Columns are found by name (lower-cased, trimmed), so a reordered or
/// extended export still reads; each reader says which columns it knows, and `unknown` lists the
/// others, which the readers keep as fields (nothing dropped unseen).
struct ForeignCSVHeader {
    /// The header's names as written.
    let names: [String]
    /// Lower-cased, trimmed name → the first column of that name.
    let columns: [String: Int]

    init(_ names: [String]) {
        self.names = names
        columns = CSV.columns(names)
    }

    /// The column named `name` (lower case), if the header has it.
    func index(_ name: String) -> Int? { columns[name] }

    /// The first of `names` the header has.
    func index(anyOf names: [String]) -> Int? { names.lazy.compactMap { columns[$0] }.first }

    /// The columns whose lower-cased names are not in `known`, in header order.
    func unknown(_ known: Set<String>) -> [Int] {
        names.indices.filter { !known.contains(names[$0].lowercased().trimmed) && !names[$0].trimmed.isEmpty }
    }
}

/// One row's cells as text; a ragged row is padded with empty cells.
struct ForeignCSVRow {
    let line: Int
    let cells: [String]

    /// Cell `index` when the row has it and it is not empty.
    subscript(_ index: Int?) -> String? {
        guard let index, index < cells.count, !cells[index].isEmpty else { return nil }
        return cells[index]
    }
}

enum ForeignCSV {
    /// Reads the header with `readHeader` (which throws when it is not the format's) and calls
    /// `body` with each row after it. Rows shorter than the header are padded when `ragged` (Chrome,
    /// Dashlane), else refused; longer rows are refused, naming the line.
    static func forEachRow(_ bytes: [UInt8], format: String, ragged: Bool,
                           header readHeader: ([String]) throws(VaultError) -> Void,
                           _ body: (ForeignCSVRow) throws(VaultError) -> Void) throws(VaultError) {
        var width: Int?
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            guard let width else {
                let names = record.strings
                try readHeader(names)
                width = names.count
                return
            }
            var cells = record.strings
            if cells.count < width && ragged { cells += repeatElement("", count: width - cells.count) }
            if cells.count != width {
                throw .malformedInput("line \(record.line): \(cells.count) columns, the \(format) header has \(width)")
            }
            try body(ForeignCSVRow(line: record.line, cells: cells))
        }
        guard width != nil else { throw .malformedInput("the \(format) file is empty: not even a header line") }
    }

    /// Throws unless the header holds every column in `required`, naming the format and the columns it lacks.
    static func require(_ required: [String], in header: ForeignCSVHeader, format: String) throws(VaultError) {
        let missing = required.filter { header.index($0) == nil }
        guard missing.isEmpty else {
            throw .malformedInput("line 1: not a \(format) export (no \(missing.joined(separator: ", ")) column\(missing.count == 1 ? "" : "s") in the header)")
        }
    }

    /// The cells of `columns` as fields labelled by their header names.
    static func fields(_ row: ForeignCSVRow, columns: [Int], header: ForeignCSVHeader) -> [ForeignField] {
        columns.compactMap { index in row[index].map { ForeignField(label: header.names[index].trimmed, value: Array($0.utf8), protected: false) } }
    }

    /// Whether a cell says yes: `1`, `true`, `yes` (any case).
    static func isYes(_ text: String?) -> Bool {
        guard let text else { return false }
        return ["1", "true", "yes", "y"].contains(text.trimmed.lowercased())
    }

    /// Milliseconds since 1970 from a cell of digits (Firefox), or an ISO 8601 time.
    static func time(_ text: String?) -> Int64? {
        guard let text = text?.trimmed, !text.isEmpty else { return nil }
        if let number = Int64(text) { return number }
        return Timestamps.parse(text)
    }
}

// MARK: - Chrome and Firefox

/// `--format chrome-csv`: what Chrome (and Edge, Brave, Opera) write from Settings > Passwords >
/// Export: `name,url,username,password` and, since Chrome 118, `note`. Rows of an older build in a
/// newer file are ragged (no note cell): padded.
enum ChromeCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "chrome-csv")
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        try ForeignCSV.forEachRow(bytes, format: "Chrome CSV", ragged: true, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "username", "password"], in: header, format: "Chrome CSV")
            extra = header.unknown(["name", "url", "username", "password", "note"])
        }) { row in
            var item = ForeignItem(title: row[header.index("name")] ?? "", value: Array((row[header.index("password")] ?? "").utf8))
            item.username = row[header.index("username")]
            if let url = row[header.index("url")] { item.urls = [url] }
            item.notes = row[header.index("note")]
            item.fields = ForeignCSV.fields(row, columns: extra, header: header)
            result.items.append(item)
        }
        return result
    }
}

/// `--format firefox-csv`: Firefox's about:logins > Export Logins: `url, username, password,
/// httpRealm, formActionOrigin, guid, timeCreated, timeLastUsed, timePasswordChanged` (times in
/// milliseconds). No title: the builder takes the site.
enum FirefoxCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "firefox-csv")
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        var notKept: [String: Int] = [:]
        try ForeignCSV.forEachRow(bytes, format: "Firefox CSV", ragged: true, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "username", "password"], in: header, format: "Firefox CSV")
            extra = header.unknown(["url", "username", "password", "httprealm", "formactionorigin", "guid",
                                    "timecreated", "timelastused", "timepasswordchanged"])
        }) { row in
            var item = ForeignItem(value: Array((row[header.index("password")] ?? "").utf8))
            item.username = row[header.index("username")]
            if let url = row[header.index("url")] { item.urls = [url] }
            item.created = ForeignCSV.time(row[header.index("timecreated")])
            item.modified = ForeignCSV.time(row[header.index("timepasswordchanged")]) ?? item.created
            item.fields = ForeignCSV.fields(row, columns: extra, header: header)
            // The realm of an HTTP authentication login says which prompt it fills: kept.
            if let realm = row[header.index("httprealm")] { item.extras.append((label: "http_realm", value: realm)) }
            func lost(_ what: String, _ column: String) { if row[header.index(column)] != nil { notKept[what, default: 0] += 1 } }
            lost("Firefox's guid column", "guid")
            lost("Firefox's formActionOrigin column", "formactionorigin")
            lost("Firefox's timeLastUsed column", "timelastused")
            result.items.append(item)
        }
        result.notKept = notKept
        return result
    }
}
