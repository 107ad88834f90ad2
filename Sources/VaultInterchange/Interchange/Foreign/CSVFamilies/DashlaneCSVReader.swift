import VaultModel

// MARK: - Dashlane CSV

/// `--format dashlane-csv`: the CSV files of Dashlane's export ZIP, each told by its header, or
/// the older credentials export without a header.
///
/// - `credentials.csv`: `username,username2,username3,title,password,note,url,category,otpSecret`
///   (`otpUrl` in later exports): a login each row, its category a folder;
/// - `securenotes.csv`: `title,note`: a note each row (the title its name, the note its notes);
/// - `payments.csv` (`type,account_name,account_holder,cc_number,code,expiration_month,…`),
///   `ids.csv` (`type,number,name,issue_date,expiration_date,place_of_issue,state`) and
///   `personalInfo.csv` (`type,title,first_name,…,item_name,…`): an entry each row, named by its
///   `account_name`, `name` or `item_name` (else its type), every other cell a field under its
///   column's name (bitwarden/clients, libs/importer/src/importers/dashlane/types/dashlane-csv-types.ts);
/// - no header: rows `title, url, login, password, note`, perhaps ragged (fewer cells are padded;
///   more cells are kept as fields `column6`…); a row of fewer than 3 cells is refused unless a
///   row of the file has 4 or more (plain text is no such export). A first row made of Dashlane's column names is
///   never read as such a row: it is refused when no kind above has it.
enum DashlaneCSVReader {
    static let headerForm = ["username", "username2", "username3", "title", "password", "note", "url", "category", "otpsecret", "otpurl"]

    /// The files of Dashlane's export, by the columns their header has.
    enum Kind: Equatable {
        case credentials, secureNotes, payments, ids, personalInfo

        /// The kind whose header `header` is, or nil.
        init?(_ header: ForeignCSVHeader) {
            func has(_ name: String) -> Bool { header.index(name) != nil }
            if has("username") && has("password") && has("title") { self = .credentials }
            else if has("cc_number") || has("account_name") { self = .payments }
            else if has("number") && (has("issue_date") || has("place_of_issue")) { self = .ids }
            else if has("first_name") || has("item_name") { self = .personalInfo }
            else if has("title") && has("note") && !has("password") { self = .secureNotes }
            else { return nil }
        }

        /// The columns that name an entry of this kind, the first not empty taken.
        var nameColumns: [String] {
            switch self {
            case .credentials, .secureNotes: return ["title"]
            case .payments: return ["account_name", "name", "type"]
            case .ids: return ["name", "type", "number"]
            case .personalInfo: return ["item_name", "type"]
            }
        }
    }

    /// Every column name of Dashlane's CSV files (lower case): a first row made of them is a header.
    static let columnNames: Set<String> = Set(headerForm).union([
        "type", "account_name", "account_holder", "name", "cc_number", "code", "expiration_month", "expiration_year", "routing_number",
        "account_number", "country", "issuing_bank", "number", "issue_date", "expiration_date", "place_of_issue", "state",
        "first_name", "middle_name", "last_name", "login", "date_of_birth", "place_of_birth", "email", "email_type", "item_name",
        "phone_number", "address", "city", "zip", "address_recipient", "address_building", "address_apartment", "address_floor",
        "address_door_code", "job_title",
    ])

    /// Whether `cells` (a first row) are Dashlane column names: two or more, each one of them.
    static func isDashlaneHeader(_ cells: [String]) -> Bool {
        let names = cells.map { $0.lowercased().trimmed }.filter { !$0.isEmpty }
        return names.count >= 2 && names.allSatisfy(columnNames.contains)
    }

    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "dashlane-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header: ForeignCSVHeader?
        var kind = Kind.credentials
        var extra: [Int] = []
        var first = true
        // The header form's columns, found once by name (not at every row).
        var category: Int?, title: Int?, password: Int?, username: Int?, url: Int?, note: Int?, otp: Int?, username2: Int?, username3: Int?
        var names: [Int] = []
        var sawFullRow = false, firstShortRow: (line: Int, cells: Int)?
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            if first {
                first = false
                let cells = record.strings
                let found = ForeignCSVHeader(cells)
                if let known = Kind(found) {
                    (header, kind) = (found, known)
                    (category, title, password, username) = (found.index("category"), found.index("title"), found.index("password"), found.index("username"))
                    (url, note, otp) = (found.index("url"), found.index("note"), found.index(anyOf: ["otpsecret", "otpurl"]))
                    (username2, username3) = (found.index("username2"), found.index("username3"))
                    names = kind.nameColumns.compactMap { found.index($0) }
                    switch kind {
                    case .credentials: extra = found.unknown(Set(headerForm))
                    case .secureNotes: extra = found.unknown(["title", "note"])
                    case .payments, .ids, .personalInfo: extra = found.unknown(["url", "note"])
                    }
                    return
                }
                if isDashlaneHeader(cells) {
                    throw .malformedInput("line 1: a header of Dashlane's column names (\(cells.joined(separator: ","))), but of none of the files of "
                                          + "Dashlane's export that vaultfile reads (credentials, secure notes, payments, IDs, personal info)")
                }
            }
            // A shorter row reads as padded with empty cells (`ForeignCSVRow`).
            let row = ForeignCSVRow(line: record.line, record: record)
            guard let header else {
                // A headerless row has title, url and login at least (cold60 M3: any text made
                // one-cell entries); shorter rows are Dashlane's only in a file with a full one.
                if row.count >= 4 { sawFullRow = true } else if row.count < 3, firstShortRow == nil { firstShortRow = (record.line, row.count) }
                var item = ForeignItem(title: row[0] ?? "", value: row.bytes(3))
                if let url = row[1] { item.urls = [url] }
                item.username = row[2]
                item.notes = row[4]
                for index in 5..<max(row.count, 5) where row.has(index) {
                    item.fields.append(ForeignField(label: "column\(index + 1)", value: row.bytes(index), protected: false))
                }
                result.add(&item, to: sink)
                return
            }
            guard row.count <= header.names.count else {
                throw .malformedInput("line \(record.line): \(row.count) columns, the Dashlane CSV header has \(header.names.count)")
            }
            var item: ForeignItem
            var columns = extra
            switch kind {
            case .credentials:
                item = ForeignItem(folders: row[category].map { [$0] } ?? [], title: row[title] ?? "", value: row.bytes(password))
                item.username = row[username]
                item.totp = row[otp]
                for (label, column) in [("username2", username2), ("username3", username3)] where row.has(column) {
                    item.fields.append(ForeignField(label: label, value: row.bytes(column), protected: false))
                }
            case .secureNotes, .payments, .ids, .personalInfo:
                // Named by the first of its name columns that is not empty: that cell is no field then.
                let named = names.first(where: row.has)
                item = ForeignItem(title: named.flatMap { row[$0] } ?? "")
                if let named { columns.removeAll { $0 == named } }
            }
            if let url = row[url] { item.urls = [url] }
            item.notes = row[note]
            if !columns.isEmpty { item.fields += ForeignCSV.fields(row, columns: columns, header: header) }
            result.add(&item, to: sink)
        }
        guard !first else { throw .malformedInput("the Dashlane CSV file is empty") }
        if let short = firstShortRow, !sawFullRow {
            throw .malformedInput("line \(short.line): \(short.cells == 1 ? "1 cell" : "\(short.cells) cells"), and no row has 4 or more: "
                                  + "not Dashlane's export without a header, whose rows are title, url, login, password, note")
        }
        return result
    }
}
