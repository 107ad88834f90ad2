#if canImport(Glibc)
import Glibc
#endif
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

/// One row's cells where the scan keeps them (`CSVRecord`), valid during the call that receives
/// it; a cell past the row's end (a ragged row) reads as empty. Text or bytes are made only of the
/// cells a reader uses: every cell of every row made a string took a third of an import.
struct ForeignCSVRow {
    let line: Int
    fileprivate let record: CSVRecord

    /// The row of `record`, which starts on `line`.
    init(line: Int, record: CSVRecord) {
        self.line = line
        self.record = record
    }

    /// The number of cells the row has.
    var count: Int { record.count }

    /// Cell `index` when the row has it and it is not empty.
    subscript(_ index: Int?) -> String? {
        guard let index, index < record.count, !record.isEmpty(index) else { return nil }
        return record.string(index)
    }

    /// Cell `index`'s bytes, empty when the row lacks it (a secret: no string is made of it).
    func bytes(_ index: Int?) -> [UInt8] {
        guard let index, index < record.count else { return [] }
        return record.array(index)
    }

    /// Whether cell `index` is there and not empty.
    func has(_ index: Int?) -> Bool {
        guard let index, index < record.count else { return false }
        return !record.isEmpty(index)
    }

    /// Whether cell `index` says yes (`ForeignCSV.isYes`), without a string for the common
    /// empty, `0` and `false` cells.
    func isYes(_ index: Int?) -> Bool {
        guard let index, index < record.count else { return false }
        let cell = record.cell(index)
        if cell.isEmpty || (cell.count == 1 && cell[0] == UInt8(ascii: "0")) || cell.elementsEqual("false".utf8) { return false }
        return ForeignCSV.isYes(record.string(index))
    }
}

enum ForeignCSV {
    /// Reads the header with `readHeader` (which throws when it is not the format's) and calls
    /// `body` with each row after it. Rows shorter than the header are padded when `ragged` (Chrome,
    /// Dashlane), else refused; longer rows are refused, naming the line.
    /// Once `sink` declined the stream, the rest is not read: the build gives nothing from this read
    /// (`ForeignBuilder.build(streaming:)`), and a read that follows (the plan's, or the whole
    /// file's) finds what the rest holds, errors included.
    static func forEachRow(_ bytes: some CSVSource, format: String, ragged: Bool, until sink: ForeignItemSink? = nil,
                           header readHeader: ([String]) throws(VaultError) -> Void,
                           _ body: (ForeignCSVRow) throws(VaultError) -> Void) throws(VaultError) {
        var width: Int?
        var stopped = false
        do throws(VaultError) {
            // Once stopped, the rest of the file is thrown away (errors too): not read or scanned either.
            try CSV.forEachRecord(bytes, until: { stopped }) { (record) throws(VaultError) in
                guard let width else {
                    let names = record.strings
                    try readHeader(names)
                    width = names.count
                    return
                }
                if let sink, sink.declined {
                    stopped = true
                    throw .malformedInput("the stream was declined")  // caught below: the read ends here
                }
                // A shorter row reads as padded with empty cells (`ForeignCSVRow`), when `ragged`.
                if record.count > width || (record.count < width && !ragged) {
                    throw .malformedInput("line \(record.line): \(record.count) columns, the \(format) header has \(width)")
                }
                try body(ForeignCSVRow(line: record.line, record: record))
            }
        } catch {
            guard stopped else { throw error }
            return
        }
        guard width != nil else { throw .malformedInput("the \(format) file is empty: not even a header line") }
    }

    /// How many records `input` holds at most (its line ends, and one more; 0 for a file read a
    /// window at a time): the readers reserve their items once, where growing the array copied
    /// every item held so far, twice the memory for a moment.
    static func expectedRows(_ input: some CSVSource) -> Int { input.expectedRows }

