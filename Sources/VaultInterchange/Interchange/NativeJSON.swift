import FoundationEssentials
import VaultModel

// MARK: - vaultfile JSON

/// `{"vaultfile_export": 1, "entries": [{name, value | value_base64, fields, fields_base64, created, modified}]}`.
///
/// Version 1 writes times as epoch milliseconds (older releases and users' scripts read them so);
/// it reads them as milliseconds or as RFC 3339 text, the form of every newer output (docs/JSON.md).
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
        var created: Time?
        var modified: Time?
    }

    /// An item as `NativeJSONReader.items` reads it: the entry it holds when nothing about it can
    /// fail, else the item for `entry(from:_:)`.
    enum ReadItem {
        /// A text value and text fields; `created`, `modified` and whether `fields` was there, as the file gave them.
        case entry(name: String, Entry, created: Int64?, modified: Int64?, hasFields: Bool)
        case item(Item)

        /// The item as the document holds it.
        var item: Item {
            switch self {
            case .entry(let name, let entry, let created, let modified, let hasFields):
                return Item(name: name, value: String(decoding: entry.value, as: UTF8.self), value_base64: nil,
                            fields: hasFields ? entry.fields.mapValues { String(decoding: $0, as: UTF8.self) } : nil,
                            fields_base64: nil, created: created.map(Time.init(milliseconds:)), modified: modified.map(Time.init(milliseconds:)))
            case .item(let item):
                return item
            }
        }
    }

    /// A time as an export holds it: epoch milliseconds (what version 1 writes), or RFC 3339 text.
    struct Time: Codable {
        var milliseconds: Int64

        init(milliseconds: Int64) { self.milliseconds = milliseconds }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                milliseconds = number
                return
            }
            let text = try container.decode(String.self)
            guard let parsed = Timestamps.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is neither epoch milliseconds nor an RFC 3339 time")
            }
            milliseconds = parsed
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(milliseconds)
        }
    }

    /// The entries of a vaultfile JSON export, in file order.
    static func parse(_ bytes: [UInt8]) throws(VaultError) -> [(String, Entry)] {
        // What vaultfile writes is read directly (`NativeJSONReader`); anything else through the decoder.
        if let direct = NativeJSONReader.document(bytes) { return try parse(direct) }
        return try parse(try JSONDocument.decode(Document.self, from: bytes, what: "a vaultfile JSON export"))
    }

    /// The entries of a document read directly (`NativeJSONReader.items`), in file order: as
    /// `parse(_:)` of its document (same version check, same errors in the same order), each item
    /// that the reader could turn into an entry taken as it is.
    static func parse(version: Int, items: [ReadItem]) throws(VaultError) -> [(String, Entry)] {
        guard version == 1 else {
            throw .malformedInput("vaultfile JSON export version \(version) is unknown; this build reads version 1")
        }
        var result: [(String, Entry)] = []
        result.reserveCapacity(items.count)
        for (index, read) in items.enumerated() {
            switch read {
            case .entry(let name, let entry, _, _, _): result.append((name, entry))
            case .item(let item): result.append((item.name, try entry(from: item, "entry \(index + 1) ('\(item.name)')")))
            }
        }
        return result
    }

    /// The entries of a document read, in file order.
    static func parse(_ document: Document) throws(VaultError) -> [(String, Entry)] {
        guard document.vaultfile_export == 1 else {
            throw .malformedInput("vaultfile JSON export version \(document.vaultfile_export) is unknown; this build reads version 1")
        }
        var result: [(String, Entry)] = []
        for (index, item) in document.entries.enumerated() {
            result.append((item.name, try entry(from: item, "entry \(index + 1) ('\(item.name)')")))
        }
        return result
    }

    /// The entry an item holds; `where_` names it in errors (also for export version 2, HistoryJSON),
    /// built only for an error (formatting it for every entry was a tenth of a JSON import).
    static func entry(from item: Item, _ where_: @autoclosure () -> String) throws(VaultError) -> Entry {
        let value: [UInt8]
        switch (item.value, item.value_base64) {
        case (let text?, nil): value = Array(text.utf8)
        case (nil, let encoded?): value = try decodeBase64(encoded, where_())
        default: throw .malformedInput("\(where_()) needs exactly one of value and value_base64")
        }
        var fields: [String: [UInt8]] = [:]
        for (field, text) in item.fields ?? [:] { fields[field] = Array(text.utf8) }
        for (field, encoded) in item.fields_base64 ?? [:] {
            guard fields[field] == nil else { throw .malformedInput("\(where_()): field '\(field)' is given twice") }
            fields[field] = try decodeBase64(encoded, where_())
        }
        let created = item.created?.milliseconds ?? item.modified?.milliseconds ?? 0
        return Entry(value: value, fields: fields, created: created, modified: item.modified?.milliseconds ?? created)
    }

    /// The entries of `vault` whose names start with `prefix`, as a vaultfile JSON export: byte for
    /// byte what `export(_:)` writes of `sortedEntries` (`InterchangeTests.test_export_fromBytesMatchesEntries`).
    ///
    /// Written from each entry's bytes where they lie (`Vault.forEachEntryBytes`): no `Entry`, no
    /// dictionary, no string per entry; decoding every entry first made the export 9× a `verify`.
    static func export(_ vault: Vault, prefix: String) throws(VaultError) -> [UInt8] {
        var out = ExportBuffer(capacity: vault.storedRecordsByteCount + vault.count * 160)
        vault.forEachEntryBytes(withPrefix: prefix) { entry in
            out.append(out.count == 0 ? "{\n  \"entries\" : [\n    {\n" : ",\n    {\n")
            out.append("      \"created\" : ")
            out.appendDecimal(entry.created)
            // Text fields, then binary ones in base64, each group in name order; at most 64 fields.
            var binary: UInt64 = 0
            for (index, field) in entry.fields.enumerated() where !UTF8Bytes.isValid(field.value) { binary |= 1 << UInt64(index) }
            let all: UInt64 = entry.fields.count == 64 ? .max : (1 << UInt64(entry.fields.count)) - 1
            for inBase64 in [false, true] where (inBase64 ? binary : all & ~binary) != 0 {
                out.append(inBase64 ? ",\n      \"fields_base64\" : {\n" : ",\n      \"fields\" : {\n")
                var first = true
                for (index, field) in entry.fields.enumerated() where (binary >> UInt64(index)) & 1 == (inBase64 ? 1 : 0) {
                    out.append(first ? "        " : ",\n        ")
                    first = false
                    appendString(field.name, to: &out)
                    out.append(" : ")
                    if inBase64 { appendBase64(field.value, to: &out) } else { appendString(field.value, to: &out) }
                }
                out.append("\n      }")
            }
            out.append(",\n      \"modified\" : ")
            out.appendDecimal(entry.modified)
            out.append(",\n      \"name\" : ")
            appendString(entry.name, to: &out)
            if UTF8Bytes.isValid(entry.value) {
                out.append(",\n      \"value\" : ")
                appendString(entry.value, to: &out)
            } else {
                out.append(",\n      \"value_base64\" : ")
                appendBase64(entry.value, to: &out)
            }
            out.append("\n    }")
        }
        guard out.count > 0 else { return try exportThroughEncoder([]) }
        out.append("\n  ],\n  \"vaultfile_export\" : 1\n}\n")
        return out.take()
    }

    /// `appendString(_:to:)` into an export's buffer, runs that need no escape copied in one piece:
    /// eight bytes at a time are checked for a control, `"` or `\\` (most text holds none).
    static func appendString(_ text: UnsafeRawBufferPointer, to out: inout ExportBuffer) {
        let digits: StaticString = "0123456789abcdef"
        out.append(UInt8(ascii: "\""))
        var run = 0, index = 0
        while index < text.count {
            if index &+ 8 <= text.count, !needsEscape(text.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index &+= 8
                continue
            }
            let byte = text[index]
            index &+= 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            out.append(UnsafeRawBufferPointer(rebasing: text[run..<index &- 1]))
            run = index
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(byte)
            case 0x08: out.append("\\b")
            case 0x09: out.append("\\t")
            case 0x0A: out.append("\\n")
            case 0x0C: out.append("\\f")
            case 0x0D: out.append("\\r")
            default:
                out.append("\\u00")
                out.append(digits.utf8Start[Int(byte >> 4)])
                out.append(digits.utf8Start[Int(byte & 0x0F)])
            }
        }
        out.append(UnsafeRawBufferPointer(rebasing: text[run...]))
        out.append(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes of `word` is below 0x20, `"` or `\\` (no false negatives:
    /// the borrow of a subtraction can only add a false positive above a true one).
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        return (word &- 0x20 &* ones) & ~word & highs != 0 || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones))
    }

    /// `appendBase64(_:to:)` into an export's buffer.
    private static func appendBase64(_ bytes: UnsafeRawBufferPointer, to out: inout ExportBuffer) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        out.append(UInt8(ascii: "\""))
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            let group = UInt32(bytes[index]) << 16 | (count > 1 ? UInt32(bytes[index + 1]) << 8 : 0) | (count > 2 ? UInt32(bytes[index + 2]) : 0)
            for position in 0..<4 {
                out.append(position <= count ? alphabet.utf8Start[Int(group >> UInt32(18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The export through `JSONEncoder`: the plain reference of `export`, and its output for an
    /// empty vault.
    static func exportThroughEncoder(_ entries: [(name: String, entry: Entry)]) throws(VaultError) -> [UInt8] {
        let items = entries.map { item($0.name, $0.entry) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(Document(vaultfile_export: 1, entries: items))) + [0x0A]
        } catch {
            throw .malformedInput("could not encode the export: \(error)")
        }
    }

    /// One entry as an item: UTF-8 text as is, anything else in base64 (also for HistoryJSON).
    static func item(_ name: String, _ entry: Entry) -> Item {
        var item = Item(name: name, created: Time(milliseconds: entry.created), modified: Time(milliseconds: entry.modified))
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
    private static func decodeBase64(_ text: String, _ where_: @autoclosure () -> String) throws(VaultError) -> [UInt8] {
        guard let data = Data(base64Encoded: text) else { throw .malformedInput("\(where_()) has invalid base64") }
        return Array(data)
    }
}
