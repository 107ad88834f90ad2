import FoundationEssentials
import KDF

// MARK: - Import and export formats

/// The formats `import` reads and `export` writes.
public enum InterchangeFormat: String, CaseIterable, Sendable {
    /// vaultfile's own lossless JSON (docs/INTERCHANGE.md): binary values, fields, times.
    case json
    /// `KEY=value` lines, as `.env` files hold them.
    case dotenv
    /// RFC 4180 CSV: `name,value`, then one column per field name.
    case csv
    /// The CSV that `keepassxc-cli export --format csv` writes (import only).
    case keepassxcCSV = "keepassxc-csv"
    /// Bitwarden's unencrypted JSON export (import only).
    case bitwardenJSON = "bitwarden-json"

    /// Whether vaultfile can write this format.
    public var canExport: Bool { self == .json || self == .dotenv || self == .csv }
}

/// Converts between vaults and the interchange formats. Parsing is strict and names the line of any problem.
public enum Interchange {
    /// The entries a file holds, in file order, validated (names, fields, sizes).
    public static func parse(_ bytes: [UInt8], format: InterchangeFormat, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> [(name: String, entry: Entry)] {
        let entries: [(String, Entry)]
        switch format {
        case .json: entries = try NativeJSON.parse(bytes)
        case .dotenv: entries = try DotEnv.parse(bytes, now: now)
        case .csv: entries = try NativeCSV.parse(bytes, now: now)
        case .keepassxcCSV: entries = try KeePassXCCSV.parse(bytes, now: now)
        case .bitwardenJSON: entries = try BitwardenJSON.parse(bytes, now: now)
        }
        var check = Vault()
        for (name, entry) in entries {
            if check.entry(name) != nil { throw .malformedInput("the entry '\(name)' appears twice in the input") }
            try check.put(entry, as: name)
        }
        return entries
    }

    /// The vault (or the entries under `prefix`) in `format`.
    public static func export(_ vault: Vault, format: InterchangeFormat, prefix: String = "") throws(VaultError) -> [UInt8] {
        let entries = vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }
        switch format {
        case .json: return try NativeJSON.export(entries)
        case .dotenv: return try DotEnv.export(entries)
        case .csv: return try NativeCSV.export(entries)
        case .keepassxcCSV, .bitwardenJSON:
            throw .malformedInput("\(format.rawValue) is an import format only; export json, dotenv or csv")
        }
    }
}

// MARK: - vaultfile JSON

/// `{"vaultfile_export": 1, "entries": [{name, value | value_base64, fields, fields_base64, created, modified}]}`.
enum NativeJSON {
    struct Document: Codable {
        var vaultfile_export: Int
        var entries: [Item]
    }

    struct Item: Codable {
        var name: String
        var value: String?
        var value_base64: String?
        var fields: [String: String]?
        var fields_base64: [String: String]?
        var created: Int64?
        var modified: Int64?
    }

    static func parse(_ bytes: [UInt8]) throws(VaultError) -> [(String, Entry)] {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(bytes))
        } catch {
            throw .malformedInput("not a vaultfile JSON export: \(error)")
        }
        guard document.vaultfile_export == 1 else {
            throw .malformedInput("vaultfile JSON export version \(document.vaultfile_export) is unknown; this build reads version 1")
        }
        var result: [(String, Entry)] = []
        for (index, item) in document.entries.enumerated() {
            let where_ = "entry \(index + 1) ('\(item.name)')"
            let value: [UInt8]
            switch (item.value, item.value_base64) {
            case (let text?, nil): value = Array(text.utf8)
            case (nil, let encoded?): value = try decodeBase64(encoded, where_)
            default: throw .malformedInput("\(where_) needs exactly one of value and value_base64")
            }
            var fields: [String: [UInt8]] = [:]
            for (field, text) in item.fields ?? [:] { fields[field] = Array(text.utf8) }
            for (field, encoded) in item.fields_base64 ?? [:] {
                guard fields[field] == nil else { throw .malformedInput("\(where_): field '\(field)' is given twice") }
                fields[field] = try decodeBase64(encoded, where_)
            }
            let created = item.created ?? item.modified ?? 0
            result.append((item.name, Entry(value: value, fields: fields, created: created, modified: item.modified ?? created)))
        }
        return result
    }

    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let items = entries.map { name, entry in
            var item = Item(name: name, created: entry.created, modified: entry.modified)
            if let text = String(validating: entry.value, as: UTF8.self) { item.value = text } else { item.value_base64 = Data(entry.value).base64EncodedString() }
            for (field, bytes) in entry.fields {
                if let text = String(validating: bytes, as: UTF8.self) {
                    item.fields = (item.fields ?? [:]).merging([field: text]) { $1 }
                } else {
                    item.fields_base64 = (item.fields_base64 ?? [:]).merging([field: Data(bytes).base64EncodedString()]) { $1 }
                }
            }
            return item
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(Document(vaultfile_export: 1, entries: items))) + [0x0A]
        } catch {
            throw .malformedInput("could not encode the export: \(error)")
        }
    }

    private static func decodeBase64(_ text: String, _ where_: String) throws(VaultError) -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { throw .malformedInput("\(where_) has invalid base64") }
        return Array(data)
    }
}