    /// Throws unless the header holds every column in `required`, naming the format and the columns it lacks.
    static func require(_ required: [String], in header: ForeignCSVHeader, format: String) throws(VaultError) {
        let missing = required.filter { header.index($0) == nil }
        guard missing.isEmpty else {
            // A first line of values (perhaps Dashlane's older export, without a header) is named
            // by import's hint (`FormatSniffer.startsWithRowOfValues`).
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

    /// `time(_:)` of cell `index`; a cell of at most 18 ASCII digits (Firefox's milliseconds: most)
    /// read from its bytes, without a string.
    static func time(_ row: ForeignCSVRow, _ index: Int?) -> Int64? {
        guard let index, index < row.record.count, !row.record.isEmpty(index) else { return nil }
        let cell = row.record.cell(index)
        if cell.count <= 18, cell.allSatisfy({ (0x30...0x39).contains($0) }) {
            return cell.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        }
        return time(row.record.string(index))
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
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "chrome-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        // The columns, found once by name (not at every row).
        var name: Int?, url: Int?, username: Int?, password: Int?, note: Int?
        let blank = ForeignItem()  // each row's item copied from it (`ForeignItem.init` builds one and copies it)
        try ForeignCSV.forEachRow(bytes, format: "Chrome CSV", ragged: true, until: sink, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "username", "password"], in: header, format: "Chrome CSV")
            extra = header.unknown(["name", "url", "username", "password", "note"])
            (name, url, username, password, note) = (header.index("name"), header.index("url"), header.index("username"),
                                                      header.index("password"), header.index("note"))
        }) { row in
            var item = blank
            item.title = row[name] ?? ""
            item.value = row.bytes(password)
            item.username = row[username]
            if let url = row[url] { item.urls = [url] }
            item.notes = row[note]
            if !extra.isEmpty { item.fields = ForeignCSV.fields(row, columns: extra, header: header) }
            result.add(&item, to: sink)
        }
        return result
    }
}

/// `--format firefox-csv`: Firefox's about:logins > Export Logins: `url, username, password,
/// httpRealm, formActionOrigin, guid, timeCreated, timeLastUsed, timePasswordChanged` (times in
/// milliseconds). No title: the builder takes the site.
enum FirefoxCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "firefox-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        var notKept: [String: Int] = [:]
        var guids = 0, formActions = 0, lastUses = 0
        // The columns, found once by name (not at every row).
        var url: Int?, username: Int?, password: Int?, created: Int?, changed: Int?, realm: Int?, guid: Int?, formAction: Int?, lastUsed: Int?
        let blank = ForeignItem()  // each row's item copied from it (`ForeignItem.init` builds one and copies it)
        try ForeignCSV.forEachRow(bytes, format: "Firefox CSV", ragged: true, until: sink, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "username", "password"], in: header, format: "Firefox CSV")
            extra = header.unknown(["url", "username", "password", "httprealm", "formactionorigin", "guid",
                                    "timecreated", "timelastused", "timepasswordchanged"])
            (url, username, password) = (header.index("url"), header.index("username"), header.index("password"))
            (created, changed, realm) = (header.index("timecreated"), header.index("timepasswordchanged"), header.index("httprealm"))
            (guid, formAction, lastUsed) = (header.index("guid"), header.index("formactionorigin"), header.index("timelastused"))
        }) { row in
            var item = blank
            item.value = row.bytes(password)
            item.sourceHasNoTitles = true
            item.username = row[username]
            if let url = row[url] { item.urls = [url] }
            item.created = ForeignCSV.time(row, created)
            item.modified = ForeignCSV.time(row, changed) ?? item.created
            if !extra.isEmpty { item.fields = ForeignCSV.fields(row, columns: extra, header: header) }
            // The realm of an HTTP authentication login says which prompt it fills: kept.
            if let realm = row[realm] { item.extras.append((label: "http_realm", value: realm)) }
            if row.has(guid) { guids += 1 }
            if row.has(formAction) { formActions += 1 }
            if row.has(lastUsed) { lastUses += 1 }
            result.add(&item, to: sink)
        }
        for (what, count) in [("Firefox's guid column", guids), ("Firefox's formActionOrigin column", formActions),
                              ("Firefox's timeLastUsed column", lastUses)] where count > 0 {
            notKept[what] = count
        }
        result.notKept = notKept
        return result
    }
}
