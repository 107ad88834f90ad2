#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - A bounded pull reader of XML

/// Reads an XML 1.0 document in UTF-8 one event at a time, without building a tree: from one
/// buffer (`init(_:)`), or from a source that hands it the document a window at a time
/// (`init(window:source:)`, a KDBX file's XML as zlib inflates it), so that the document is
/// never whole in memory.
///
/// Bounded by design, since every byte is untrusted: a document type declaration is refused (so
/// no entity can be declared, and none expanded: the billion-laughs and external-entity attacks
/// have nothing to work with), the only references are the five predefined entities and
/// character references, elements nest at most `maxDepth` deep, a tag holds at most
/// `maxAttributes` attributes, and names are at most `maxNameLength` bytes. Every byte is checked
/// once for UTF-8 and for characters XML forbids (NUL and the other C0 controls but tab, LF and
/// CR): a buffer as a whole before the first event, a stream as each window arrives.
/// Well-formedness that a reader of KeePass files relies on is checked: every end tag matches its
/// start tag, one root element, nothing but comments and processing instructions around it, no
/// attribute given twice.
///
/// Names, text and attribute values are handed over as ranges of the document (byte offsets from
/// its start), read through the reader (`matches`, `withBytes`, `decode`, `text(of:)`) and valid
/// until the next event. A streamed reader holds the bytes from the start of the event being read
/// (of the text being read, in `withText`) to the end of the last window: a window enough for
/// most events, more for a long text, which it holds whole. Bytes it no longer holds are zeroed
/// where they lay (they may be a KDBX file's plaintext), and so is every buffer it outgrows, and
/// the last one at `wipe()`.
public struct XMLReader {
    /// The deepest nesting of elements read.
    public static let maxDepth = 128
    /// The most attributes one start tag may have.
    public static let maxAttributes = 32
    /// The longest element or attribute name, in bytes.
    public static let maxNameLength = 256
    /// The bytes a streamed reader asks its source for at a time, unless told otherwise.
    public static let defaultWindow = 1 << 16

    /// Fills the start of the buffer it is given with the document's next bytes (at most the
    /// buffer's count) and returns how many; 0 only at the document's end.
    public typealias Source = (UnsafeMutableBufferPointer<UInt8>) throws(VaultError) -> Int

    /// One step through the document.
    public enum Event: Equatable {
        /// A start tag (where its name lies in the document); `attributes` describes it until the next event.
        case start(Range<Int>)
        /// The end of the innermost open element (also after an empty-element tag `<a/>`).
        case end
        /// Character data between tags, as it lies in the document; `plain` when it holds no reference or CR.
        case text(Range<Int>, plain: Bool)
        /// A CDATA section's content, taken literally.
        case cdata(Range<Int>)
        /// The end of the document, after the root element closed.
        case endOfDocument
    }

    /// One attribute of the last start tag.
    public struct Attribute {
        /// Where its name lies in the document.
        public let name: Range<Int>
        /// Where its value lies in the document, between the quotes.
        public let value: Range<Int>
    }

    /// The bytes held: the document from `base` on (all of it when read from one buffer).
    var buffer: [UInt8]
    /// The document offset of `buffer[0]`.
    var base = 0
    /// Where the next event starts, in `buffer`.
    var cursor = 0
    /// Where the rest of a streamed document comes from; nil once it ended (or for one buffer).
    var source: Source?
    /// What a streamed reader asks its source for at a time.
    let window: Int
    /// Whether the reader owns its buffer (streamed): it wipes it.
    let streamed: Bool
    /// The bytes of `buffer` before this index are checked (UTF-8, no forbidden character).
    var checked = 0
    /// Whether the start of the document was looked at for a byte order mark.
    var startChecked = false
    /// A document offset kept in the buffer past the next event (`withText`'s text).
    var pinned: Int?
    /// A document offset whose line is known, and that line (lines are counted forward from it).
    var lineMark = 0, lineAtMark = 1
    /// The attributes of the last start tag.
    public var attributes: [Attribute] { Array(attributeList[..<attributeCount]) }
    /// The attributes of the last start tag are the first `attributeCount` of these (the rest is
    /// room kept from earlier tags: a tag with attributes after one without clears nothing).
    var attributeList: [Attribute] = []
    var attributeCount = 0
    /// Where the names of the open elements lie, outermost first: `openBounds` holds the start and
    /// the end of each (`openCount` of them; room for `maxDepth` made once, so that closing an
    /// element is a count made smaller), in `buffer` when the reader has the whole document (its
    /// bytes stay where they are: no copy per start tag), in `openNames` when it is streamed (a
    /// start tag's bytes may be dropped before its end tag comes), where each is copied after the
    /// one before; `openNames` is never shrunk.
    var openNames: [UInt8] = []
    var openBounds = [Int](repeating: 0, count: 2 * XMLReader.maxDepth)
    var openCount = 0
    /// An empty-element tag was read: its end comes next.
    var pendingEnd = false
    var rootSeen = false