// MARK: - dotenv

/// `.env` files: `KEY=value`, `export KEY=value`, `#` comments, blank lines, unquoted,
/// 'single-quoted' (literal) and "double-quoted" values (escapes `\n \r \t \" \\ \$`, may span lines).
enum DotEnv {
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedInput("the dotenv file is not UTF-8") }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        var result: [(String, Entry)] = []
        var index = 0
        while index < lines.count {
            let lineNumber = index + 1
            var line = lines[index].drop { $0 == " " || $0 == "\t" }
            index += 1
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = line.dropFirst(7).drop { $0 == " " } }
            guard let equals = line.firstIndex(of: "=") else {
                throw .malformedInput("line \(lineNumber): expected KEY=value")
            }
            let key = String(line[..<equals]).trimmed
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." || $0 == "-" }) else {
                throw .malformedInput("line \(lineNumber): '\(key)' is not a variable name")
            }
            var rest = line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var value = ""
            if rest.hasPrefix("'") {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "'") else { throw .malformedInput("line \(lineNumber): unterminated single quote") }
                value = String(rest[..<close])
                try checkTrailing(rest[rest.index(after: close)...], lineNumber)
            } else if rest.hasPrefix("\"") {
                rest = rest.dropFirst()
                var closed = false
                while !closed {
                    var chars = rest.makeIterator()
                    var consumed = 0
                    while let char = chars.next() {
                        consumed += 1
                        if char == "\\" {
                            consumed += 1
                            switch chars.next() {
                            case "n": value.append("\n")
                            case "r": value.append("\r")
                            case "t": value.append("\t")
                            case "\"": value.append("\"")
                            case "\\": value.append("\\")
                            case "$": value.append("$")
                            case let other?: value.append("\\"); value.append(other)
                            case nil: value.append("\\"); consumed -= 1
                            }
                        } else if char == "\"" {
                            closed = true
                            try checkTrailing(rest.dropFirst(consumed), lineNumber)
                            break
                        } else {
                            value.append(char)
                        }
                    }
                    if !closed {
                        guard index < lines.count else { throw .malformedInput("line \(lineNumber): unterminated double quote") }
                        value.append("\n")
                        rest = lines[index]
                        index += 1
                    }
                }
            } else {
                // Unquoted: up to an inline comment (" #"), trailing spaces removed.
                var raw = String(rest)
                if let comment = raw.indexOf(" #") { raw = String(raw[..<comment]) }
                value = raw.trimmed
            }
            result.append((key, Entry(value: Array(value.utf8), created: now, modified: now)))
        }
        return result
    }

    private static func checkTrailing(_ rest: Substring, _ lineNumber: Int) throws(VaultError) {
        let trailing = rest.drop { $0 == " " || $0 == "\t" }
        guard trailing.isEmpty || trailing.hasPrefix("#") else {
            throw .malformedInput("line \(lineNumber): unexpected text after the closing quote")
        }
    }

    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        var out = ""
        for (variable, name) in try EnvironmentNames.variables(for: entries.map(\.name)) {
            let value = entries.first { $0.name == name }!.entry.value
            guard let text = String(validating: value, as: UTF8.self), !value.contains(0) else {
                throw .malformedInput("'\(name)' holds binary data, which dotenv cannot carry; export json instead")
            }
            var escaped = ""
            for char in text {
                switch char {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "$": escaped += "\\$"
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                default: escaped.append(char)
                }
            }
            out += "\(variable)=\"\(escaped)\"\n"
        }
        return Array(out.utf8)
    }
}

// MARK: - CSV (RFC 4180)

