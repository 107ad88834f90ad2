import FoundationEssentials
import VaultModel

// MARK: - vaultfile JSON with history (export version 2)

/// `export --format json --with-history`: version 1's document (docs/INTERCHANGE.md) marked
/// `"vaultfile_export": 2`, with `history`: for each name that has earlier versions (removed
/// entries in the trash included), the versions newest first, each an item of version 1 plus
/// `replaced` (milliseconds since the epoch).
///
/// Never written without being asked: an export for a backup or a colleague must not hand over
/// old passwords. Releases that read only version 1 refuse it rather than drop the history.
enum HistoryJSON {
    static let version = 2

    struct Document: Codable {
        var vaultfile_export: Int
        var entries: [NativeJSON.Item]
        var history: [Record]
    }

    struct Record: Codable {
        var name: String
        var versions: [Version]
    }

    struct Version: Codable {
        var replaced: Int64
        var item: NativeJSON.Item

        init(replaced: Int64, item: NativeJSON.Item) {
            self.replaced = replaced
            self.item = item
        }

        // One flat object: the item's keys and `replaced` side by side.
        init(from decoder: any Decoder) throws {
            item = try NativeJSON.Item(from: decoder)
            replaced = try decoder.container(keyedBy: Key.self).decode(NativeJSON.Time.self, forKey: .replaced).milliseconds
        }

        func encode(to encoder: any Encoder) throws {
            try item.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(replaced, forKey: .replaced)
        }

        private enum Key: String, CodingKey { case replaced }
    }

    /// Only the version number, to choose the reader.
    private struct Header: Codable { var vaultfile_export: Int }

    /// Whether `bytes` claim to be an export of version 2 (nil when they are not such JSON at all).
    static func isVersion2(_ bytes: [UInt8]) -> Bool {
        (try? JSONDocument.decode(Header.self, from: bytes, what: "a vaultfile JSON export"))?.vaultfile_export == version
    }

    /// The entries under `prefix` and the history of every name under it.
    static func export(_ vault: Vault, prefix: String) throws(VaultError) -> [UInt8] {
        let entries = vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }
        var records: [Record] = []
        for key in try vault.historyNames() where key.starts(with: prefix.utf8) {
            let name = String(decoding: key, as: UTF8.self)
            records.append(Record(name: name, versions: try vault.history(of: name).map {
                Version(replaced: $0.replaced, item: NativeJSON.item(name, $0.entry))
            }))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            let document = Document(vaultfile_export: version, entries: entries.map(NativeJSON.item), history: records)
            return Array(try encoder.encode(document)) + [0x0A]
        } catch {
            throw .malformedInput("could not encode the export: \(error)")
        }
    }

    /// The entries and the histories of an export of version 2.
    static func parse(_ bytes: [UInt8]) throws(VaultError) -> (entries: [(String, Entry)], history: [(name: String, versions: [EntryVersion])]) {
        let document = try JSONDocument.decode(Document.self, from: bytes, what: "a vaultfile JSON export with history")
        var entries: [(String, Entry)] = []
        for (index, item) in document.entries.enumerated() {
            entries.append((item.name, try NativeJSON.entry(from: item, "entry \(index + 1) ('\(item.name)')")))
        }
        var history: [(name: String, versions: [EntryVersion])] = []
        for (index, record) in document.history.enumerated() {
            _ = try EntryName.validate(record.name)
            var versions: [EntryVersion] = []
            for (number, version) in record.versions.enumerated() {
                let entry = try NativeJSON.entry(from: version.item, "history \(index + 1) ('\(record.name)') version \(number + 1)")
                var check = Vault()
                try check.put(entry, as: record.name)  // the limits and field names of any entry
                versions.append(EntryVersion(entry: entry, replaced: version.replaced))
            }
            history.append((record.name, versions))
        }
        return (entries, history)
    }
}
