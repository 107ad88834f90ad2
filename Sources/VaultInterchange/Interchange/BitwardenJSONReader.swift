// MARK: - Bitwarden JSON, read directly

/// Reads an unencrypted Bitwarden export into `BitwardenJSON.Export` without `JSONDecoder`:
/// the duplicate-key scan and Codable took nine tenths of an import of 10,000 items (43× a `set`
/// at 100,000).
///
/// It takes only what it is sure the scan and `JSONDecoder` read the same way: objects with each
/// key once (compared as strings, as the scan compares them), the schema's members as their types
/// (strings, `null` for an optional, integers without fraction or exponent for `type`, `true` or
/// `false` for `encrypted`), and any other member's value skipped when it is a string, `true`,
/// `false`, `null`, a short integer, or an object or array of those at most `maxDepth` deep.
/// Anything else (a fraction, a byte-order mark, a repeated key, a missing `type` or folder `id`, a
/// value of the wrong type, a syntax error) makes it return nil, and the caller decodes the
/// document through `JSONDocument.decode`, whose messages name the problem: the plain reference,
/// tied to this reader by `InterchangeTests.test_bitwardenReader_readsWhatTheDecoderReadsOrDeclines`.
struct BitwardenJSONReader: JSONWalker {
    /// The deepest nesting of a skipped value.
    static let maxDepth = 16

    let bytes: [UInt8]
    var position = 0
    /// The keys of the objects `readKeyedObject` is inside, innermost last (one array for all).
    var keys: [Range<Int>] = []
    /// The unknown keys of the item being read (`BitwardenJSON.Item.unknownKeys`), as `login.KEY`…
    var unknown: [String] = []
    /// How many items were begun.
    private var itemsBegun = 0
    /// The first integer member (an item's `type` or `reprompt`, a field's `type` or `linkedId`, a
    /// URI's `match`) whose value is a number no `Int` is (`1e308`, `1.5`, 30 digits): its path
    /// (`items[0].fields[1].type`), what it should be, and where the number starts; what the
    /// decoder refuses too, said here as what it is (att58 F9, recheck60 R3).
    private(set) var badNumber: (path: String, expected: String, position: Int)?
    /// The index of the field and of the URI being read, within their item and login.
    private var fieldIndex = 0, uriIndex = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The export, or nil when it is not one this reader takes.
    static func export(_ bytes: [UInt8]) -> BitwardenJSON.Export? {
        var reader = BitwardenJSONReader(bytes)
        guard let export = reader.readExport(each: nil) else { return nil }
        reader.skipWhitespace()
        return reader.position == bytes.count ? export : nil
    }

    /// `export(_:)`, handing each item to `each` as it is read instead of keeping it: the
    /// export's `items` is then `[]` when the document has a list (nil for none or `null`). Nil
    /// when the document is not one this reader takes (some items may have been handed over).
    static func export(_ bytes: [UInt8], each: (BitwardenJSON.Item) -> Void) -> BitwardenJSON.Export? {
        var reader = BitwardenJSONReader(bytes)
        guard let export = withoutActuallyEscaping(each, do: { reader.readExport(each: $0) }) else { return nil }
        reader.skipWhitespace()
        return reader.position == bytes.count ? export : nil
    }

    // MARK: The schema