/// Reads and writes RFC 4180 records; quoted fields may hold commas, quotes and newlines.
enum CSV {
    /// Records with the 1-based line each starts on.
    static func records(_ bytes: [UInt8]) throws(VaultError) -> [(line: Int, fields: [String])] {
        guard var text = String(validating: bytes, as: UTF8.self) else { throw .malformedInput("the CSV file is not UTF-8") }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var records: [(Int, [String])] = []
        var fields: [String] = [], field = "", inQuotes = false, quotedField = false
        var line = 1, recordLine = 1
        var chars = Array(text.unicodeScalars)[...]
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty && !quotedField) { records.append((recordLine, fields)) }
            fields = []; field = ""; quotedField = false
        }
        while let char = chars.popFirst() {
            if inQuotes {
                if char == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { inQuotes = false }
                } else {
                    if char == "\n" { line += 1 }
                    field.unicodeScalars.append(char)
                }
                continue
            }
            switch char {
            case "\"":
                guard field.isEmpty else { throw .malformedInput("line \(line): a quote inside an unquoted field") }
                inQuotes = true; quotedField = true
            case ",":
                fields.append(field); field = ""
            case "\r":
                if chars.first == "\n" { continue }
                endRecord(); line += 1; recordLine = line
            case "\n":
                endRecord(); line += 1; recordLine = line
            default:
                field.unicodeScalars.append(char)
            }
        }
        if inQuotes { throw .malformedInput("line \(recordLine): unterminated quoted field") }
        if !field.isEmpty || !fields.isEmpty || quotedField { endRecord() }
        return records
    }

    /// One CSV field, quoted when it must be.
    static func quote(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) || text.hasPrefix(" ") || text.hasSuffix(" ") else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }

    /// Throws unless `record` has as many columns as `header`.
    static func checkWidth(_ record: (line: Int, fields: [String]), _ header: (line: Int, fields: [String])) throws(VaultError) {
        guard record.fields.count == header.fields.count else {
            throw .malformedInput("line \(record.line): \(record.fields.count) columns, the header has \(header.fields.count)")
        }
    }

    /// Maps a header row to column indexes by lower-cased name.
    static func columns(_ header: [String]) -> [String: Int] {
        var map: [String: Int] = [:]
        for (index, name) in header.enumerated() { map[name.lowercased().trimmed] = map[name.lowercased().trimmed] ?? index }
        return map
    }
}

/// vaultfile CSV: header `name,value,FIELD…`; every other column is a field, empty cells are absent fields.
enum NativeCSV {
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        let records = try CSV.records(bytes)
        guard let header = records.first else { return [] }
        let columns = CSV.columns(header.fields)
        guard let nameColumn = columns["name"], let valueColumn = columns["value"] else {
            throw .malformedInput("line 1: the header must name the columns 'name' and 'value'")
        }
        var result: [(String, Entry)] = []
        for record in records.dropFirst() {
            try CSV.checkWidth(record, header)
            var fields: [String: [UInt8]] = [:]
            for (index, column) in header.fields.enumerated() where index != nameColumn && index != valueColumn && !record.fields[index].isEmpty {
                fields[column.trimmed] = Array(record.fields[index].utf8)
            }
            let name = record.fields[nameColumn]
            do { _ = try EntryName.validate(name) } catch { throw .malformedInput("line \(record.line): \(error.description)") }
            result.append((name, Entry(value: Array(record.fields[valueColumn].utf8), fields: fields, created: now, modified: now)))
        }
        return result
    }

    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let fieldNames = Set(entries.flatMap { $0.entry.fields.keys }).sorted()
        var out = (["name", "value"] + fieldNames).joined(separator: ",") + "\r\n"
        for (name, entry) in entries {
            var row = [CSV.quote(name), try text(entry.value, name)]
            for field in fieldNames {
                if let bytes = entry.fields[field] { row.append(try text(bytes, "\(name)#\(field)")) } else { row.append("") }
            }
            out += row.joined(separator: ",") + "\r\n"
        }
        return Array(out.utf8)
    }

    private static func text(_ bytes: [UInt8], _ name: String) throws(VaultError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw .malformedInput("'\(name)' holds binary data, which CSV cannot carry; export json instead")
        }
        return CSV.quote(text)
    }
}

// MARK: - KeePassXC CSV

/// `keepassxc-cli export --format csv`: Group, Title, Username, Password, URL, Notes[, TOTP, Icon, Last Modified, Created].
enum KeePassXCCSV {
    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        let records = try CSV.records(bytes)
        guard let header = records.first else { return [] }
        let columns = CSV.columns(header.fields)
        guard let titleColumn = columns["title"], let passwordColumn = columns["password"] else {
            throw .malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")
        }
        var result: [(String, Entry)] = []
        var used: [String: Int] = [:]
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
            let name = uniqueName(EntryNames.clean(groups + [title]), &used)
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

// MARK: - Bitwarden JSON

/// Bitwarden's unencrypted JSON export: folders, and items of type login (1), secure note (2), card (3), identity (4).
enum BitwardenJSON {
    struct Export: Decodable {
        var encrypted: Bool?
        var folders: [Folder]?
        var items: [Item]?
    }
    struct Folder: Decodable { var id: String; var name: String }
    struct Item: Decodable {
        var type: Int
        var name: String?
        var folderId: String?
        var notes: String?
        var login: Login?
        var card: [String: String?]?
        var identity: [String: String?]?
        var fields: [CustomField]?
        var revisionDate: String?
        var creationDate: String?
    }
    struct Login: Decodable {
        var username: String?
        var password: String?
        var totp: String?
        var uris: [URI]?
    }
    struct URI: Decodable { var uri: String? }
    struct CustomField: Decodable { var name: String?; var value: String? }

