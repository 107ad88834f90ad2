@testable import VaultInterchange

// Test-only: the format sniffer as it read a file's head before it read it in place (a copy of
// the head as an array, then as a string, and of the first line's cells as strings), kept so that
// `FormatSnifferTests.test_sniff_readsInPlaceWhatTheTextReadingRead` ties the byte reading to it
// (the magic numbers and the JSON keys, read as bytes before too, are the sniffer's own).
// Where the two differ on purpose (a blank line ended by CRLF before the content, `sops:` after a
// CRLF, a combining mark after a structural character) the test leaves those inputs out.

enum FormatSnifferReference {
    /// How much of the file is looked at.
    static let window = 64 << 10

    /// What `bytes` look like, or nil when nothing is recognised for certain.
    static func sniff(_ bytes: [UInt8]) -> SniffedFormat? {
        var head = Array(bytes.prefix(window))
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head.removeFirst(3) }
        if let binary = FormatSniffer.sniffMagic(head) { return binary }  // unchanged: the magic numbers
        let text = String(decoding: head, as: UTF8.self)
        let start = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        if start.hasPrefix("{") { return FormatSniffer.sniff(head) }  // unchanged: JSON was searched as bytes
        if start.hasPrefix("<") {
            return has(text, "<KeePassFile") ? SniffedFormat(format: "keepass-xml", description: "a KeePass 2 XML export") : nil
        }
        if start.hasPrefix("$ANSIBLE_VAULT;") { return SniffedFormat(format: "ansible-vault", description: "an Ansible Vault file") }
        if has(text, "!vault") && has(text, "$ANSIBLE_VAULT;") {
            return SniffedFormat(format: "ansible-vault", description: "a YAML file with Ansible Vault values")
        }
        if has(text, "\nsops:") && has(text, "ENC[AES256_GCM,") {
            return SniffedFormat(format: "sops", description: "a sops-encrypted file")
        }
        if let csv = csvHeader(String(start)) { return csv }
        return dotenv(String(start))
    }

    /// Whether `text` holds `needle`, compared as characters (the standard library's `contains`,
    /// which the library used; Foundation's, which a test file may see, compares UTF-16 units).
    private static func has(_ text: String, _ needle: String) -> Bool {
        let haystack = Array(text), key = Array(needle)
        guard key.count <= haystack.count else { return key.isEmpty }
        for start in 0...(haystack.count - key.count) where haystack[start..<start + key.count].elementsEqual(key) { return true }
        return false
    }

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
        for header in FormatSniffer.headers where header.columns.allSatisfy(columns.contains) {
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
