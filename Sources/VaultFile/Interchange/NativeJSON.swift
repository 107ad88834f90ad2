import FoundationEssentials

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

    /// The entries of a vaultfile JSON export, in file order.
    static func parse(_ bytes: [UInt8]) throws(VaultError) -> [(String, Entry)] {
        let document = try JSONDocument.decode(Document.self, from: bytes, what: "a vaultfile JSON export")
        guard document.vaultfile_export == 1 else {
            throw .malformedInput("vaultfile JSON export version \(document.vaultfile_export) is unknown; this build reads version 1")
        }
        var result: [(String, Entry)] = []
        for (index, item) in document.entries.enumerated() {
            result.append((item.name, try entry(from: item, "entry \(index + 1) ('\(item.name)')")))
        }
        return result
    }

    /// The entry an item holds; `where_` names it in errors.
    static func entry(from item: Item, _ where_: String) throws(VaultError) -> Entry {
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
        return Entry(value: value, fields: fields, created: created, modified: item.modified ?? created)
    }

    /// The entries as a vaultfile JSON export: UTF-8 text as is, anything else in base64.
    static func export(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(Document(vaultfile_export: 1, entries: entries.map(item)))) + [0x0A]
        } catch {
            throw .malformedInput("could not encode the export: \(error)")
        }
    }

    /// One entry as an item: UTF-8 text as is, anything else in base64.
    static func item(_ name: String, _ entry: Entry) -> Item {
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

    /// The bytes of a base64 text, or an error naming where it was.
    private static func decodeBase64(_ text: String, _ where_: String) throws(VaultError) -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { throw .malformedInput("\(where_) has invalid base64") }
        return Array(data)
    }
}
