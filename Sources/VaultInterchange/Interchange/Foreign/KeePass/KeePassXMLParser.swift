import FoundationEssentials
import SecureMemory
import VaultModel

// MARK: - KeePass 2 XML, one entry at a time

/// Reads the XML of a KeePass 2 database (`KeePassFile`: `Meta`, then `Root` with its groups) and
/// hands over each entry with the groups it lies in, without keeping the tree.
///
/// An XML export holds its protected values in the clear (`ProtectInMemory="True"`); the XML inside
/// a KDBX file holds them XOR-ed with the inner stream (`Protected="True"`), which `unprotect`
/// undoes in document order (a KDBX reader passes it; without it such a value is refused).
public struct KeePassXMLParser {
    var reader: XMLReader
    let unprotect: ((inout [UInt8]) throws(VaultError) -> Void)?
    private var meta = KeePassMeta()
    /// The last time read and its value (`Timestamps.Cache`).
    var timeCache = Timestamps.Cache()
    /// What inflating the pool's compressed binaries has spent of the document's budget; the
    /// reader goes on counting the copies that references make.
    private(set) var budget: ExpansionBudget
    /// KDBX 3.1: the SHA-256 of the file's header, which Meta/HeaderHash must repeat (KeePass
    /// 2.20+ and KeePassXC write it); checked as Meta is read, before any entry.
    var expectedHeaderHash: [UInt8]?
    /// Whether Meta held a HeaderHash (and it matched `expectedHeaderHash`, when one is set).
    private(set) var headerHashSeen = false

    /// A parser of `bytes`; `unprotect` undoes the inner stream of a KDBX file's XML.
    public init(_ bytes: [UInt8], unprotect: ((inout [UInt8]) throws(VaultError) -> Void)? = nil) throws(VaultError) {
        try self.init(bytes, unprotect: unprotect, budget: ExpansionBudget(inputBytes: bytes.count, what: "the KeePass XML"))
    }

    /// A parser of `bytes` that counts what it inflates against `budget`: a KDBX file's XML is
    /// decrypted and inflated from the file, so its budget follows the file's bytes (and carries
    /// what inflating the payload spent), never the XML's own size.
    init(_ bytes: [UInt8], unprotect: ((inout [UInt8]) throws(VaultError) -> Void)?, budget: ExpansionBudget) throws(VaultError) {
        reader = try XMLReader(bytes)
        self.unprotect = unprotect
        self.budget = budget
    }

    /// A parser of the document `source` hands over a window at a time (`XMLReader.init(window:source:)`):
    /// a KDBX file's XML as it is inflated, never whole in memory; counted against `budget` as above.
    init(window: Int = XMLReader.defaultWindow, source: @escaping XMLReader.Source, unprotect: ((inout [UInt8]) throws(VaultError) -> Void)?,
         budget: ExpansionBudget) throws(VaultError) {
        reader = try XMLReader(window: window, source: source)
        self.unprotect = unprotect
        self.budget = budget
    }

    /// Zeroes what a streamed parser's reader still holds of the document.
    mutating func wipe() { reader.wipe() }

    /// Lets go of Meta/Binaries (its caller holds them and wipes them once).
    mutating func dropPool() { meta.binaries = [:] }

    /// Reads the document, calling `entry` with each entry (its history inside it) and the groups
    /// it lies in, outermost first, the root group included; returns what `Meta` and the rest held.
    public mutating func parse(_ entry: (KeePassEntry, [KeePassGroup]) throws(VaultError) -> Void) throws(VaultError) -> KeePassMeta {
        try parse(metaRead: { _ in }) { (read, groups, _) throws(VaultError) in try entry(read, groups) }
    }

    /// What `parse(metaRead:_:)` hands over for each entry: the entry (the callee may take its
    /// values: the parser drops it next), the groups it lies in, outermost first, the root group
    /// included, and their names without the root group's (the entry's folders, made once per group).
    typealias EntryBody = (inout KeePassEntry, [KeePassGroup], [String]) throws(VaultError) -> Void

