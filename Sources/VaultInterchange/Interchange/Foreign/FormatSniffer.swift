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
public enum FormatSniffer {
    /// How much of the file is looked at.
    public static let window = 64 << 10

    /// What `bytes` look like, or nil when nothing is recognised for certain.
    public static func sniff(_ bytes: [UInt8]) -> SniffedFormat? {
        var head = Array(bytes.prefix(window))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head.removeFirst(3) }
        if let binary = binary(head) { return binary }
        let text = String(decoding: head, as: UTF8.self)
        let start = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        if start.hasPrefix("{") { return json(head) }
        if start.hasPrefix("<") {
            return text.contains("<KeePassFile") ? SniffedFormat(format: "keepass-xml", description: "a KeePass 2 XML export") : nil
        }
        if start.hasPrefix("$ANSIBLE_VAULT;") { return SniffedFormat(format: "ansible-vault", description: "an Ansible Vault file") }
        // Each text looked for first in the bytes (what `String.contains` finds, Character by
        // Character, holds the bytes of these ASCII texts: no other characters are canonically
        // theirs): a CSV export's 64 KiB were searched as characters at a cost of 100 M instructions.
        if contains("!vault", in: head) && text.contains("!vault") && text.contains("$ANSIBLE_VAULT;") {
            return SniffedFormat(format: "ansible-vault", description: "a YAML file with Ansible Vault values")
        }
        if contains("\nsops:", in: head) && text.contains("\nsops:") && text.contains("ENC[AES256_GCM,") {
            return SniffedFormat(format: "sops", description: "a sops-encrypted file")
        }
        if let csv = csvHeader(String(start)) { return csv }
        return dotenv(String(start))
    }

    /// What `bytes` are when their first bytes say it (a KDBX database, a vault, an age file, a
    /// 1PUX ZIP): the check an import with `--format` makes before parsing, which reads no more
    /// than those bytes (the import's speed stays the parser's).
    public static func sniffMagic(_ bytes: [UInt8]) -> SniffedFormat? {
        guard let first = bytes.first, first == 0x03 || first == 0x89 || first == 0x61 || first == 0x2D || first == 0x50 else { return nil }
        return binary(Array(bytes.prefix(window)))
    }

    /// Files recognised by their magic number.
    private static func binary(_ head: [UInt8]) -> SniffedFormat? {
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
        if head.starts(with: Array("age-encryption.org/v1".utf8)) || head.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)) {
            return SniffedFormat(format: nil, description: "an age-encrypted file", advice: "decrypt it with age first, then import what it holds")
        }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            let name = Array("export.data".utf8)
            let holdsExport = head.count >= name.count && (0...(head.count - name.count)).contains { head[$0..<$0 + name.count].elementsEqual(name) }
            return holdsExport ? SniffedFormat(format: "1pux", description: "a 1Password export (1PUX)") : nil
        }
        return nil
    }

    /// JSON documents, by the keys that mark each export, found in the bytes of `head` (an
    /// export's first 64 KiB: searched as bytes, not as characters, which cost 4 % of an import).
    private static func json(_ head: [UInt8]) -> SniffedFormat? {
        func has(_ key: StaticString) -> Bool { contains(key, in: head) }
        if has("\"vaultfile_export\"") { return SniffedFormat(format: "json", description: "a vaultfile JSON export") }
        if has("\"sops\"") && has("ENC[AES256_GCM,") { return SniffedFormat(format: "sops", description: "a sops-encrypted file") }
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
    static func contains(_ needle: StaticString, in bytes: [UInt8]) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard count > 0, bytes.count >= count else { return count == 0 }
        return bytes.withUnsafeBufferPointer { buffer in
            let key = UnsafeBufferPointer(start: needle.utf8Start, count: count)
            var index = 0
            while index <= buffer.count - count {
                if buffer[index] == key[0] {
                    var offset = 1
                    while offset < count, buffer[index + offset] == key[offset] { offset += 1 }
                    if offset == count { return true }
                }
                index += 1
            }
            return false
        }
    }

    /// The CSV headers each tool writes, by their columns (lower case, without quotes or spaces).
    private static let headers: [(columns: [String], format: String, description: String)] = [
        (["group", "title", "username", "password", "url", "notes"], "keepassxc-csv", "a KeePassXC CSV export"),
        (["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"], "bitwarden-csv", "a Bitwarden CSV export"),
        (["collections", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"], "bitwarden-csv", "a Bitwarden organisation CSV export"),
        (["url", "username", "password", "httprealm", "formactionorigin", "guid"], "firefox-csv", "a Firefox CSV export"),
        (["url", "username", "password", "totp", "extra", "name", "grouping", "fav"], "lastpass-csv", "a LastPass CSV export"),
        (["url", "username", "password", "extra", "name", "grouping", "fav"], "lastpass-csv", "a LastPass CSV export"),
        (["title", "url", "username", "password", "otpauth"], "1password-csv", "a 1Password CSV export"),
        (["username", "username2", "username3", "title", "password", "note", "url", "category", "otpsecret"], "dashlane-csv", "a Dashlane CSV export"),
        (["name", "url", "username", "password"], "chrome-csv", "a Chrome (or Chromium, Edge) CSV export"),
    ]

    /// A CSV whose first line is a header some tool writes (every column of the row above present).
    private static func csvHeader(_ text: String) -> SniffedFormat? {
        let line = text.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
        guard line.contains(",") else { return nil }
        let cells = line.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.unicodeScalars.filter { $0 != "\"" && $0 != " " && $0 != "\r" }.map(Character.init)).lowercased()
        }
        // vaultfile's own CSV has `name` and `value`, whatever fields (url, username…) follow: no
        // other tool's header has a `value` column.
        let columns = Set(cells)
        if columns.contains("name") && columns.contains("value") { return SniffedFormat(format: "csv", description: "a vaultfile CSV file") }
        for header in headers where header.columns.allSatisfy(columns.contains) {
            return SniffedFormat(format: header.format, description: header.description)
        }
        return nil
    }

    /// Text whose every line (comments and blank ones aside) is `KEY=value`.
    private static func dotenv(_ text: String) -> SniffedFormat? {
        var lines = 0
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).prefix(200) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let body = trimmed.hasPrefix("export ") ? trimmed.dropFirst(7) : trimmed
            guard let equals = body.firstIndex(of: "="), equals > body.startIndex,
                  body[..<equals].unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }) else {
                return nil
            }
            lines += 1
        }
        return lines > 0 ? SniffedFormat(format: "dotenv", description: "a dotenv file (KEY=value lines)") : nil
    }
}
