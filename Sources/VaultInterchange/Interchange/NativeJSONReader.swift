import VaultModel

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
struct NativeJSONReader: JSONWalker {
    let bytes: [UInt8]
    var position = 0

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

    /// The entries of a document of version 1 written as records (`ImportRecordWriter`), each as
    /// `NativeJSON.parse(version:items:)` makes it of the item `items` reads; nil when the document
    /// is not one `items` takes, its version is not 1, an item is not one it turns into an entry
    /// (no text value, a base64 value or field), a name is not ASCII, a field key is not ASCII
    /// without an escape, or the writer declines an entry (`Vault.isValidPut`, a field twice): the
    /// caller then reads it through `items`, whose path names any problem.
    /// `ImportRecordsTests.test_nativeJSONRecords_matchTheItems` ties the two.
    static func records(_ bytes: [UInt8]) -> WrittenRecords? {
        guard var writer = ImportRecordWriter(capacity: bytes.count) else { return nil }
        var reader = NativeJSONReader(bytes)
        guard reader.readRecordsDocument(into: &writer) == 1 else { return nil }
        reader.skipWhitespace()
        guard reader.position == bytes.count, writer.failure == nil else { return nil }
        return try? writer.records()
    }

    // MARK: Structure

    /// `readDocument`, each item written as its record; the version, or nil.
    private mutating func readRecordsDocument(into writer: inout ImportRecordWriter) -> Int? {
        var version: Int?, sawEntries = false
        var fields: [ImportField] = []
        let complete = readObject { (reader, key) -> Bool in
            switch reader.text(of: key) {
            case "vaultfile_export" where version == nil:
                guard let number = reader.readInteger(), let fits = Int(exactly: number) else { return false }
                version = fits
            case "entries" where !sawEntries:
                sawEntries = true
                return reader.readArray { reader in reader.readRecord(into: &writer, fields: &fields) }
            default:
                return false
            }
            return true
        }
        guard complete, sawEntries else { return nil }
        return version
    }

    /// `readItem` of an item with a text value and text fields, written as its record.
    private mutating func readRecord(into writer: inout ImportRecordWriter, fields: inout [ImportField]) -> Bool {
        var name: ImportBytes?, value: ImportBytes?, created: Int64?, modified: Int64?, sawFields = false
        fields.removeAll(keepingCapacity: true)
        let complete = readObject { (reader, key) -> Bool in
            switch reader.member(key) {
            case .name?: guard name == nil else { return false }; name = reader.readImportBytes(); return name != nil
            case .value?: guard value == nil else { return false }; value = reader.readImportBytes(); return value != nil
            case .created?: guard created == nil else { return false }; created = reader.readInteger(); return created != nil
            case .modified?: guard modified == nil else { return false }; modified = reader.readInteger(); return modified != nil
            case .fields?:
                guard !sawFields else { return false }
                sawFields = true
                return reader.readObject { (reader, key) -> Bool in
                    guard case .ascii(let range) = key, let text = reader.readImportBytes() else { return false }
                    fields.append(ImportField(name: .input(range), value: text))
                    return true
                }
            case .valueBase64?, .fieldsBase64?, nil: return false
            }
        }
        guard complete, let name, let value else { return false }
        let createdTime = created ?? modified ?? 0
        return bytes.withUnsafeBytes { input in
            writer.add(name: name, created: createdTime, modified: modified ?? createdTime, value: value, fields: &fields, in: input)
        }
    }

    /// A string's UTF-8 bytes, escapes resolved, where they lie when they can (`JSONString.readImportBytes`).
    private mutating func readImportBytes() -> ImportBytes? {
        JSONString.readImportBytes(bytes, at: &position)
    }

