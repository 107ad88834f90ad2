import VaultModel

// MARK: - What a file looks like

/// A format recognised from a file's content (`import --format auto`, and the message of a file
/// given with the wrong `--format`).
public struct SniffedFormat: Sendable, Equatable {
    /// The `--format` name that imports it ("keepass-xml"), or nil when no format imports it as
    /// it is (a KDBX database, an age file, a vaultfile vault).
    public var format: String?
    /// What it is, for a message ("a KeePass 2 XML export").
    public var description: String
    /// What to do when no format imports it as it is.
    public var advice: String?

    /// Creates a recognised format.
    public init(format: String?, description: String, advice: String? = nil) {
        self.format = format
        self.description = description
        self.advice = advice
    }
}

/// Recognises the formats of issue 44 from their first bytes, magic numbers and CSV headers. It
/// reads at most the first 64 KiB and never decodes the whole file: a guess to name, never a parse.
///
/// The head is read where it lies, as bytes: no array or string is made of any of it, so that a
/// file smaller than the head (a small dotenv file, a headerless CSV whose first row holds a
/// password) leaves no copy of its secrets in memory freed unwiped; the caller's buffer is the
/// only one, and the caller wipes it (`import`, on every path). Lines end at LF (CRLF's CR is the
/// separator's), as the text's own lines do; a CSV header's cells are compared in place, ASCII
/// letters folded (no column a tool writes holds a letter whose other case is not ASCII).
public enum FormatSniffer {
    /// How much of the file is looked at.
    public static let window = 64 << 10

    /// What `bytes` look like, or nil when nothing is recognised for certain.
    public static func sniff(_ bytes: [UInt8]) -> SniffedFormat? {
        bytes.withUnsafeBufferPointer { all in
            var head = UnsafeBufferPointer(rebasing: all.prefix(window))
            if starts(head, with: "\u{FEFF}") { head = UnsafeBufferPointer(rebasing: head.dropFirst(3)) }
            if let binary = binary(head, all: all) { return binary }
            // The text from its first character that is not a space, tab or line end.
            var first = 0
            while first < head.count, head[first] == 0x20 || head[first] == 0x09 || head[first] == 0x0A || head[first] == 0x0D { first += 1 }
            let text = UnsafeBufferPointer(rebasing: head[first...])
            if text.first == UInt8(ascii: "{") { return json(head) }
            if text.first == UInt8(ascii: "<") {
                return contains("<KeePassFile", in: head) ? SniffedFormat(format: "keepass-xml", description: "a KeePass 2 XML export") : nil
            }
            if starts(text, with: "$ANSIBLE_VAULT;") { return SniffedFormat(format: "ansible-vault", description: "an Ansible Vault file") }
            if contains("!vault", in: head) && contains("$ANSIBLE_VAULT;", in: head) {
                return SniffedFormat(format: "ansible-vault", description: "a YAML file with Ansible Vault values")
            }
            if contains("\nsops:", in: head) && contains("ENC[AES256_GCM,", in: head) {
                return SniffedFormat(format: "sops", description: "a sops-encrypted file")
            }
            if let csv = csvHeader(text) { return csv }
            return dotenv(text)
        }
    }

    /// The ciphertext KEY=value lines may hold in place of their values (cold60 H1).
    public enum EncryptedLines: Sendable, Equatable {
        /// sops's dotenv form: `KEY=ENC[AES256_GCM,…]` values and `sops_…` metadata lines.
        case sops
        /// A value that is Ansible Vault ciphertext (`$ANSIBLE_VAULT;…`).
        case ansibleVault

        /// What such lines are, as every refusal of them says it (the sniffer's, and the dotenv
        /// reader's of a line past the sniffer's window).
        public var refusal: String {
            switch self {
            case .sops:
                return "a sops-encrypted dotenv file (ENC[AES256_GCM,…] values, sops_… metadata lines): "
                    + "import does not read sops's dotenv form, and imports no ciphertext as a secret"
            case .ansibleVault:
                return "Ansible Vault ciphertext in KEY=value lines ($ANSIBLE_VAULT;… values): "
                    + "import reads Ansible Vault files and YAML with !vault values, not these, and imports no ciphertext as a secret"
            }
        }

        /// The kind a reader's refusal `why` names (its `refusal`), if any.
        public static func named(in why: String) -> EncryptedLines? {
            [.sops, .ansibleVault].first { why.contains($0.refusal) }
        }
    }