    private mutating func readExport(each: ((BitwardenJSON.Item) -> Void)?) -> BitwardenJSON.Export? {
        var export = BitwardenJSON.Export(encrypted: nil, folders: nil, items: nil)
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "encrypted": return reader.readNullable { $0.readBool() }.map { export.encrypted = $0 } != nil
            case "folders": return reader.readNullable { $0.readArray { $0.readFolder() } }.map { export.folders = $0 } != nil
            case "items" where each != nil:
                let list = reader.readNullable { reader -> Bool? in
                    reader.walkArray { reader in
                        guard let item = reader.readItem() else { return false }
                        each?(item)
                        return true
                    } ? true : nil
                }
                return list.map { export.items = $0 == nil ? nil : [] } != nil
            case "items": return reader.readNullable { $0.readArray { $0.readItem() } }.map { export.items = $0 } != nil
            default: return reader.skipValue(depth: 0)
            }
        }
        return complete ? export : nil
    }

    mutating func readFolder() -> BitwardenJSON.Folder? {
        var id: String?, name: String?
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "id": id = reader.readString(); return id != nil
            case "name": name = reader.readString(); return name != nil
            default: return reader.skipValue(depth: 1)
            }
        }
        guard complete, let id, let name else { return nil }
        return BitwardenJSON.Folder(id: id, name: name)
    }

    private mutating func readItem() -> BitwardenJSON.Item? {
        let index = itemsBegun
        itemsBegun += 1
        var item = BitwardenJSON.Item(type: 0, name: nil, folderId: nil, notes: nil, login: nil, card: nil, identity: nil,
                                      fields: nil, revisionDate: nil, creationDate: nil)
        var type: Int?
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "type":
                let start = reader.position
                guard let number = reader.readInteger(), let fits = Int(exactly: number) else {
                    reader.noteBadNumber("items[\(index)].type", Self.expectedItemType, at: start)
                    return false
                }
                type = fits
                return true
            case "name": return reader.readNullable { $0.readString() }.map { item.name = $0 } != nil
            case "folderId": return reader.readNullable { $0.readString() }.map { item.folderId = $0 } != nil
            case "notes": return reader.readNullable { $0.readString() }.map { item.notes = $0 } != nil
            case "revisionDate": return reader.readNullable { $0.readString() }.map { item.revisionDate = $0 } != nil
            case "creationDate": return reader.readNullable { $0.readString() }.map { item.creationDate = $0 } != nil
            case "login": return reader.readNullable { $0.readLogin(item: index) }.map { item.login = $0 } != nil
            case "card": return reader.readNullable { $0.readStringMap() }.map { item.card = $0 } != nil
            case "identity": return reader.readNullable { $0.readStringMap() }.map { item.identity = $0 } != nil
            case "fields":
                reader.fieldIndex = 0
                return reader.readNullable { $0.readArray { $0.readCustomField(item: index) } }.map { item.fields = $0 } != nil
            case "favorite": return reader.readNullable { $0.readBool() }.map { item.favorite = $0 } != nil
            case "reprompt":
                guard let number = reader.readNullableInt(path: "items[\(index)].reprompt", Self.expectedReprompt) else { return false }
                item.reprompt = number
                return true
            case "passwordHistory": return reader.readNullable { $0.readArray { $0.readPasswordVersion() } }.map { item.passwordHistory = $0 } != nil
            case "sshKey": return reader.readNullable { $0.readSSHKey() }.map { item.sshKey = $0 } != nil
            case "organizationId": return reader.readNullable { $0.readString() }.map { item.organizationId = $0 } != nil
            case "collectionIds": return reader.readNullable { $0.readArray { $0.readString() } }.map { item.collectionIds = $0 } != nil
            case "archivedDate": return reader.readNullable { $0.readString() }.map { item.archivedDate = $0 } != nil
            default:
                reader.noteUnknown(key, in: "")
                return reader.skipValue(depth: 1)
            }
        }
        guard complete, let type else { return nil }
        item.type = type
        if !unknown.isEmpty {
            item.unknownKeys = unknown.sorted()
            unknown = []
        }
        return item
    }

    private mutating func readLogin(item: Int) -> BitwardenJSON.Login? {
        var login = BitwardenJSON.Login(username: nil, password: nil, totp: nil, uris: nil)
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "username": return reader.readNullable { $0.readString() }.map { login.username = $0 } != nil
            case "password": return reader.readNullable { $0.readString() }.map { login.password = $0 } != nil
            case "totp": return reader.readNullable { $0.readString() }.map { login.totp = $0 } != nil
            case "uris":
                reader.uriIndex = 0
                return reader.readNullable { $0.readArray { $0.readURI(item: item) } }.map { login.uris = $0 } != nil
            case "fido2Credentials": return reader.readNullable { $0.readArray { $0.readPasskey() } }.map { login.fido2Credentials = $0 } != nil
            default:
                reader.noteUnknown(key, in: "login.")
                return reader.skipValue(depth: 2)
            }
        }
        return complete ? login : nil
    }

    private mutating func readURI(item: Int) -> BitwardenJSON.URI? {
        var uri = BitwardenJSON.URI(uri: nil)
        let place = "items[\(item)].login.uris[\(uriIndex)]"
        uriIndex += 1
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "uri": return reader.readNullable { $0.readString() }.map { uri.uri = $0 } != nil
            case "match": return reader.readNullableInt(path: place + ".match", Self.expectedMatch).map { uri.match = $0 } != nil
            default:
                reader.noteUnknown(key, in: "login.uris.")
                return reader.skipValue(depth: 3)
            }
        }
        return complete ? uri : nil
    }

    private mutating func readCustomField(item: Int) -> BitwardenJSON.CustomField? {
        var field = BitwardenJSON.CustomField(name: nil, value: nil)
        let place = "items[\(item)].fields[\(fieldIndex)]"
        fieldIndex += 1
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "name": return reader.readNullable { $0.readString() }.map { field.name = $0 } != nil
            case "value": return reader.readNullable { $0.readString() }.map { field.value = $0 } != nil
            case "type": return reader.readNullableInt(path: place + ".type", Self.expectedFieldType).map { field.type = $0 } != nil
            case "linkedId": return reader.readNullableInt(path: place + ".linkedId", Self.expectedLinkedID).map { field.linkedId = $0 } != nil
            default:
                reader.noteUnknown(key, in: "fields.")
                return reader.skipValue(depth: 2)
            }
        }
        return complete ? field : nil
    }

    private mutating func readPasswordVersion() -> BitwardenJSON.PasswordVersion? {
        var version = BitwardenJSON.PasswordVersion(password: nil, lastUsedDate: nil)
        let complete = readObject { (reader, key) -> Bool in
            switch key {
            case "password": return reader.readNullable { $0.readString() }.map { version.password = $0 } != nil
            case "lastUsedDate": return reader.readNullable { $0.readString() }.map { version.lastUsedDate = $0 } != nil
            default:
                reader.noteUnknown(key, in: "passwordHistory.")
                return reader.skipValue(depth: 2)
            }
        }
        return complete ? version : nil
    }

    private mutating func readSSHKey() -> BitwardenJSON.SSHKeyItem? {
        var key = BitwardenJSON.SSHKeyItem(privateKey: nil, publicKey: nil, keyFingerprint: nil)
        let complete = readObject { (reader, name) -> Bool in
            switch name {
            case "privateKey": return reader.readNullable { $0.readString() }.map { key.privateKey = $0 } != nil
            case "publicKey": return reader.readNullable { $0.readString() }.map { key.publicKey = $0 } != nil
            case "keyFingerprint": return reader.readNullable { $0.readString() }.map { key.keyFingerprint = $0 } != nil
            default:
                reader.noteUnknown(name, in: "sshKey.")
                return reader.skipValue(depth: 2)
            }
        }
        return complete ? key : nil
    }

    /// A passkey: each member a string, an integer, `true`, `false` or `null` (`PasskeyText`).
    private mutating func readPasskey() -> [String: BitwardenJSON.PasskeyText]? {
        var passkey: [String: BitwardenJSON.PasskeyText] = [:]
        let complete = readObject { (reader, key) -> Bool in
            let text: String?
            if reader.takeLiteral("null") { text = "" }
            else if let flag = reader.readBool() { text = flag ? "true" : "false" }
            else if reader.position < reader.bytes.count, reader.bytes[reader.position] == UInt8(ascii: "\"") { text = reader.readString() }
            else { text = reader.readInteger().map { String($0) } }
            guard let text else { return false }
            passkey[key] = BitwardenJSON.PasskeyText(text: text)
            return true
        }
        return complete ? passkey : nil
    }

    /// Notes `key` (of the object at `path`) as unknown unless known (`BitwardenJSON.knownKeys`), once per item.
    private mutating func noteUnknown(_ key: String, in path: String) {
        guard !BitwardenJSON.isKnown(key, in: path) else { return }
        let full = path + key
        if !unknown.contains(full) { unknown.append(full) }
    }

    /// An object of strings or nulls (`card`, `identity`).
    private mutating func readStringMap() -> [String: String?]? {
        var map: [String: String?] = [:]
        let complete = readObject { (reader, key) -> Bool in
            guard let text = reader.readNullable({ $0.readString() }) else { return false }
            map[key] = .some(text)
            return true
        }
        return complete ? map : nil
    }

    // MARK: Numbers no integer is

    /// What each integer member should be, as its message says.
    static let expectedItemType = "an item type (a small integer: 1 login, 2 secure note, 3 card, 4 identity, 5 SSH key)"
    static let expectedReprompt = "a re-prompt setting (null, or a small integer: 0 none, 1 the master password)"
    static let expectedFieldType = "a field type (null, or a small integer: 0 text, 1 hidden, 2 boolean, 3 linked)"
    static let expectedLinkedID = "the id of a linked field (null, or an integer)"
    static let expectedMatch = "a URI match rule (null, or a small integer: 0 base domain, 1 host, 2 starts with, 3 exact, "
        + "4 regular expression, 5 never)"

    /// Notes the member at `path` whose value at `start` is a JSON number that no `Int` is (which
    /// `JSONDecoder` refuses as well), the first such only; a number that is one (`1.0`, `1e2`)
    /// is left to the decoder, and so is anything that is no number.
    private mutating func noteBadNumber(_ path: @autoclosure () -> String, _ expected: String, at start: Int) {
        guard badNumber == nil else { return }
        var end = start
        while end < bytes.count, end - start < 400, bytes[end] == UInt8(ascii: "-") || bytes[end] == UInt8(ascii: "+")
            || bytes[end] == UInt8(ascii: ".") || bytes[end] | 0x20 == UInt8(ascii: "e") || (0x30...0x39).contains(bytes[end]) { end += 1 }
        guard end > start, let number = Double(String(decoding: bytes[start..<end], as: UTF8.self)),
              Int(exactly: number) == nil else { return }
        badNumber = (path(), expected, start)
    }

    /// What is wrong with an integer member in `bytes`, when one is a number no integer is
    /// (`items[3].reprompt: expected a re-prompt setting (…), found a number that is none (line
    /// 12)`): the message of the import that the decoder would give as "not valid JSON"; nil
    /// when every such member is one.
    static func numberProblem(_ bytes: [UInt8]) -> String? {
        var reader = BitwardenJSONReader(bytes)
        _ = reader.readExport(each: { _ in })
        guard let (path, expected, position) = reader.badNumber else { return nil }
        let line = 1 + bytes[..<position].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        return "\(path): expected \(expected), found a number that is none (line \(line))"
    }

    // MARK: Structure

    /// `null` or an integer that fits an `Int` (as `JSONDecoder` reads an `Int?`); nil when
    /// neither, a number that no `Int` is noted as the member at `path` (`noteBadNumber`).
    mutating func readNullableInt(path: @autoclosure () -> String, _ expected: String) -> Int?? {
        let start = position
        guard let read = readNullable({ reader -> Int? in reader.readInteger().flatMap { Int(exactly: $0) } }) else {
            position = start
            noteBadNumber(path(), expected, at: start)
            return nil
        }
        return read
    }

    /// `null` as `.some(nil)`, else what `read` reads as `.some(value)`; nil when neither.
    mutating func readNullable<T>(_ read: (inout BitwardenJSONReader) -> T?) -> T?? {
        if takeLiteral("null") { return .some(nil) }
        return read(&self).map { .some($0) }
    }

    /// `{ "key" : value, … }`, `member` reading each value; false on anything else, a key given
    /// twice included (keys compared as strings).
    private mutating func readObject(_ member: (inout BitwardenJSONReader, String) -> Bool) -> Bool {
        var keys: [String] = []
        keys.reserveCapacity(12)
        return walkObject(key: { $0.readKeyOnce(in: &keys) }, member: member)
    }

    /// `[ element, … ]`; nil on anything else.
    mutating func readArray<T>(_ element: (inout BitwardenJSONReader) -> T?) -> [T]? {
        var elements: [T] = []
        let complete = walkArray { reader in
            guard let next = element(&reader) else { return false }
            elements.append(next)
            return true
        }
        return complete ? elements : nil
    }

    /// A value of a member outside the schema: what the type's comment lists, else false.
    mutating func skipValue(depth: Int) -> Bool {
        guard depth < Self.maxDepth, position < bytes.count else { return false }
        switch bytes[position] {
        case UInt8(ascii: "\""): return readString() != nil
        case UInt8(ascii: "t"): return takeLiteral("true")
        case UInt8(ascii: "f"): return takeLiteral("false")
        case UInt8(ascii: "n"): return takeLiteral("null")
        case UInt8(ascii: "{"): return readObject { reader, _ in reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["): return readArray { reader in reader.skipValue(depth: depth + 1) ? true : nil } != nil
        default: return readInteger() != nil
        }
    }

    // MARK: Values

    mutating func readBool() -> Bool? {
        if takeLiteral("true") { return true }
        if takeLiteral("false") { return false }
        return nil
    }

    /// `-?(0|[1-9][0-9]*)` of at most 18 digits.
    mutating func readInteger() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        let start = position
        var magnitude: Int64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]), position - start < 18 {
            magnitude = magnitude * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        // A fraction, an exponent, a nineteenth digit: left to the decoder.
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        guard !(negative && magnitude == 0) else { return nil }  // -0: left to the decoder
        return negative ? -magnitude : magnitude
    }

    /// A string with its escapes resolved (`JSONString`).
    mutating func readString() -> String? {
        JSONString.read(bytes, at: &position)
    }
}
