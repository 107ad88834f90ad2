import VaultModel

// MARK: - Entries in one pass

extension BitwardenJSONReader {
    /// The entries `BitwardenJSON.parseReference` makes of `bytes`, and `names` as it leaves them,
    /// read in one pass: each item becomes its entry as it is read, without an `Export`, an `Item`
    /// or a string per key, value or time (times parsed once per distinct text, `Timestamps.Cache`).
    ///
    /// It takes what `export(_:)` takes, with fewer shapes: every key ASCII without an escape (each
    /// once, compared by bytes, which for such keys is comparing strings), items of type 1 or 2
    /// without a `card` or `identity` object, folders before items, not encrypted, and every name
    /// valid. Anything else returns nil and the caller takes the reference path, whose messages
    /// name the problem. `InterchangeTests.test_bitwardenEntries_matchTheReferenceParse` ties the two.
    static func entries(_ bytes: [UInt8], now: Int64, names: ImportedNameCleaner.Names) -> (entries: [(String, Entry)], names: ImportedNameCleaner.Names)? {
        read(bytes, into: ImportedEntryList(), now: now, names: names).map { ($0.output.entries, $0.names) }
    }

    /// What `entries(_:now:names:)` reads, each entry written as its record (`ImportRecordWriter`),
    /// by the same pass; nil also when the writer declines an entry (a non-ASCII name, a limit).
    /// `ImportRecordsTests.test_bitwardenRecords_matchTheEntries` ties the two.
    static func records(_ bytes: [UInt8], now: Int64, names: ImportedNameCleaner.Names) -> (records: StoredRecords, names: ImportedNameCleaner.Names)? {
        guard let writer = ImportRecordWriter(capacity: bytes.count) else { return nil }
        return read(bytes, into: writer, now: now, names: names).map { ($0.output.records(), $0.names) }
    }

    private static func read<Output: ImportedEntrySink>(_ bytes: [UInt8], into output: Output, now: Int64, names: ImportedNameCleaner.Names)
        -> (output: Output, names: ImportedNameCleaner.Names)? {
        var reader = BitwardenJSONReader(bytes)
        var sink = EntrySink(now: now, names: names, output: output)
        // No `items` list: the reference refuses the document, and says why.
        guard reader.readEntriesDocument(into: &sink), sink.sawItems else { return nil }
        reader.skipWhitespace()
        return reader.position == bytes.count ? (sink.output, sink.names) : nil
    }