    /// The ciphertext held by `bytes` when the sniffer recognises them as KEY=value lines: sops's
    /// dotenv form (a value starting `ENC[AES256_GCM,`, which its `sops_mac=` line holds too: a
    /// plain `sops_version=` key alone is no sops file, recheck62 N7) or an Ansible Vault value (`$ANSIBLE_VAULT;…`); a value may be quoted. Nil for any other
    /// file. Read in place over the lines `sniff` reads (the dotenv reader refuses such a value
    /// anywhere in the file, `DotEnv.encryptedValue`): no format reads these as they are, and
    /// the dotenv reader would import the ciphertext as the secrets.
    public static func encryptedLines(_ bytes: [UInt8]) -> EncryptedLines? {
        guard sniff(bytes)?.format == "dotenv" else { return nil }
        return bytes.withUnsafeBufferPointer { all in
            var head = UnsafeBufferPointer(rebasing: all.prefix(window))
            if starts(head, with: "\u{FEFF}") { head = UnsafeBufferPointer(rebasing: head.dropFirst(3)) }
            var found: EncryptedLines?
            eachLine(head) { line in
                let body = starts(line, with: "export ") ? UnsafeBufferPointer(rebasing: line.dropFirst(7)) : line
                if let equals = body.firstIndex(of: UInt8(ascii: "=")) {
                    switch encryptedValue(UnsafeBufferPointer(rebasing: body[(equals + 1)...])) {
                    case .sops?: found = .sops
                    case .ansibleVault?: found = found ?? .ansibleVault
                    case nil: break
                    }
                }
                return found != .sops
            }
            return found
        }
    }

    /// The ciphertext a dotenv value (from after its `=`) starts with: blanks and one opening
    /// quote aside, `ENC[AES256_GCM,` (sops) or `$ANSIBLE_VAULT;`.
    public static func encryptedValue(_ value: UnsafeBufferPointer<UInt8>) -> EncryptedLines? {
        var at = 0
        while at < value.count, value[at] == 0x20 || value[at] == 0x09 { at += 1 }
        if at < value.count, value[at] == UInt8(ascii: "'") || value[at] == UInt8(ascii: "\"") { at += 1 }
        let rest = UnsafeBufferPointer(rebasing: value[at...])
        if starts(rest, with: "ENC[AES256_GCM,") { return .sops }
        if starts(rest, with: "$ANSIBLE_VAULT;") { return .ansibleVault }
        return nil
    }

    /// Whether the first line of `bytes` may be a row of values rather than a header a tool
    /// writes: two or more comma-separated cells, one of them (not empty) no column any tool
    /// names (`knownColumns`; a row's `note` or `title` may be one).
    /// Such a file is perhaps Dashlane's older credentials export, which has no header line
    /// (`title, url, login, password, note`): a hint to name, never a guess (`--format auto`
    /// chooses only what the content says). Read in place: the row holds a password.
    public static func startsWithRowOfValues(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { all in
            var head = UnsafeBufferPointer(rebasing: all.prefix(window))
            if starts(head, with: "\u{FEFF}") { head = UnsafeBufferPointer(rebasing: head.dropFirst(3)) }
            var first = 0
            while first < head.count, head[first] == 0x20 || head[first] == 0x09 || head[first] == 0x0A || head[first] == 0x0D { first += 1 }
            let text = UnsafeBufferPointer(rebasing: head[first...])
            guard text.first != UInt8(ascii: "{"), text.first != UInt8(ascii: "<") else { return false }
            var end = 0
            while end < text.count, text[end] != 0x0A, text[end] != 0x0D { end += 1 }
            let line = UnsafeBufferPointer(rebasing: text[..<end])
            guard line.contains(UInt8(ascii: ",")) else { return false }
            var start = 0
            for index in 0...line.count where index == line.count || line[index] == UInt8(ascii: ",") {
                let cell = UnsafeBufferPointer(rebasing: line[start..<index])
                start = index + 1
                guard cell.contains(where: { $0 != UInt8(ascii: "\"") && $0 != 0x20 && $0 != 0x0D }) else { continue }
                if !knownColumns.contains(where: { isColumn(cell, $0) }) { return true }
            }
            return false
        }
    }