    /// `parse(_:)` that also calls `metaRead` with what `Meta` held once it is read (before the
    /// entries of Root, when Meta comes first as KeePass and KeePassXC write it): the pool of
    /// Meta/Binaries that later entries' attachments reference.
    mutating func parse(metaRead: (KeePassMeta) -> Void, _ entry: EntryBody) throws(VaultError) -> KeePassMeta {
        guard case .start(let name) = try nextElement(), reader.matches(name, "KeePassFile") else {
            throw .malformedInput("line \(reader.line): not a KeePass XML file (its root element is not KeePassFile)")
        }
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Meta") {
                try parser.readMeta()
                metaRead(parser.meta)
            } else if parser.reader.matches(name, "Root") {
                try parser.children { (parser, name) throws(VaultError) in
                    if parser.reader.matches(name, "Group") {
                        try parser.readGroup(path: [], entry)
                    } else if parser.reader.matches(name, "DeletedObjects") {
                        try parser.children { (parser, _) throws(VaultError) in parser.meta.deletedObjects += 1; try parser.reader.skipElement() }
                    } else {
                        try parser.reader.skipElement()
                    }
                }
            } else {
                try parser.reader.skipElement()
            }
        }
        // Nothing but comments may follow the root element (a second root is refused by the reader).
        guard case .endOfDocument = try nextElement() else { throw .malformedInput("line \(reader.line): more after the KeePassFile element") }
        return meta
    }

    // MARK: Structure

    /// The next start tag or end, skipping whitespace between elements; text there is refused.
    private mutating func nextElement() throws(VaultError) -> XMLReader.Event {
        // A plain start tag or the open element's end tag (most events), read in one step.
        if let tag = reader.nextTag() { return tag }
        while true {
            let event = try reader.next()
            switch event {
            case .text(let range, _) where reader.isWhiteSpace(range):
                continue
            case .text, .cdata:
                throw .malformedInput("line \(reader.line): text where KeePass XML has only elements")
            default:
                return event
            }
        }
    }

    /// Calls `body` with each child element's name, its start tag just read; `body` reads the
    /// element to its end. Returns at the end of the current element.
    private mutating func children(_ body: (inout KeePassXMLParser, Range<Int>) throws(VaultError) -> Void) throws(VaultError) {
        while true {
            switch try nextElement() {
            case .start(let name):
                let depth = reader.depth
                try body(&self, name)
                guard reader.depth == depth - 1 else { throw .malformedInput("line \(reader.line): KeePass XML read out of step") }
            case .end, .endOfDocument:
                return
            case .text, .cdata:
                continue  // nextElement never returns these
            }
        }
    }

    mutating func text(_ what: StaticString) throws(VaultError) -> String {
        try reader.withText("\(what)") { String(decoding: $0, as: UTF8.self) }
    }

    /// `text(what).trimmingASCIISpaces`, trimmed before the string is made.
    mutating func trimmedText(_ what: StaticString) throws(VaultError) -> String {
        try reader.withText("\(what)") { String(decoding: KeePassText.trimmed($0), as: UTF8.self) }
    }

    @inline(__always)
    private func isTrue(_ text: String) -> Bool {
        var text = text
        if let answer = text.withUTF8({ KeePassText.isTrueASCII($0) }) { return answer }
        return text.trimmingASCIISpaces.lowercased() == "true"
    }

    /// `isTrue` of the last start tag's attribute `name` (absent: false), read where it lies
    /// when it holds no reference or CR (`XMLReader.attribute` would resolve them).
    @inline(__always)
    private func attributeIsTrue(_ name: StaticString) throws(VaultError) -> Bool {
        guard let found = reader.attribute(named: name) else { return false }
        let plain = reader.withBytes(found.value) { value -> Bool? in
            value.contains { $0 == UInt8(ascii: "&") || $0 == 0x0D } ? nil : KeePassText.isTrueASCII(value)
        }
        if let plain { return plain }
        return isTrue(String(decoding: try reader.attribute(name) ?? [], as: UTF8.self))
    }

    // MARK: Meta

    private mutating func readMeta() throws(VaultError) {
        var recycleBinEnabled = true, recycleBin: String?
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Generator") { parser.meta.generator = try parser.text("Generator") }
            else if parser.reader.matches(name, "DatabaseName") { parser.meta.databaseName = try parser.text("DatabaseName") }
            else if parser.reader.matches(name, "DatabaseDescription") { parser.meta.databaseDescription = try parser.text("DatabaseDescription") }
            else if parser.reader.matches(name, "RecycleBinEnabled") { recycleBinEnabled = parser.isTrue(try parser.text("RecycleBinEnabled")) }
            else if parser.reader.matches(name, "RecycleBinUUID") { recycleBin = try parser.trimmedText("RecycleBinUUID") }
            else if parser.reader.matches(name, "HeaderHash") { try parser.checkHeaderHash() }
            else if parser.reader.matches(name, "Binaries") {
                try parser.children { (parser, _) throws(VaultError) in try parser.readPoolBinary() }
            } else if parser.reader.matches(name, "CustomIcons") {
                try parser.children { (parser, _) throws(VaultError) in parser.meta.customIcons += 1; try parser.reader.skipElement() }
            } else if parser.reader.matches(name, "CustomData") {
                try parser.children { (parser, _) throws(VaultError) in parser.meta.customDataItems += 1; try parser.reader.skipElement() }
            } else {
                try parser.reader.skipElement()
            }
        }
        meta.recycleBinEnabled = recycleBinEnabled
        if recycleBinEnabled, let recycleBin, !recycleBin.isEmpty, recycleBin != "AAAAAAAAAAAAAAAAAAAAAA==" { meta.recycleBin = recycleBin }
    }

    /// `<HeaderHash>base64 of SHA-256</HeaderHash>`: in a KDBX 3.1 file, the hash of its header,
    /// which authenticates it (the payload was encrypted with the key: only the key's holder wrote
    /// it). A hash that differs is damage of the file, as KeePassXC's "Header doesn't match hash".
    private mutating func checkHeaderHash() throws(VaultError) {
        let line = reader.markLine()
        let text = try reader.readText("HeaderHash")
        headerHashSeen = true
        guard let expected = expectedHeaderHash else { return }
        let hash = (try? base64(text, at: line, what: "HeaderHash")) ?? []
        guard hash == expected else {
            throw .sourceDamaged(file: budget.what, why: "Meta/HeaderHash does not match the SHA-256 of its KDBX 3.1 header "
                                 + "(the header was damaged or changed after the database was written)")
        }
    }

    /// `<Binary ID="0" Compressed="True">base64</Binary>` of Meta/Binaries.
    private mutating func readPoolBinary() throws(VaultError) {
        let line = reader.markLine()
        guard let idText = try reader.attribute("ID"), let id = Int(String(decoding: idText, as: UTF8.self)), id >= 0 else {
            throw .malformedInput("line \(line): a binary of Meta/Binaries without a numeric ID")
        }
        let compressed = try attributeIsTrue("Compressed")
        let protected = try attributeIsTrue("Protected")
        var bytes = try base64(try reader.readText("Binary"), at: line, what: "the binary \(id)")
        if protected { try unprotectValue(&bytes, at: line, what: "the binary \(id)") }
        if compressed {
            var packed = bytes
            defer { SecureMemory.wipe(&packed) }
            let what = "line \(line): the binary \(id)"
            // The declared size and ratio checked, and counted, before anything is inflated.
            try budget.spend(try Gzip.declaredSize(packed, limit: VaultLimits.maxValueLength, what: what), on: "the binary \(id)")
            bytes = try Gzip.decompress(packed, limit: VaultLimits.maxValueLength, what: what)
        }
        guard meta.binaries[id] == nil else { throw .malformedInput("line \(line): two binaries with the ID \(id)") }
        meta.binaries[id] = bytes
    }

    // MARK: Groups and entries

    private mutating func readGroup(path: [KeePassGroup], _ entry: EntryBody) throws(VaultError) {
        var group = KeePassGroup()
        var contentSeen = false
        // `path + [group]` and its folders, made once for the group's entries and again only when the group changes.
        var groups: [KeePassGroup]?
        var folders: [String] = []
        func inside(isRecycleBin: Bool) -> [KeePassGroup] {
            if isRecycleBin != group.isRecycleBin { (group.isRecycleBin, groups) = (isRecycleBin, nil) }
            if let groups { return groups }
            let made = path + [group]
            groups = made
            folders = made.dropFirst().map(\.name)
            return made
        }
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Name") {
                // Folders are named as the entries are read: a name after them would come too late.
                guard !contentSeen else { throw .malformedInput("line \(parser.reader.line): a group's Name after its entries or groups") }
                group.name = try parser.text("Name")
                groups = nil
            } else if parser.reader.matches(name, "UUID") {
                group.uuid = try parser.trimmedText("UUID")
                groups = nil
            } else if parser.reader.matches(name, "Notes") {
                group.notes = try parser.text("Notes")
                groups = nil
            } else if parser.reader.matches(name, "Entry") {
                contentSeen = true
                let enclosing = inside(isRecycleBin: parser.isRecycleBin(group, depth: path.count))
                var read = try parser.readEntry(inHistory: false)
                try entry(&read, enclosing, folders)
            } else if parser.reader.matches(name, "Group") {
                contentSeen = true
                try parser.readGroup(path: inside(isRecycleBin: parser.isRecycleBin(group, depth: path.count)), entry)
            } else {
                try parser.reader.skipElement()
            }
        }
    }

    /// Whether `group`, `depth` groups deep (1: right under the root group), is the recycle bin
    /// (`KeePassGroup.isRecycleBin`). Meta comes before Root, as KeePass and KeePassXC write it.
    private func isRecycleBin(_ group: KeePassGroup, depth: Int) -> Bool {
        if let bin = meta.recycleBin { return group.uuid == bin }
        return meta.recycleBinEnabled && depth == 1 && group.name == "Recycle Bin"
    }

    private mutating func readEntry(inHistory: Bool) throws(VaultError) -> KeePassEntry {
        var entry = KeePassEntry()
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "String") {
                // Room for an entry's usual strings at once (Title, UserName, Password, URL, Notes).
                if entry.strings.isEmpty { entry.strings.reserveCapacity(5) }
                entry.strings.append(try parser.readString())
            } else if parser.reader.matches(name, "UUID") {
                entry.uuid = try parser.trimmedText("UUID")
            } else if parser.reader.matches(name, "Times") {
                entry.times = try parser.readTimes()
            } else if parser.reader.matches(name, "Binary") {
                entry.attachments.append(try parser.readAttachment())
            } else if parser.reader.matches(name, "Tags") {
                entry.tags = try parser.text("Tags")
            } else if parser.reader.matches(name, "IconID") {
                if !(try parser.reader.withText("IconID", KeePassText.isEmptyOrZero)) { entry.hasIcon = true }
            } else if parser.reader.matches(name, "CustomIconUUID") {
                entry.hasIcon = true
                try parser.reader.skipElement()
            } else if parser.reader.matches(name, "ForegroundColor") || parser.reader.matches(name, "BackgroundColor") {
                if !(try parser.reader.withText("Color") { KeePassText.trimmed($0).isEmpty }) { entry.hasColors = true }
            } else if parser.reader.matches(name, "OverrideURL") {
                entry.overrideURL = try parser.text("OverrideURL")
            } else if parser.reader.matches(name, "AutoType") {
                entry.hasAutoTypeSettings = try parser.readAutoType()
            } else if parser.reader.matches(name, "CustomData") {
                try parser.children { (parser, _) throws(VaultError) in entry.customDataItems += 1; try parser.reader.skipElement() }
            } else if parser.reader.matches(name, "History") {
                guard !inHistory else { throw .malformedInput("line \(parser.reader.line): a history inside a history entry") }
                try parser.children { (parser, name) throws(VaultError) in
                    guard parser.reader.matches(name, "Entry") else { try parser.reader.skipElement(); return }
                    entry.history.append(try parser.readEntry(inHistory: true))
                }
            } else if parser.reader.matches(name, "QualityCheck") {
                if !parser.isTrue(try parser.text("QualityCheck")) { entry.otherElements.insert("QualityCheck") }
            } else {
                // Named in the loss warning: a handful per entry at most in real files; a hostile
                // file's many names are bounded by the reader (KeePassXMLReader.maxOtherElementNames).
                if entry.otherElements.count < KeePassEntry.maxOtherElements { entry.otherElements.insert(parser.reader.text(of: name)) }
                try parser.reader.skipElement()
            }
        }
        return entry
    }

    /// `<String><Key>…</Key><Value ProtectInMemory="True">…</Value></String>`.
    private mutating func readString() throws(VaultError) -> KeePassString {
        let place = reader.place()
        var key: String?, kind = KeePassKey.other, value: [UInt8]?, protected = false
        // The usual shape first, without events: `<Key>` with plain text, then `<Value>` (plain
        // text read the same way; with attributes, its start tag read as the walk reads it). The
        // walk below then reads what follows, as it would have read these.
        if let text = reader.textElement("Key") {
            (key, kind) = reader.withBytes(text, Self.key)
            // `<Value>` or `<Value ProtectInMemory="True">`: protected as `readValue` finds it.
            if let read = reader.textElement("Value", trueAttribute: "ProtectInMemory") {
                (value, protected) = (reader.withBytes(read.text) { Array($0) }, read.attribute)
            } else if try reader.start("Value") {
                (value, protected) = try readValue(key: key, at: place)
            }
            // `</String>` at once: what the walk below would read first, and end with.
            if let key, reader.end() { return KeePassString(key: key, kind: kind, value: value ?? [], protected: protected) }
        }
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Key") {
                (key, kind) = try parser.reader.withText("Key", Self.key)
            } else if parser.reader.matches(name, "Value") {
                (value, protected) = try parser.readValue(key: key, at: place)
            } else {
                try parser.reader.skipElement()
            }
        }
        guard let key else { throw .malformedInput("line \(reader.line(at: place)): a String without a Key") }
        return KeePassString(key: key, kind: kind, value: value ?? [], protected: protected)
    }

    /// A string's key and its kind: the standard keys are literals (no string made, no UTF-8
    /// checked again), the kind told from the bytes.
    private static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, KeePassKey) {
        if let known = KeePassKey.known(bytes) { return known }
        let made = String(decoding: bytes, as: UTF8.self)
        return (made, KeePassKey(bytes: bytes) ?? KeePassKey(made))
    }

    /// A string's `Value`, its start tag just read: the bytes (a KDBX's protected value undone)
    /// and whether the value is protected; `place` names the string in messages.
    private mutating func readValue(key: String?, at place: XMLReader.Place) throws(VaultError) -> ([UInt8], Bool) {
        let inMemory = try attributeIsTrue("ProtectInMemory")
        let streamed = try attributeIsTrue("Protected")
        var bytes = try reader.withText("Value") { Array($0) }
        if streamed {
            let line = reader.line(at: place)
            bytes = try base64(bytes, at: line, what: "a protected value")
            try unprotectValue(&bytes, at: line, what: "the value of '\(key ?? "?")'")
        }
        return (bytes, inMemory || streamed)
    }

    /// `<Binary><Key>name</Key><Value Ref="0"/></Binary>`, or the bytes inline in base64.
    private mutating func readAttachment() throws(VaultError) -> KeePassAttachment {
        let line = reader.markLine()
        var key: String?, reference: Int?, bytes: [UInt8] = []
        try children { (parser, name) throws(VaultError) in
            if parser.reader.matches(name, "Key") {
                key = try parser.text("Key")
            } else if parser.reader.matches(name, "Value") {
                if let ref = try parser.reader.attribute("Ref") {
                    guard let id = Int(String(decoding: ref, as: UTF8.self)), id >= 0 else {
                        throw .malformedInput("line \(line): an attachment's Ref is not a number")
                    }
                    reference = id
                    try parser.reader.skipElement()
                } else {
                    let streamed = try parser.attributeIsTrue("Protected")
                    bytes = try parser.base64(try parser.reader.readText("Value"), at: line, what: "an attachment")
                    if streamed { try parser.unprotectValue(&bytes, at: line, what: "an attachment") }
                }
            } else {
                try parser.reader.skipElement()
            }
        }
        guard let key else { throw .malformedInput("line \(line): an attachment without a Key (its file name)") }
        return KeePassAttachment(name: key, reference: reference, bytes: bytes)
    }

    private mutating func readTimes() throws(VaultError) -> KeePassTimes {
        var times = KeePassTimes()
        // The two times every writer puts first, read without events when their text is plain;
        // the walk below reads the rest, as it would have read these.
        while true {
            if let text = reader.textElement("LastModificationTime") { times.modified = try time(at: text); continue }
            if let text = reader.textElement("CreationTime") { times.created = try time(at: text); continue }
            break
        }
        if reader.end() { return times }
        try children { (parser, name) throws(VaultError) in
            let line = parser.reader.place()
            if parser.reader.matches(name, "CreationTime") { times.created = try parser.readTime("CreationTime", at: line) }
            else if parser.reader.matches(name, "LastModificationTime") { times.modified = try parser.readTime("LastModificationTime", at: line) }
            else if parser.reader.matches(name, "ExpiryTime") { times.expiry = try parser.readTime("ExpiryTime", at: line) }
            else if parser.reader.matches(name, "Expires") { times.expires = parser.isTrue(try parser.text("Expires")) }
            else if parser.reader.matches(name, "UsageCount") {
                if !(try parser.reader.withText("UsageCount", KeePassText.isEmptyOrZero)) { times.hasUsage = true }
            } else if parser.reader.matches(name, "LastAccessTime") || parser.reader.matches(name, "LocationChanged") {
                if !(try parser.reader.withText("time") { KeePassText.trimmed($0).isEmpty }) { times.hasUsage = true }
            } else {
                try parser.reader.skipElement()
            }
        }
        return times
    }

    /// Whether an `AutoType` element says more than KeePass's default (enabled, no own sequence, no associations).
    private mutating func readAutoType() throws(VaultError) -> Bool {
        var special = false
        try children { (parser, name) throws(VaultError) in
            // Every element's text is read (a short-circuit would leave it unread and the walk out of step).
            if parser.reader.matches(name, "Enabled") { if !parser.isTrue(try parser.text("Enabled")) { special = true } }
            else if parser.reader.matches(name, "DataTransferObfuscation") { if !(try parser.reader.withText("Obfuscation", KeePassText.isEmptyOrZero)) { special = true } }
            else if parser.reader.matches(name, "DefaultSequence") { if !(try parser.text("DefaultSequence")).isEmpty { special = true } }
            else { special = true; try parser.reader.skipElement() }
        }
        return special
    }
}
