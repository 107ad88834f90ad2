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
    var meta = KeePassMeta()
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
    mutating func children(_ body: (inout KeePassXMLParser, Range<Int>) throws(VaultError) -> Void) throws(VaultError) {
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
    func isTrue(_ text: String) -> Bool {
        var text = text
        if let answer = text.withUTF8({ KeePassText.isTrueASCII($0) }) { return answer }
        return text.trimmingASCIISpaces.lowercased() == "true"
    }

    /// `isTrue` of the last start tag's attribute `name` (absent: false), read where it lies
    /// when it holds no reference or CR (`XMLReader.attribute` would resolve them).
    @inline(__always)
    func attributeIsTrue(_ name: StaticString) throws(VaultError) -> Bool {
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
}
