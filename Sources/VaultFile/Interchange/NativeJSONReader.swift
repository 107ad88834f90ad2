// MARK: - vaultfile JSON, read directly

/// Reads a vaultfile JSON export into `NativeJSON.Document` without `JSONDecoder`, for the
/// documents vaultfile itself writes: decoding 100,000 entries through Codable took most of an
/// import that ran 37× a `set`.
///
/// It takes only what it is sure `JSONDecoder` reads the same way: the two top-level keys and the
/// seven keys of an entry, strings (escapes and surrogate pairs resolved, UTF-8 checked), integers
/// without fraction or exponent that fit in 64 bits, and no key twice in one object. Anything else
/// (`null`, other keys, other numbers, a byte-order mark, a repeated key, any syntax error) makes it
/// return nil, and the caller reads the document through `JSONDocument.decode`, whose messages
/// name the problem. The plain reference is that path; `InterchangeTests` ties the two.
struct NativeJSONReader {
    private let bytes: [UInt8]
    private var position = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The document, or nil when it is not one this reader takes.
    static func document(_ bytes: [UInt8]) -> NativeJSON.Document? {
        guard let (version, items) = items(bytes) else { return nil }
        return NativeJSON.Document(vaultfile_export: version, entries: items.map(\.item))
    }

    /// The version and the items of the document, each an entry when its shape leaves nothing to
    /// check (a text value, text fields: `NativeJSON.entry(from:_:)` could not fail), else the item
    /// as read; nil when the document is not one this reader takes. An import reads this, without
    /// an `Item` and its strings per entry.
    static func items(_ bytes: [UInt8]) -> (version: Int, items: [NativeJSON.ReadItem])? {
        var reader = NativeJSONReader(bytes)
        guard let read = reader.readDocument() else { return nil }
        reader.skipWhitespace()
        return reader.position == bytes.count ? read : nil
    }

    // MARK: Structure

    private mutating func readDocument() -> (version: Int, items: [NativeJSON.ReadItem])? {
        var version: Int?, entries: [NativeJSON.ReadItem]?
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "vaultfile_export" where version == nil:
                guard let number = reader.readInteger(), let fits = Int(exactly: number) else { return false }
                version = fits
            case "entries" where entries == nil:
                var items: [NativeJSON.ReadItem] = []
                let read = reader.readArray { reader in
                    guard let item = reader.readItem() else { return false }
                    items.append(item)
                    return true
                }
                guard read else { return false }
                entries = items
            default:
                return false
            }
            return true
        }
        guard complete, let version, let entries else { return nil }
        return (version, entries)
    }

    private mutating func readItem() -> NativeJSON.ReadItem? {
        var name: String?, value: [UInt8]?, valueBase64: String?, created: Int64?, modified: Int64?
        var fields: [String: [UInt8]]?, fieldsBase64: [String: String]?
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "name" where name == nil: name = reader.readString()
            case "value" where value == nil: value = reader.readBytes()
            case "value_base64" where valueBase64 == nil: valueBase64 = reader.readString()
            case "created" where created == nil: created = reader.readInteger()
            case "modified" where modified == nil: modified = reader.readInteger()
            case "fields" where fields == nil: fields = reader.readByteMap()
            case "fields_base64" where fieldsBase64 == nil: fieldsBase64 = reader.readStringMap()
            default: return false
            }
            // Every member read must have given a value (a nil here is a member not taken).
            switch key {
            case "name": return name != nil
            case "value": return value != nil
            case "value_base64": return valueBase64 != nil
            case "created": return created != nil
            case "modified": return modified != nil
            case "fields": return fields != nil
            default: return fieldsBase64 != nil
            }
        }
        guard complete, let name else { return nil }
        if let value, valueBase64 == nil, fieldsBase64 == nil {
            // What `NativeJSON.entry(from:_:)` makes of such an item, without its strings.
            let createdTime = created ?? modified ?? 0
            return .entry(name: name, Entry(value: value, fields: fields ?? [:], created: createdTime, modified: modified ?? createdTime),
                          created: created, modified: modified, hasFields: fields != nil)
        }
        return .item(NativeJSON.Item(name: name, value: value.map { String(decoding: $0, as: UTF8.self) }, value_base64: valueBase64,
                                     fields: fields?.mapValues { String(decoding: $0, as: UTF8.self) }, fields_base64: fieldsBase64,
                                     created: created.map(NativeJSON.Time.init(milliseconds:)), modified: modified.map(NativeJSON.Time.init(milliseconds:))))
    }

    /// An object of strings as bytes, each key once (compared as strings, as the duplicate-key scan does).
    private mutating func readByteMap() -> [String: [UInt8]]? {
        var map: [String: [UInt8]] = [:]
        let complete = readObject { (reader, key) -> Bool in
            guard map[key] == nil, let bytes = reader.readBytes() else { return false }
            map[key] = bytes
            return true
        }
        return complete ? map : nil
    }

    /// An object of strings, each key once (compared as strings, as the duplicate-key scan does).
    private mutating func readStringMap() -> [String: String]? {
        var map: [String: String] = [:]
        let complete = readObject { (reader, key) -> Bool in
            guard map[key] == nil, let text = reader.readString() else { return false }
            map[key] = text
            return true
        }
        return complete ? map : nil
    }

    /// `{ "key" : value, … }`, `member` reading each value; false on anything else.
    private mutating func readObject(_ member: (inout NativeJSONReader, String) -> Bool) -> Bool {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipWhitespace()
            guard let key = readString() else { return false }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipWhitespace()
            guard member(&self, key) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// `[ element, … ]`, `element` reading each; false on anything else.
    private mutating func readArray(_ element: (inout NativeJSONReader) -> Bool) -> Bool {
        skipWhitespace()
        guard take(UInt8(ascii: "[")) else { return false }
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return true }
        while true {
            skipWhitespace()
            guard element(&self) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]"))
        }
    }

    // MARK: Values

    /// `-?(0|[1-9][0-9]*)` within Int64.
    private mutating func readInteger() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        let start = position
        var magnitude: UInt64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let (times, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            guard !overflowA && !overflowB else { return nil }
            magnitude = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        // A fraction or an exponent: left to the decoder.
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") || bytes[position] | 0x20 == UInt8(ascii: "e") { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// A string with its escapes resolved (`JSONString`).
    private mutating func readString() -> String? {
        JSONString.read(bytes, at: &position)
    }

    /// A string's UTF-8 bytes, escapes resolved (`JSONString`).
    private mutating func readBytes() -> [UInt8]? {
        JSONString.readBytes(bytes, at: &position)
    }

    // MARK: Bytes

    private mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }
}