    static func parse(_ bytes: [UInt8], now: Int64) throws(VaultError) -> [(String, Entry)] {
        let export: Export
        do {
            export = try JSONDecoder().decode(Export.self, from: Data(bytes))
        } catch {
            throw .malformedInput("not a Bitwarden JSON export: \(error)")
        }
        guard export.encrypted != true else {
            throw .malformedInput("this Bitwarden export is encrypted; export it again as unencrypted JSON (then delete that file)")
        }
        let folders = Dictionary((export.folders ?? []).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        var used: [String: Int] = [:]
        var result: [(String, Entry)] = []
        for (index, item) in (export.items ?? []).enumerated() {
            let folder = item.folderId.flatMap { folders[$0] }.map { $0.split(separator: "/").map(String.init) } ?? []
            let name = uniqueName(EntryNames.clean(folder + [item.name ?? "untitled"]), &used)
            var fields: [String: [UInt8]] = [:]
            func put(_ field: String, _ text: String?) {
                if let text, !text.isEmpty { fields[EntryNames.field(field)] = Array(text.utf8) }
            }
            var value = ""
            switch item.type {
            case 1:
                value = item.login?.password ?? ""
                put("username", item.login?.username)
                put("url", item.login?.uris?.first?.uri)
                put("totp", item.login?.totp)
            case 2:
                value = item.notes ?? ""
            case 3:
                value = (item.card?["number"] ?? nil) ?? ""
                for (key, text) in (item.card ?? [:]).sorted(by: { $0.key < $1.key }) where key != "number" { put(key, text) }
            case 4:
                for (key, text) in (item.identity ?? [:]).sorted(by: { $0.key < $1.key }) { put(key, text) }
            default:
                throw .malformedInput("item \(index + 1) ('\(item.name ?? "")') has unknown type \(item.type)")
            }
            if item.type != 2 { put("notes", item.notes) }
            for custom in item.fields ?? [] { put(custom.name ?? "field", custom.value) }
            let created = item.creationDate.flatMap(Timestamps.parse) ?? item.revisionDate.flatMap(Timestamps.parse) ?? now
            let modified = item.revisionDate.flatMap(Timestamps.parse) ?? created
            do { _ = try EntryName.validate(name) } catch { throw .malformedInput("item \(index + 1): \(error.description)") }
            result.append((name, Entry(value: Array(value.utf8), fields: fields, created: created, modified: modified)))
        }
        return result
    }
}

// MARK: - Helpers

/// Turning other tools' titles and folder names into valid entry and field names.
enum EntryNames {
    /// Joins path parts, dropping empty ones and turning control characters, `.` and `..` parts into safe text.
    static func clean(_ parts: [String]) -> String {
        parts.map { (part: String) -> String in
            var safe = ""
            for scalar in part.unicodeScalars {
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { safe += " " }
                else if scalar == "/" { safe += "-" }
                else { safe.unicodeScalars.append(scalar) }
            }
            let cleaned = safe.trimmed
            return cleaned == "." || cleaned == ".." ? "_" + cleaned : cleaned
        }.filter { !$0.isEmpty }.joined(separator: "/")
    }

    /// A field name from any label: characters outside `A–Z a–z 0–9 _ . -` become `_`, at most 64.
    static func field(_ label: String) -> String {
        let mapped = String(label.unicodeScalars.map { scalar -> Character in
            let allowed = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "_.-".unicodeScalars.contains(scalar)
            return allowed ? Character(scalar) : "_"
        }).prefix(VaultLimits.maxFieldNameLength)
        return mapped.isEmpty ? "field" : String(mapped)
    }
}

/// `name`, or `name (2)`, `name (3)`… when an earlier item of the same import took it.
private func uniqueName(_ name: String, _ used: inout [String: Int]) -> String {
    let base = name.isEmpty ? "untitled" : name
    let count = (used[base] ?? 0) + 1
    used[base] = count
    return count == 1 ? base : "\(base) (\(count))"
}

/// RFC 3339 / ISO 8601 UTC timestamps (`2023-04-05T06:07:08Z`, with optional fraction) to milliseconds.
enum Timestamps {
    static func parse(_ text: String) -> Int64? {
        let digits = Array(text.utf8)
        guard digits.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(digits[index]) else { return nil }
                value = value * 10 + Int64(digits[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var millis: Int64 = 0
        if digits.count > 20, digits[19] == 0x2E {
            var index = 20, scale: Int64 = 100
            while index < digits.count, (0x30...0x39).contains(digits[index]) {
                millis += Int64(digits[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        // Days from the civil date (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    }
}

extension String {
    /// The index where `needle` first occurs.
    func indexOf(_ needle: String) -> String.Index? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(needle) { return index }
            index = self.index(after: index)
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