    /// A reader of `bytes`; throws when they are not UTF-8 or hold a character XML forbids, or
    /// when the XML declaration names another encoding.
    public init(_ bytes: [UInt8]) throws(VaultError) {
        buffer = bytes
        window = 0
        streamed = false
        try checkStart(final: true)
        try checkWindow(final: true)
    }

    /// A reader of the document that `source` hands over, asked for `window` bytes at a time
    /// (at least 1); throws as `init(_:)` does for what the first bytes show, and later, as
    /// each window arrives, for what it holds.
    public init(window: Int = XMLReader.defaultWindow, source: @escaping Source) throws(VaultError) {
        buffer = []
        self.window = max(1, window)
        self.source = source
        streamed = true
        buffer.reserveCapacity(self.window * 2)
        while !startChecked, try readMore() {}
    }

    /// Zeroes the bytes a streamed reader holds (a reader of one buffer leaves it to its owner).
    public mutating func wipe() {
        guard streamed else { return }
        moveLineMark(to: position)
        base = position
        SecureMemory.wipe(&buffer)
        buffer.removeAll(keepingCapacity: true)
        (cursor, checked, pinned, source) = (0, 0, nil, nil)
    }

    /// The 1-based line of the byte at `offset` of `bytes`.
    public static func line(of offset: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A { line += 1 }
        return line
    }

    /// The 1-based line of the document offset `offset`, counted from the last line asked for
    /// (`markLine`); an offset no longer held gets the line of the first byte held.
    public func line(of offset: Int) -> Int {
        Self.line(of: offset, in: buffer, base: base, mark: lineMark, lineAtMark: lineAtMark)
    }

    /// `line(of:)` from the reader's parts (static: a mutating caller hands over no copy of the reader).
    static func line(of offset: Int, in buffer: [UInt8], base: Int, mark lineMark: Int, lineAtMark: Int) -> Int {
        let target = min(max(offset, base), base + buffer.count)
        let mark = lineMark - base
        return target >= lineMark
            ? lineAtMark + newlines(in: buffer, mark..<(target - base))
            : lineAtMark - newlines(in: buffer, (target - base)..<mark)
    }

    /// The line of the current position, for messages.
    public var line: Int { line(of: position) }

    /// The line of the current position, remembered so that the next count starts there: a
    /// reader that asks as it goes (before each value it may have to name) counts each line once.
    public mutating func markLine() -> Int {
        moveLineMark(to: position)
        return lineAtMark
    }

    /// Where the next event starts, as a document offset.
    public var position: Int { base + cursor }

    /// How deep the reader is: the number of open elements.
    public var depth: Int { openCount }

    func fail(_ what: String, at offset: Int? = nil) -> VaultError {
        .malformedInput("line \(line(of: offset ?? position)): \(what)")
    }

    // MARK: Events

