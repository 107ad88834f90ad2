import VaultModel

// MARK: - Bitwarden CSV

/// `--format bitwarden-csv`: Bitwarden's unencrypted CSV export. A personal vault:
/// `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`;
/// an organisation's: `collections` instead of `folder` and `favorite`. `fields` holds the custom
/// fields as `name: value` lines; `login_uri` holds the URIs separated by commas.
enum BitwardenCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "bitwarden-csv")
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        var notKept: [String: Int] = [:]
        try ForeignCSV.forEachRow(bytes, format: "Bitwarden CSV", ragged: false, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["type", "name", "login_password"], in: header, format: "Bitwarden CSV")
            extra = header.unknown(["folder", "collections", "favorite", "type", "name", "notes", "fields", "reprompt",
                                    "login_uri", "login_username", "login_password", "login_totp"])
        }) { row in
            var folders: [String] = []
            if let folder = row[header.index("folder")] {
                folders = folder.split(separator: "/").map(String.init)
            } else if let collections = row[header.index("collections")] {
                let all = collections.split(separator: ",").map { String($0).trimmed }
                folders = all.first.map { $0.split(separator: "/").map(String.init) } ?? []
                if all.count > 1 { notKept["Bitwarden's second and further collections of an item", default: 0] += 1 }
            }
            var item = ForeignItem(folders: folders, title: row[header.index("name")] ?? "",
                                   value: Array((row[header.index("login_password")] ?? "").utf8))
            item.username = row[header.index("login_username")]
            item.urls = (row[header.index("login_uri")] ?? "").split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }
            item.notes = row[header.index("notes")]
            item.totp = row[header.index("login_totp")]
            if let fields = row[header.index("fields")] { item.fields = customFields(fields) }
            item.fields += ForeignCSV.fields(row, columns: extra, header: header)
            if ForeignCSV.isYes(row[header.index("favorite")]) { item.extras.append((label: "favorite", value: "yes")) }
            if ForeignCSV.isYes(row[header.index("reprompt")]) { notKept["Bitwarden's master-password re-prompt", default: 0] += 1 }
            if let type = row[header.index("type")], type != "login", type != "note" {
                item.extras.append((label: "bitwarden_type", value: type))
            }
            result.items.append(item)
        }
        result.notKept = notKept
        return result
    }

    /// Bitwarden's `fields` cell: one `name: value` line per field; a line without `: ` continues
    /// the value before it (a value of several lines).
    static func customFields(_ text: String) -> [ForeignField] {
        var fields: [ForeignField] = []
        // "\r\n" is one Character in Swift: split on it as on "\n" (a cell written on Windows).
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if let separator = line.firstRange(of: ": ") {
                fields.append(ForeignField(label: String(line[..<separator.lowerBound]), value: Array(line[separator.upperBound...].utf8), protected: false))
            } else if !fields.isEmpty {
                fields[fields.count - 1].value += Array(("\n" + line).utf8)
            } else if !line.isEmpty {
                fields.append(ForeignField(label: "fields", value: Array(line.utf8), protected: false))
            }
        }
        return fields
    }
}

// MARK: - 1Password CSV

/// `--format 1password-csv`: 1Password 8's CSV export, `Title,Url,Username,Password,OTPAuth,
/// Favorite,Archived,Tags,Notes`. Older 1Password CSVs, whose columns the user chose, read by the
/// same names (`website` for the URL, `one-time password` for the TOTP); other columns become fields.
enum OnePasswordCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "1password-csv")
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        try ForeignCSV.forEachRow(bytes, format: "1Password CSV", ragged: false, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["title", "password"], in: header, format: "1Password CSV")
            extra = header.unknown(["title", "url", "website", "username", "password", "otpauth", "one-time password",
                                    "favorite", "archived", "tags", "notes", "notesplain"])
        }) { row in
            var item = ForeignItem(title: row[header.index("title")] ?? "", value: Array((row[header.index("password")] ?? "").utf8))
            item.username = row[header.index("username")]
            if let url = row[header.index(anyOf: ["url", "website"])] { item.urls = [url] }
            item.totp = row[header.index(anyOf: ["otpauth", "one-time password"])]
            item.notes = row[header.index(anyOf: ["notes", "notesplain"])]
            item.fields = ForeignCSV.fields(row, columns: extra, header: header)
            if let tags = row[header.index("tags")] { item.extras.append((label: "tags", value: tags)) }
            if ForeignCSV.isYes(row[header.index("favorite")]) { item.extras.append((label: "favorite", value: "yes")) }
            if ForeignCSV.isYes(row[header.index("archived")]) { item.extras.append((label: "archived", value: "yes")) }
            result.items.append(item)
        }
        return result
    }
}