    /// Whether `bytes` start with KeePass 2's signature (KDBX 3.1 and 4 alike): what `--format
    /// kdbx` checks before a password is asked for a file that is no KeePass database at all.
    public static func hasKDBXSignature(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5])
    }

    /// What `bytes` are when their first bytes say it (a KDBX database, a vault, an age file, a
    /// 1PUX ZIP): the check an import with `--format` makes before parsing, which reads no more
    /// than those bytes and a ZIP's central directory (the import's speed stays the parser's).
    public static func sniffMagic(_ bytes: [UInt8]) -> SniffedFormat? {
        guard let first = bytes.first, first == 0x03 || first == 0x89 || first == 0x61 || first == 0x2D || first == 0x50 else { return nil }
        return bytes.withUnsafeBufferPointer { binary(UnsafeBufferPointer(rebasing: $0.prefix(window)), all: $0) }
    }

    /// Files recognised by their magic number.
    private static func binary(_ head: UnsafeBufferPointer<UInt8>, all: UnsafeBufferPointer<UInt8>) -> SniffedFormat? {
        if head.starts(with: [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]) {
            return SniffedFormat(format: "kdbx", description: "a KeePass database (KDBX)")
        }
        // KeePass 1's .kdb: the same first signature, 0xB54BFB65 as the second. Its format (Twofish
        // or AES, groups and entries as binary fields) is not read: KeePassXC converts it.
        if head.starts(with: [0x03, 0xD9, 0xA2, 0x9A, 0x65, 0xFB, 0x4B, 0xB5]) {
            return SniffedFormat(format: nil, description: "a KeePass 1 database (.kdb)",
                                 advice: "vaultfile reads KeePass 2 databases: open it in KeePassXC (Database > Import > KeePass 1 database), "
                                     + "save it as KDBX, then import that with 'vaultfile import --format kdbx FILE.kdbx'")
        }
        if head.starts(with: [0x89, 0x56, 0x41, 0x55, 0x4C, 0x54, 0x0D, 0x0A]) {
            return SniffedFormat(format: nil, description: "a vaultfile vault",
                                 advice: "copy its entries with 'vaultfile --vault OTHER export --format json | vaultfile import --format json'")
        }
        if starts(head, with: "age-encryption.org/v1") || starts(head, with: "-----BEGIN AGE ENCRYPTED FILE-----") {
            return SniffedFormat(format: nil, description: "an age-encrypted file", advice: "decrypt it with age first, then import what it holds")
        }
        // A ZIP archive (a local file header, or an empty archive's end record): never text, so
        // never sent to a text reader, nor through iconv (cold60 M3, L7). Its central directory
        // (`ZipNames`) tells a 1pux or Dashlane's export ZIP, wherever the entry lies; without a
        // readable one (a ZIP64, a cut file), the first names (stored in each local header) do.
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) || head.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            if let names = ZipNames(all) { return names.exportData ? onePUX : names.dashlane ? dashlaneZIP : otherZIP }
            if contains("export.data", in: head) { return onePUX }
            if contains("credentials.csv", in: head) || contains("securenotes.csv", in: head) || contains("personalInfo.csv", in: head) {
                return dashlaneZIP
            }
            return otherZIP
        }
        return nil
    }

    /// The bytes of a ZIP's end `sniffZIP(tail:fileSize:)` asks for: its end record, its comment
    /// and a central directory of thousands of names.
    public static let zipTail = 1 << 20

    /// What a ZIP archive of `fileSize` bytes is, told from its last bytes `tail` (its central
    /// directory: `ZipNames`), for an input of which only the head was read (a 1pux whose
    /// export.data lies past it); nil when they do not tell.
    public static func sniffZIP(tail: [UInt8], fileSize: Int) -> SniffedFormat? {
        tail.withUnsafeBufferPointer { tail in
            ZipNames(tail, base: fileSize - tail.count).map { names in
                names.exportData ? onePUX : names.dashlane ? dashlaneZIP : otherZIP
            }
        }
    }

    /// A 1Password export: a ZIP archive holding export.data.
    static let onePUX = SniffedFormat(format: "1pux", description: "a 1Password export (1PUX)")

    /// Dashlane's export ZIP (credentials.csv, securenotes.csv…): its CSVs are read one at a time.
    public static let dashlaneZIP = SniffedFormat(
        format: nil, description: "a ZIP archive (Dashlane's export: credentials.csv, securenotes.csv…)",
        advice: "unzip it, then import each CSV: 'vaultfile import --format dashlane-csv credentials.csv', "
            + "and securenotes.csv (payments.csv, ids.csv, personalInfo.csv) likewise; delete the unzipped files afterwards")

    /// A ZIP archive whose central directory names no `export.data` (not a 1pux) nor Dashlane's CSVs.
    public static let otherZIP = SniffedFormat(
        format: nil, description: "a ZIP archive that holds no export.data (not a 1pux)",
        advice: "unzip it and import the export inside it; a 1Password export (1PUX, with export.data) imports with "
            + "'vaultfile import --format 1pux FILE.1pux'")

    /// JSON documents, by the keys that mark each export, found in the bytes of `head` (an
    /// export's first 64 KiB: searched as bytes, not as characters, which cost 4 % of an import).
    private static func json(_ head: UnsafeBufferPointer<UInt8>) -> SniffedFormat? {
        func has(_ key: StaticString) -> Bool { contains(key, in: head) }
        if has("\"vaultfile_export\"") { return SniffedFormat(format: "json", description: "a vaultfile JSON export") }
        if has("\"sops\"") && has("ENC[AES256_GCM,") { return SniffedFormat(format: "sops", description: "a sops-encrypted file") }
        // Bitwarden's password-protected export: its items are one encrypted `data` string.
        if !has("\"items\""), has("\"encrypted\""), has("\"passwordProtected\"") || has("\"encKeyValidation_DO_NOT_EDIT\"") {
            return SniffedFormat(format: nil, description: "an encrypted (password-protected) Bitwarden export",
                                 advice: "export it again from Bitwarden as unencrypted JSON (File > Export vault, file format .json), "
                                     + "import that file, then delete it")
        }
        guard has("\"items\"") else { return nil }
        // Keys only one of the two writes: Enpass's items, fields and folders (`template_type`,
        // `sensitive`, `parent_uuid`…), Bitwarden's (`revisionDate`, `folderId`…); then the
        // weaker `login` object or `folders` list of Bitwarden (an Enpass category is "login" too).
        let enpass = has("\"template_type\"") || has("\"auto_submit\"") || has("\"sensitive\"") || has("\"parent_uuid\"") || has("\"value_updated_at\"")
        let bitwarden = has("\"revisionDate\"") || has("\"creationDate\"") || has("\"folderId\"") || has("\"collectionIds\"") || has("\"encrypted\"")
        if enpass && !bitwarden { return SniffedFormat(format: "enpass-json", description: "an Enpass JSON export") }
        if bitwarden && !enpass { return SniffedFormat(format: "bitwarden-json", description: "a Bitwarden JSON export") }
        if !enpass && (has("\"login\"") || has("\"folders\"")) {
            return SniffedFormat(format: "bitwarden-json", description: "a Bitwarden JSON export")
        }
        return nil
    }

    /// Whether the ASCII `needle` occurs in `bytes`, byte for byte.
    public static func contains(_ needle: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard count > 0, bytes.count >= count else { return count == 0 }
        let key = UnsafeBufferPointer(start: needle.utf8Start, count: count)
        var index = 0
        while index <= bytes.count - count {
            if bytes[index] == key[0] {
                var offset = 1
                while offset < count, bytes[index + offset] == key[offset] { offset += 1 }
                if offset == count { return true }
            }
            index += 1
        }
        return false
    }

    /// Whether `bytes` start with the bytes of `literal`.
    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        for index in 0..<count where bytes[index] != literal.utf8Start[index] { return false }
        return true
    }

    /// The CSV headers each tool writes, by their columns (lower case, without quotes or spaces).
    static let headers: [(columns: [String], format: String, description: String)] = [
        (["group", "title", "username", "password", "url", "notes"], "keepassxc-csv", "a KeePassXC CSV export"),
        (["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"], "bitwarden-csv", "a Bitwarden CSV export"),
        (["collections", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"], "bitwarden-csv", "a Bitwarden organisation CSV export"),
        (["url", "username", "password", "httprealm", "formactionorigin", "guid"], "firefox-csv", "a Firefox CSV export"),
        (["url", "username", "password", "totp", "extra", "name", "grouping", "fav"], "lastpass-csv", "a LastPass CSV export"),
        (["url", "username", "password", "extra", "name", "grouping", "fav"], "lastpass-csv", "a LastPass CSV export"),
        (["title", "url", "username", "password", "otpauth"], "1password-csv", "a 1Password CSV export"),
        (["username", "username2", "username3", "title", "password", "note", "url", "category", "otpsecret"], "dashlane-csv", "a Dashlane CSV export"),
        (["name", "url", "username", "password"], "chrome-csv", "a Chrome (or Chromium, Edge) CSV export"),
        // The other files of Dashlane's export ZIP (`DashlaneCSVReader.Kind`).
        (["type", "account_name", "cc_number"], "dashlane-csv", "Dashlane's payments CSV (payments.csv)"),
        (["type", "number", "name", "issue_date", "place_of_issue"], "dashlane-csv", "Dashlane's IDs CSV (ids.csv)"),
        (["type", "first_name", "last_name", "item_name"], "dashlane-csv", "Dashlane's personal info CSV (personalInfo.csv)"),
        (["title", "note"], "dashlane-csv", "Dashlane's secure notes CSV (securenotes.csv)"),
    ]

    /// Every column name of `headers` and of Dashlane's files: a first row with none of them
    /// holds values, not names (a file without a header, `ForeignCSV.require`).
    static let knownColumns: Set<String> = Set(headers.flatMap(\.columns)).union(DashlaneCSVReader.columnNames).union(["value", "notes"])

    /// A CSV whose first line is a header some tool writes (every column of the row above present).
    /// The line is read in place: in a file without a header (Dashlane's older form) it is a row
    /// of values, a password among them, so no cell is made a string; only where each cell lies is kept.
    private static func csvHeader(_ text: UnsafeBufferPointer<UInt8>) -> SniffedFormat? {
        var end = 0
        while end < text.count, text[end] != 0x0A, text[end] != 0x0D { end += 1 }
        let line = UnsafeBufferPointer(rebasing: text[..<end])
        guard line.contains(UInt8(ascii: ",")) else { return nil }
        var cells: [Range<Int>] = []
        var start = 0
        for index in 0...line.count where index == line.count || line[index] == UInt8(ascii: ",") {
            cells.append(start..<index)
            start = index + 1
        }
        func has(_ column: String) -> Bool {
            cells.contains { isColumn(UnsafeBufferPointer(rebasing: line[$0]), column) }
        }
        // vaultfile's own CSV has `name` and `value`, whatever fields (url, username…) follow: no
        // other tool's header has a `value` column.
        if has("name") && has("value") { return SniffedFormat(format: "csv", description: "a vaultfile CSV file") }
        for header in headers where header.columns.allSatisfy(has) {
            return SniffedFormat(format: header.format, description: header.description)
        }
        return nil
    }

    /// Whether `cell`, without its quotes, spaces and CRs and in lower case, is `column` (lower-case
    /// ASCII): compared byte by byte, ASCII letters folded; a byte that is not ASCII matches none
    /// (the one letter whose lower case is ASCII, the Kelvin sign's `k`, is in no column).
    private static func isColumn(_ cell: UnsafeBufferPointer<UInt8>, _ column: String) -> Bool {
        var column = column
        return column.withUTF8 { expected in
            var matched = 0
            for byte in cell where byte != UInt8(ascii: "\"") && byte != 0x20 && byte != 0x0D {
                let folded = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                guard matched < expected.count, folded == expected[matched] else { return false }
                matched += 1
            }
            return matched == expected.count
        }
    }

    /// Text whose every line (comments and blank ones aside) is `KEY=value`: the first 200 lines
    /// that are not empty, read in place (a value is never copied, nor is its line).
    private static func dotenv(_ text: UnsafeBufferPointer<UInt8>) -> SniffedFormat? {
        var lines = 0, shaped = true
        eachLine(text) { line in
            if line.isEmpty || line[0] == UInt8(ascii: "#") { return true }
            let key = starts(line, with: "export ") ? UnsafeBufferPointer(rebasing: line.dropFirst(7)) : line
            guard let equals = key.firstIndex(of: UInt8(ascii: "=")), equals > 0,
                  key[..<equals].allSatisfy({ byte in
                      (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "_")
                  }) else {
                shaped = false
                return false
            }
            lines += 1
            return true
        }
        guard shaped else { return nil }
        return lines > 0 ? SniffedFormat(format: "dotenv", description: "a dotenv file (KEY=value lines)") : nil
    }

    /// Calls `body` with each of the first 200 lines of `text` that are not empty, in place, the
    /// blanks at their start dropped (a line of blanks is then empty); stops when it returns
    /// false. A CRLF ends a line as LF does (its CR is no part of the line); a CR alone is.
    private static func eachLine(_ text: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var seen = 0, position = 0
        while position < text.count && seen < 200 {
            var end = position
            while end < text.count, text[end] != 0x0A { end += 1 }
            let last = end < text.count && end > position && text[end - 1] == 0x0D ? end - 1 : end
            defer { position = end + 1 }
            guard last > position else { continue }
            seen += 1
            var at = position
            while at < last, text[at] == 0x20 || text[at] == 0x09 { at += 1 }
            guard body(UnsafeBufferPointer(rebasing: text[at..<last])) else { return }
        }
    }
}
