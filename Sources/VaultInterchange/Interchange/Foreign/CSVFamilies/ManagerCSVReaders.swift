import VaultModel

// MARK: - Bitwarden CSV

/// `--format bitwarden-csv`: Bitwarden's unencrypted CSV export. A personal vault:
/// `folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp`;
/// an organisation's: `collections` instead of `folder` and `favorite`. `fields` holds the custom
/// fields as `name: value` lines; `login_uri` holds the URIs separated by commas.
enum BitwardenCSVReader {
    /// Every item of the export `bytes`, and what it holds that no item keeps (`notKept`).
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "bitwarden-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        var notKept: [String: Int] = [:]
        // The columns, found once by name (not at every row).
        var folder: Int?, collections: Int?, name: Int?, password: Int?, username: Int?, uri: Int?, notes: Int?, totp: Int?
        var fields: Int?, favorite: Int?, reprompt: Int?, type: Int?
        let blank = ForeignItem()  // each row's item copied from it (`ForeignItem.init` builds one and copies it)
        try ForeignCSV.forEachRow(bytes, format: "Bitwarden CSV", ragged: false, until: sink, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["type", "name", "login_password"], in: header, format: "Bitwarden CSV")
            extra = header.unknown(["folder", "collections", "favorite", "type", "name", "notes", "fields", "reprompt",
                                    "login_uri", "login_username", "login_password", "login_totp"])
            (folder, collections, name, password) = (header.index("folder"), header.index("collections"), header.index("name"),
                                                     header.index("login_password"))
            (username, uri, notes, totp) = (header.index("login_username"), header.index("login_uri"), header.index("notes"),
                                            header.index("login_totp"))
            (fields, favorite, reprompt, type) = (header.index("fields"), header.index("favorite"), header.index("reprompt"), header.index("type"))
        }) { row in
            var folders: [String] = []
            if let folder = row[folder] {
                folders = folder.split(separator: "/").map(String.init)
            } else if let collections = row[collections] {
                let all = collections.split(separator: ",").map { String($0).trimmed }
                folders = all.first.map { $0.split(separator: "/").map(String.init) } ?? []
                if all.count > 1 { notKept["Bitwarden's second and further collections of an item", default: 0] += 1 }
            }
            var item = blank
            item.folders = folders
            item.title = row[name] ?? ""
            item.value = row.bytes(password)
            item.username = row[username]
            if let uris = row[uri] { item.urls = uris.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty } }
            item.notes = row[notes]
            item.totp = row[totp]
            if let fields = row[fields] { item.fields = customFields(fields) }
            if !extra.isEmpty { item.fields += ForeignCSV.fields(row, columns: extra, header: header) }
            if row.isYes(favorite) { item.extras.append((label: "favorite", value: "yes")) }
            if row.isYes(reprompt) { notKept["Bitwarden's master-password re-prompt", default: 0] += 1 }
            if let type = row[type], type != "login", type != "note" {
                item.extras.append((label: "bitwarden_type", value: type))
            }
            result.add(&item, to: sink)
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
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "1password-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        // The columns, found once by name (not at every row).
        var title: Int?, password: Int?, username: Int?, url: Int?, totp: Int?, notes: Int?, tags: Int?, favorite: Int?, archived: Int?
        let blank = ForeignItem()  // each row's item copied from it (`ForeignItem.init` builds one and copies it)
        try ForeignCSV.forEachRow(bytes, format: "1Password CSV", ragged: false, until: sink, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["title", "password"], in: header, format: "1Password CSV")
            extra = header.unknown(["title", "url", "website", "username", "password", "otpauth", "one-time password",
                                    "favorite", "archived", "tags", "notes", "notesplain"])
            (title, password, username) = (header.index("title"), header.index("password"), header.index("username"))
            (url, totp, notes) = (header.index(anyOf: ["url", "website"]), header.index(anyOf: ["otpauth", "one-time password"]),
                                  header.index(anyOf: ["notes", "notesplain"]))
            (tags, favorite, archived) = (header.index("tags"), header.index("favorite"), header.index("archived"))
        }) { row in
            var item = blank
            item.title = row[title] ?? ""
            item.value = row.bytes(password)
            item.username = row[username]
            if let url = row[url] { item.urls = [url] }
            item.totp = row[totp]
            item.notes = row[notes]
            if !extra.isEmpty { item.fields = ForeignCSV.fields(row, columns: extra, header: header) }
            if let tags = row[tags] { item.extras.append((label: "tags", value: tags)) }
            if row.isYes(favorite) { item.extras.append((label: "favorite", value: "yes")) }
            if row.isYes(archived) { item.extras.append((label: "archived", value: "yes")) }
            result.add(&item, to: sink)
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
    static func read(_ bytes: some CSVSource, now: Int64, each sink: ForeignItemSink? = nil) throws(VaultError) -> ForeignImport {
        var result = ForeignImport(format: "lastpass-csv")
        if sink == nil { result.items.reserveCapacity(ForeignCSV.expectedRows(bytes)) }
        var header = ForeignCSVHeader([])
        var extra: [Int] = []
        // The columns, found once by name (not at every row).
        var grouping: Int?, name: Int?, password: Int?, username: Int?, url: Int?, totp: Int?, notes: Int?, favorite: Int?
        let blank = ForeignItem()  // each row's item copied from it (`ForeignItem.init` builds one and copies it)
        try ForeignCSV.forEachRow(bytes, format: "LastPass CSV", ragged: false, until: sink, header: { (names) throws(VaultError) in
            header = ForeignCSVHeader(names)
            try ForeignCSV.require(["url", "password", "name", "grouping"], in: header, format: "LastPass CSV")
            extra = header.unknown(["url", "username", "password", "totp", "extra", "name", "grouping", "fav"])
            (grouping, name, password, username) = (header.index("grouping"), header.index("name"), header.index("password"), header.index("username"))
            (url, totp, notes, favorite) = (header.index("url"), header.index("totp"), header.index("extra"), header.index("fav"))
        }) { row in
            let folders = row[grouping].map { $0.split(separator: "\\").map(String.init).filter { !$0.trimmed.isEmpty } } ?? []
            var item = blank
            item.folders = folders
            item.title = row[name] ?? ""
            item.value = row.bytes(password)
            item.username = row[username]
            if let url = row[url], url != "http://sn" { item.urls = [url] }
            item.totp = row[totp]
            item.notes = row[notes]
            if !extra.isEmpty { item.fields = ForeignCSV.fields(row, columns: extra, header: header) }
            if row.isYes(favorite) { item.extras.append((label: "favorite", value: "yes")) }
            result.add(&item, to: sink)
        }
        return result
    }
}