// MARK: - LastPass CSV

/// `--format lastpass-csv`: LastPass's export, `url,username,password,totp,extra,name,grouping,fav`
/// (`totp` since 2021). `grouping` is the folder path with `\` between folders; `extra` is the
/// notes; a secure note has the URL `http://sn`, which is no site.
enum LastPassCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "lastpass-csv")
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        try ForeignCSV.forEachRow(bytes, format: "LastPass CSV", ragged: false, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "password", "name", "grouping"], in: header, format: "LastPass CSV")
            extra = header.unknown(["url", "username", "password", "totp", "extra", "name", "grouping", "fav"])
        }) { row in
            let folders = (row[header.index("grouping")] ?? "").split(separator: "\\").map(String.init).filter { !$0.trimmed.isEmpty }
            var item = ForeignItem(folders: folders, title: row[header.index("name")] ?? "",
                                   value: Array((row[header.index("password")] ?? "").utf8))
            item.username = row[header.index("username")]
            if let url = row[header.index("url")], url != "http://sn" { item.urls = [url] }
            item.totp = row[header.index("totp")]
            item.notes = row[header.index("extra")]
            item.fields = ForeignCSV.fields(row, columns: extra, header: header)
            if ForeignCSV.isYes(row[header.index("fav")]) { item.extras.append((label: "favorite", value: "yes")) }
            result.items.append(item)
        }
        return result
    }
}

// MARK: - Dashlane CSV

/// `--format dashlane-csv`: Dashlane's `credentials.csv`, with the header
/// `username,username2,username3,title,password,note,url,category,otpSecret`, or the older export
/// without a header, whose rows are `title, url, login, password, note` and may be ragged (fewer
/// cells are padded; more cells are kept as fields `column6`…).
enum DashlaneCSVReader {
    static let headerForm = ["username", "username2", "username3", "title", "password", "note", "url", "category", "otpsecret"]

    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: [UInt8], now: Int64) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "dashlane-csv")
        var header: ForeignCSVHeader?
        var extra: [Int] = []
        var first = true
        try CSV.forEachRecord(bytes) { (record) throws(VaultError) in
            let cells = record.strings
            if first {
                first = false
                let names = ForeignCSVHeader(cells)
                // The header form: its columns by name (others become fields).
                if names.index("username") != nil && names.index("password") != nil && names.index("title") != nil {
                    header = names
                    extra = names.unknown(Set(headerForm))
                    return
                }
            }
            let row = ForeignCSVRow(line: record.line, cells: cells)
            if let header {
                guard cells.count <= header.names.count else {
                    throw .malformedInput("line \(record.line): \(cells.count) columns, the Dashlane CSV header has \(header.names.count)")
                }
                let row = ForeignCSVRow(line: record.line, cells: cells + repeatElement("", count: header.names.count - cells.count))
                var item = ForeignItem(folders: row[header.index("category")].map { [$0] } ?? [], title: row[header.index("title")] ?? "",
                                       value: Array((row[header.index("password")] ?? "").utf8))
                item.username = row[header.index("username")]
                if let url = row[header.index("url")] { item.urls = [url] }
                item.notes = row[header.index("note")]
                item.totp = row[header.index("otpsecret")]
                for column in ["username2", "username3"] {
                    if let value = row[header.index(column)] { item.fields.append(ForeignField(label: column, value: Array(value.utf8), protected: false)) }
                }
                item.fields += ForeignCSV.fields(row, columns: extra, header: header)
                result.items.append(item)
            } else {
                var item = ForeignItem(title: row[0] ?? "", value: Array((row[3] ?? "").utf8))
                if let url = row[1] { item.urls = [url] }
                item.username = row[2]
                item.notes = row[4]
                for index in cells.indices.dropFirst(5) {
                    if let value = row[index] { item.fields.append(ForeignField(label: "column\(index + 1)", value: Array(value.utf8), protected: false)) }
                }
                result.items.append(item)
            }
        }
        guard !first else { throw .malformedInput("the Dashlane CSV file is empty") }
        return result
    }
}