    /// The next event.
    public mutating func next() throws(VaultError) -> Event {
        if pendingEnd {
            pendingEnd = false
            popOpen()
            return .end
        }
        while true {
            // Enough bytes to tell what comes next (`<![CDATA[` is the longest opening).
            if streamed, buffer.count - cursor < 9 { try fill(9) }
            guard cursor < buffer.count else {
                if openCount > 0 { throw fail("the document ends inside the element '\(openName)'") }
                if !rootSeen { throw fail("no root element: this is not XML") }
                return .endOfDocument
            }
            if buffer[cursor] != UInt8(ascii: "<") {
                let end = try find(UInt8(ascii: "<"), from: cursor) ?? buffer.count
                let start = cursor
                cursor = end
                if openCount == 0 {
                    guard Self.allSpace(buffer, start..<end) else { throw fail("text outside the root element", at: base + start) }
                    continue
                }
                return .text((base + start)..<(base + end), plain: Self.isPlain(buffer, start..<end))
            }
            // The byte after '<' tells the markup apart: a start tag (most events) is told at once.
            let second = cursor + 1 < buffer.count ? buffer[cursor + 1] : 0
            if second == UInt8(ascii: "/") {
                if streamed { _ = try find(UInt8(ascii: ">"), from: cursor + 2) }
                return try readEndTag()
            }
            if second == UInt8(ascii: "!") {
                if starts(with: "<!--") { try skip(past: "-->", from: 4, what: "comment"); continue }
                if starts(with: "<![CDATA[") {
                    guard openCount > 0 else { throw fail("a CDATA section outside the root element") }
                    let start = base + cursor + 9
                    try skip(past: "]]>", from: 9, what: "CDATA section")
                    return .cdata(start..<(position - 3))
                }
                if starts(with: "<!DOCTYPE") || starts(with: "<!doctype") {
                    throw fail("the XML has a document type declaration (<!DOCTYPE>); vaultfile refuses one, since its entities could expand without bound or read other files")
                }
                throw fail("a markup declaration ('<!') outside a document type declaration")
            }
            if second == UInt8(ascii: "?") { try readProcessingInstruction(); continue }
            if streamed { _ = try findTagEnd() }
            return try readStartTag()
        }
    }

    /// Reads to the end of the element whose start tag was just read, skipping whatever it holds.
    public mutating func skipElement() throws(VaultError) {
        let target = openCount - 1
        while openCount > target {
            if case .endOfDocument = try next() { return }
        }
    }

    /// The text content of the element whose start tag was just read, up to its end tag, with
    /// references resolved and line ends normalised; child elements are refused (`what` names the element).
    public mutating func readText(_ what: @autoclosure () -> String) throws(VaultError) -> [UInt8] {
        var text: [UInt8] = []
        while true {
            // The event first: `append(try next(), …)` would read a copy of the reader made before `next` moved its buffer.
            let event = try next()
            if try append(event, to: &text, what) { return text }
        }
    }

    /// `readText`, handing the text to `body`: where it lies when it is one plain run (most
    /// elements), else as `readText` assembles it; no array is made for the common case.
    public mutating func withText<R>(_ what: @autoclosure () -> String, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws(VaultError) -> R {
        // Most elements: plain text and the element's own end tag, all held: read in one step.
        if !pendingEnd, let lessThan = Self.index(of: UInt8(ascii: "<"), in: buffer, cursor..<buffer.count),
           lessThan + 1 < buffer.count, buffer[lessThan + 1] == UInt8(ascii: "/"), let after = endOfOpenEndTag(at: lessThan + 2),
           Self.isPlain(buffer, cursor..<lessThan) {
            let text = cursor..<lessThan
            cursor = after
            popOpen()
            return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[text])) }
        }
        var text: [UInt8] = []
        var event = try next()
        if case .text(let range, plain: true) = event {
            // Kept while the end tag is read, which may bring a window in.
            pinned = range.lowerBound
            defer { pinned = nil }
            event = try next()
            let held = relative(range)
            switch event {
            case .end, .endOfDocument: return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[held])) }
            default: text.append(contentsOf: buffer[held])
            }
        }
        while try !append(event, to: &text, what) { event = try next() }
        return text.withUnsafeBufferPointer { body($0) }
    }

    /// Adds one event of an element's content to `text` (references resolved); true at the
    /// element's end. A child element is refused (`what` names the element).
    private func append(_ event: Event, to text: inout [UInt8], _ what: () -> String) throws(VaultError) -> Bool {
        switch event {
        case .text(let range, let plain):
            if plain { text.append(contentsOf: buffer[relative(range)]) } else { try decode(range, into: &text) }
        case .cdata(let range):
            text.append(contentsOf: buffer[relative(range)])
        case .start:
            throw fail("\(what()) holds an element where text was expected")
        case .end, .endOfDocument:
            return true
        }
        return false
    }
}