    private mutating func readDocument() -> (version: Int, items: [NativeJSON.ReadItem])? {
        var version: Int?, entries: [NativeJSON.ReadItem]?
        let complete = readObject { (reader, key) -> Bool in
            switch reader.text(of: key) {
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
            // Every member read must give a value (a nil is a member not taken), and a key that
            // is not one of the seven, or is one given before, is a document left to the decoder.
            switch reader.member(key) {
            case .name?: guard name == nil else { return false }; name = reader.readString(); return name != nil
            case .value?: guard value == nil else { return false }; value = reader.readBytes(); return value != nil
            case .valueBase64?: guard valueBase64 == nil else { return false }; valueBase64 = reader.readString(); return valueBase64 != nil
            case .created?: guard created == nil else { return false }; created = reader.readInteger(); return created != nil
            case .modified?: guard modified == nil else { return false }; modified = reader.readInteger(); return modified != nil
            case .fields?: guard fields == nil else { return false }; fields = reader.readByteMap(); return fields != nil
            case .fieldsBase64?: guard fieldsBase64 == nil else { return false }; fieldsBase64 = reader.readStringMap(); return fieldsBase64 != nil
            case nil: return false
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
            // One lookup: a key given twice fails the document whichever is read first.
            guard let bytes = reader.readBytes(), map.updateValue(bytes, forKey: reader.text(of: key)) == nil else { return false }
            return true
        }
        return complete ? map : nil
    }

    /// An object of strings, each key once (compared as strings, as the duplicate-key scan does).
    private mutating func readStringMap() -> [String: String]? {
        var map: [String: String] = [:]
        let complete = readObject { (reader, key) -> Bool in
            let key = reader.text(of: key)
            guard map[key] == nil, let text = reader.readString() else { return false }
            map[key] = text
            return true
        }
        return complete ? map : nil
    }

    /// A key as read: where its bytes lie when they are ASCII without an escape (no string made of
    /// them), else its text.
    private enum Key {
        case ascii(Range<Int>)
        case text(String)
    }

    /// The members of an entry.
    enum Member {
        case name, value, valueBase64, created, modified, fields, fieldsBase64
    }

    /// The member `key` names, by its bytes when it is ASCII without an escape; else through its
    /// text, compared as strings (`memberByText`, the plain reference; a key such as `"n\u0061me"`
    /// names `name` too). `InterchangeTests.test_nativeJSONMember_bytesMatchTheText` ties the two.
    private func member(_ key: Key) -> Member? {
        switch key {
        case .text(let text): return Self.memberByText(text)
        case .ascii(let range):
            return bytes.withUnsafeBufferPointer { Self.member(ascii: UnsafeBufferPointer(rebasing: $0[range])) }
        }
    }

    /// The member an ASCII key names, by its bytes.
    static func member(ascii key: UnsafeBufferPointer<UInt8>) -> Member? {
        func named(_ name: StaticString) -> Bool {
            guard key.count == name.utf8CodeUnitCount else { return false }
            for offset in 0..<key.count where key[offset] != name.utf8Start[offset] { return false }
            return true
        }
        switch key.count {
        case 4: return named("name") ? .name : nil
        case 5: return named("value") ? .value : nil
        case 6: return named("fields") ? .fields : nil
        case 7: return named("created") ? .created : nil
        case 8: return named("modified") ? .modified : nil
        case 12: return named("value_base64") ? .valueBase64 : nil
        case 13: return named("fields_base64") ? .fieldsBase64 : nil
        default: return nil
        }
    }

    /// The member a key's text names, compared as strings.
    static func memberByText(_ key: String) -> Member? {
        switch key {
        case "name": return .name
        case "value": return .value
        case "value_base64": return .valueBase64
        case "created": return .created
        case "modified": return .modified
        case "fields": return .fields
        case "fields_base64": return .fieldsBase64
        default: return nil
        }
    }

    /// The text of a key.
    private func text(of key: Key) -> String {
        switch key {
        case .text(let text): return text
        case .ascii(let range): return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
        }
    }

    /// `{ "key" : value, … }`, `member` reading each value; false on anything else. A key given
    /// twice is the member's to refuse (each member read once; the maps by their keys' text).
    private mutating func readObject(_ member: (inout NativeJSONReader, Key) -> Bool) -> Bool {
        walkObject(key: { $0.readKey() }, member: member)
    }

    /// `[ element, … ]`, `element` reading each; false on anything else.
    private mutating func readArray(_ element: (inout NativeJSONReader) -> Bool) -> Bool {
        walkArray(element)
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

    /// A key: its bytes' place when ASCII without an escape, else its text (`JSONString.read`'s).
    private mutating func readKey() -> Key? {
        switch JSONString.literal(bytes, at: &position) {
        case .plain(let range, ascii: true)?: return .ascii(range)
        case .plain(let range, ascii: false)?:
            return bytes.withUnsafeBufferPointer { String(validating: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }.map(Key.text)
        case .escaped(let text)?: return .text(text)
        case nil: return nil
        }
    }

    /// A string with its escapes resolved (`JSONString`).
    private mutating func readString() -> String? {
        JSONString.read(bytes, at: &position)
    }

    /// A string's UTF-8 bytes, escapes resolved (`JSONString`).
    private mutating func readBytes() -> [UInt8]? {
        JSONString.readBytes(bytes, at: &position)
    }
}