    private mutating func readEntriesDocument<Output>(into sink: inout EntrySink<Output>) -> Bool {
        readKeyedObject { reader, key in
            if reader.key(key, is: "encrypted") {
                guard let encrypted = reader.readNullable({ $0.readBool() }) else { return false }
                return encrypted != true  // the reference refuses it, and says why
            }
            if reader.key(key, is: "folders") {
                guard !sink.sawItems, let folders = reader.readNullable({ $0.readArray { $0.readFolder() } }) else { return false }
                sink.folders = Dictionary((folders ?? []).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
                return true
            }
            if reader.key(key, is: "items") {
                sink.sawItems = true
                if reader.takeLiteral("null") { return false }  // the reference refuses it
                return reader.readArray { reader -> Bool? in reader.readEntry(into: &sink) ? true : nil } != nil
            }
            return reader.skipValue(depth: 0)
        }
    }

    /// One item, made into its entry as `BitwardenJSON.parseReference` makes it.
    private mutating func readEntry<Output>(into sink: inout EntrySink<Output>) -> Bool {
        var type: Int?, title: ImportBytes?, folderId: String?
        var notes: ImportBytes?, username: ImportBytes?, password: ImportBytes?, totp: ImportBytes?, url: ImportBytes?
        var revision: Int64?, creation: Int64?
        var custom: [(label: String?, text: ImportBytes?)] = []
        let complete = readKeyedObject { reader, key in
            if reader.key(key, is: "type") {
                guard let number = reader.readInteger(), let fits = Int(exactly: number) else { return false }
                type = fits
                return true
            }
            if reader.key(key, is: "name") { return reader.readNullable { $0.readStringBytes() }.map { title = $0 } != nil }
            if reader.key(key, is: "folderId") { return reader.readNullable { $0.readString() }.map { folderId = $0 } != nil }
            if reader.key(key, is: "notes") { return reader.readNullable { $0.readStringBytes() }.map { notes = $0 } != nil }
            if reader.key(key, is: "revisionDate") { return reader.readTime(&revision, times: &sink.times) }
            if reader.key(key, is: "creationDate") { return reader.readTime(&creation, times: &sink.times) }
            if reader.key(key, is: "login") {
                if reader.takeLiteral("null") { return true }
                return reader.readKeyedObject { reader, key in
                    if reader.key(key, is: "username") { return reader.readNullable { $0.readStringBytes() }.map { username = $0 } != nil }
                    if reader.key(key, is: "password") { return reader.readNullable { $0.readStringBytes() }.map { password = $0 } != nil }
                    if reader.key(key, is: "totp") { return reader.readNullable { $0.readStringBytes() }.map { totp = $0 } != nil }
                    if reader.key(key, is: "uris") {
                        if reader.takeLiteral("null") { return true }
                        var first = true
                        return reader.readArray { reader -> Bool? in
                            var uri: ImportBytes?
                            guard reader.readKeyedObject({ reader, key in
                                if reader.key(key, is: "uri") { return reader.readNullable { $0.readStringBytes() }.map { uri = $0 } != nil }
                                return reader.skipValue(depth: 3)
                            }) else { return nil }
                            if first { url = uri }  // the reference takes the first URI's
                            first = false
                            return true
                        } != nil
                    }
                    return reader.skipValue(depth: 2)
                }
            }
            if reader.key(key, is: "card") || reader.key(key, is: "identity") { return reader.takeLiteral("null") }
            // Read by `BitwardenJSON.read` since issue 44: declined here unless absent in effect.
            if reader.key(key, is: "favorite") { return reader.readNullable { $0.readBool() } != nil }
            if reader.key(key, is: "reprompt") { return reader.readNullable { $0.readInteger().flatMap { Int(exactly: $0) } } != nil }
            if reader.key(key, is: "passwordHistory") { return reader.takeLiteral("null") }
            if reader.key(key, is: "fields") {
                if reader.takeLiteral("null") { return true }
                return reader.readArray { reader -> Bool? in
                    var label: String?, text: ImportBytes?
                    guard reader.readKeyedObject({ reader, key in
                        if reader.key(key, is: "name") { return reader.readNullable { $0.readString() }.map { label = $0 } != nil }
                        if reader.key(key, is: "value") { return reader.readNullable { $0.readStringBytes() }.map { text = $0 } != nil }
                        return reader.skipValue(depth: 2)
                    }) else { return nil }
                    custom.append((label, text))
                    return true
                } != nil
            }
            return reader.skipValue(depth: 1)
        }
        guard complete, let type, type == 1 || type == 2 else { return false }
        let folder = folderId.flatMap { sink.folders[$0] }.map { $0.split(separator: "/").map(String.init) } ?? []
        return bytes.withUnsafeBytes { input in
            let name: ImportBytes
            if folder.isEmpty, let title, title.count > 0 {
                // A title outside folders, by its bytes: a string is made only of a renamed one.
                name = title.withBytes(in: input) { sink.names.changedName(ofTitle: $0) }.map(ImportBytes.string) ?? title
            } else {
                let itemName = title.map { $0.string(in: input) } ?? "untitled"
                name = .string(sink.names.name(fromParts: folder.isEmpty ? [itemName] : folder + [itemName]))
            }
            // The reference's order of puts (a later one replaces an earlier); these labels are field names as they are.
            var fields = sink.fields
            fields.removeAll(keepingCapacity: true)
            defer { sink.fields = fields }
            // Where each field name lies in `fields`, once there are more than a few: a scan of
            // `fields` per put made an item of n custom fields cost n² compares (40,000 fields in a
            // 1.6 MB file took 27 s; the reference's dictionary, 0.01 s).
            var positions: [[UInt8]: Int] = [:]
            func put(_ field: ImportBytes, _ text: ImportBytes?) {
                guard let text, text.count > 0 else { return }
                if positions.isEmpty && fields.count < Self.fieldsScanned {
                    let earlier = field.withBytes(in: input) { name in
                        fields.firstIndex { $0.name.withBytes(in: input) { compareBytes($0, name) == 0 } }
                    }
                    if let earlier { fields[earlier].value = text } else { fields.append(ImportField(name: field, value: text)) }
                    return
                }
                if positions.isEmpty {
                    for index in fields.indices { positions[fields[index].name.array(in: input)] = index }
                }
                let key = field.array(in: input)
                if let earlier = positions[key] {
                    fields[earlier].value = text
                } else {
                    positions[key] = fields.count
                    fields.append(ImportField(name: field, value: text))
                }
            }
            let value: ImportBytes
            if type == 1 {
                value = password ?? .owned([])
                put(.literal("username"), username)
                put(.literal("url"), url)
                put(.literal("totp"), totp)
                put(.literal("notes"), notes)
            } else {
                value = notes ?? .owned([])
            }
            for (label, text) in custom { put(.string(ImportedNameCleaner.fieldName(fromLabel: label ?? "field")), text) }
            let created = creation ?? revision ?? sink.now
            guard name.withBytes(in: input, EntryName.isValid(utf8:)) else { return false }  // the reference names the problem
            return sink.output.add(name: name, created: created, modified: revision ?? created, value: value, fields: &fields, in: input)
        }
    }

    /// The number of fields an item's puts find by a scan; past it, by a dictionary.
    static let fieldsScanned = 16

    /// The number of keys of an object checked for a repeat by a scan; past it, by a set.
    static let keysScanned = 16

    /// `null`, or a string read as a time (`Timestamps`, nil when it is not one); false when neither.
    private mutating func readTime(_ time: inout Int64?, times: inout Timestamps.Cache) -> Bool {
        if takeLiteral("null") { return true }
        switch JSONString.literal(bytes, at: &position) {
        case .plain(let range, let ascii)?:
            return bytes.withUnsafeBufferPointer { buffer in
                let text = UnsafeBufferPointer(rebasing: buffer[range])
                guard ascii || String(validating: text, as: UTF8.self) != nil else { return false }
                time = times.parse(utf8: text)
                return true
            }
        case .escaped(let text)?:
            time = times.parse(text)
            return true
        case nil:
            return false
        }
    }

    /// A string's UTF-8 bytes, escapes resolved, where they lie when they can (`JSONString.readImportBytes`).
    private mutating func readStringBytes() -> ImportBytes? {
        JSONString.readImportBytes(bytes, at: &position)
    }

    /// `{ "key" : value, … }` whose every key is ASCII without an escape, each once; `member` reads
    /// each value, given where its key lies. False on anything else.
    private mutating func readKeyedObject(_ member: (inout BitwardenJSONReader, Range<Int>) -> Bool) -> Bool {
        let mark = keys.count
        defer { keys.removeLast(keys.count - mark) }
        // The object's keys as a set once it has more than a few: comparing each key with every
        // earlier one made an object of n keys cost n² compares (40,000 keys: 2.7 s).
        var seen: Set<ArraySlice<UInt8>> = []
        return walkObject(key: { $0.readKeyOnce(since: mark, seen: &seen) }, member: member)
    }

    /// The key reader of `readKeyedObject`: an ASCII key without an escape not given before in
    /// the object whose keys start at `mark`, by a scan of them, past `keysScanned` by `seen`.
    @inline(__always)
    private mutating func readKeyOnce(since mark: Int, seen: inout Set<ArraySlice<UInt8>>) -> Range<Int>? {
        guard let key = readASCIIKey() else { return nil }
        if keys.count - mark < Self.keysScanned {
            guard !isRepeated(key, since: mark) else { return nil }
        } else {
            if seen.isEmpty { for earlier in keys[mark...] { seen.insert(bytes[earlier]) } }
            guard seen.insert(bytes[key]).inserted else { return nil }
        }
        keys.append(key)
        return key
    }

    /// Whether the key at `key` is one of `keys` from `mark` on, byte for byte.
    private func isRepeated(_ key: Range<Int>, since mark: Int) -> Bool {
        guard mark < keys.count else { return false }
        return bytes.withUnsafeBytes { all in
            let text = UnsafeRawBufferPointer(rebasing: all[key])
            for index in mark..<keys.count where keys[index].count == key.count {
                if compareBytes(UnsafeRawBufferPointer(rebasing: all[keys[index]]), text) == 0 { return true }
            }
            return false
        }
    }

    /// Whether the key at `range` is `name`.
    @inline(__always)
    private func key(_ range: Range<Int>, is name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != name.utf8Start[offset] { return false }
        return true
    }
}

/// What the one-pass read of a Bitwarden export carries from item to item.
private struct EntrySink<Output: ImportedEntrySink> {
    let now: Int64
    var names: ImportedNameCleaner.Names
    /// Where each entry goes.
    var output: Output
    /// The fields of the entry being read (one array for all).
    var fields: [ImportField] = []
    var folders: [String: String] = [:]
    var times = Timestamps.Cache()
    var sawItems = false

    init(now: Int64, names: ImportedNameCleaner.Names, output: Output) {
        self.now = now
        self.names = names
        self.output = output
    }
}
