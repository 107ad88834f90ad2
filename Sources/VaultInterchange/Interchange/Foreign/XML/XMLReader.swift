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
    private var buffer: [UInt8]
    /// The document offset of `buffer[0]`.
    private var base = 0
    /// Where the next event starts, in `buffer`.
    private var cursor = 0
    /// Where the rest of a streamed document comes from; nil once it ended (or for one buffer).
    private var source: Source?
    /// What a streamed reader asks its source for at a time.
    private let window: Int
    /// Whether the reader owns its buffer (streamed): it wipes it.
    private let streamed: Bool
    /// The bytes of `buffer` before this index are checked (UTF-8, no forbidden character).
    private var checked = 0
    /// Whether the start of the document was looked at for a byte order mark.
    private var startChecked = false
    /// A document offset kept in the buffer past the next event (`withText`'s text).
    private var pinned: Int?
    /// A document offset whose line is known, and that line (lines are counted forward from it).
    private var lineMark = 0, lineAtMark = 1
    /// The attributes of the last start tag.
    public private(set) var attributes: [Attribute] = []
    /// The names of the open elements, outermost first, one after the other, and where each starts.
    private var openNames: [UInt8] = []
    private var openStarts: [Int] = []
    /// An empty-element tag was read: its end comes next.
    private var pendingEnd = false
    private var rootSeen = false

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
        let target = min(max(offset, base), base + buffer.count)
        let mark = lineMark - base
        return target >= lineMark
            ? lineAtMark + Self.newlines(in: buffer, mark..<(target - base))
            : lineAtMark - Self.newlines(in: buffer, (target - base)..<mark)
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
    public var depth: Int { openStarts.count }

    private func fail(_ what: String, at offset: Int? = nil) -> VaultError {
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
                if !openStarts.isEmpty { throw fail("the document ends inside the element '\(openName)'") }
                if !rootSeen { throw fail("no root element: this is not XML") }
                return .endOfDocument
            }
            if buffer[cursor] != UInt8(ascii: "<") {
                let end = try find(UInt8(ascii: "<"), from: cursor) ?? buffer.count
                let start = cursor
                cursor = end
                if openStarts.isEmpty {
                    guard buffer[start..<end].allSatisfy(Self.isSpace) else { throw fail("text outside the root element", at: base + start) }
                    continue
                }
                let plain = !buffer[start..<end].contains { $0 == UInt8(ascii: "&") || $0 == 0x0D }
                return .text((base + start)..<(base + end), plain: plain)
            }
            if starts(with: "</") {
                if streamed { _ = try find(UInt8(ascii: ">"), from: cursor + 2) }
                return try readEndTag()
            }
            if starts(with: "<!--") { try skip(past: "-->", from: 4, what: "comment"); continue }
            if starts(with: "<![CDATA[") {
                guard !openStarts.isEmpty else { throw fail("a CDATA section outside the root element") }
                let start = base + cursor + 9
                try skip(past: "]]>", from: 9, what: "CDATA section")
                return .cdata(start..<(position - 3))
            }
            if starts(with: "<!DOCTYPE") || starts(with: "<!doctype") {
                throw fail("the XML has a document type declaration (<!DOCTYPE>); vaultfile refuses one, since its entities could expand without bound or read other files")
            }
            if starts(with: "<!") { throw fail("a markup declaration ('<!') outside a document type declaration") }
            if starts(with: "<?") { try readProcessingInstruction(); continue }
            if streamed { _ = try findTagEnd() }
            return try readStartTag()
        }
    }

    /// Reads to the end of the element whose start tag was just read, skipping whatever it holds.
    public mutating func skipElement() throws(VaultError) {
        let target = openStarts.count - 1
        while openStarts.count > target {
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

    // MARK: Tags

    private mutating func readStartTag() throws(VaultError) -> Event {
        guard !(openStarts.isEmpty && rootSeen) else { throw fail("a second root element") }
        cursor += 1
        let name = try readName()
        attributes.removeAll(keepingCapacity: true)
        while true {
            let hadSpace = skipSpaces()
            guard cursor < buffer.count else { throw fail("the document ends inside a start tag") }
            if buffer[cursor] == UInt8(ascii: ">") { cursor += 1; break }
            if starts(with: "/>") { cursor += 2; pendingEnd = true; break }
            guard hadSpace else { throw fail("a start tag that is not well-formed (expected a space, '>' or '/>')") }
            let attributeName = try readName()
            skipSpaces()
            guard cursor < buffer.count, buffer[cursor] == UInt8(ascii: "=") else { throw fail("an attribute without '='") }
            cursor += 1
            skipSpaces()
            guard cursor < buffer.count, buffer[cursor] == UInt8(ascii: "\"") || buffer[cursor] == UInt8(ascii: "'") else {
                throw fail("an attribute value without quotes")
            }
            let quote = buffer[cursor]
            let start = cursor + 1
            guard let end = buffer[start...].firstIndex(of: quote) else { throw fail("the document ends inside an attribute value") }
            guard !buffer[start..<end].contains(UInt8(ascii: "<")) else { throw fail("'<' inside an attribute value") }
            guard !attributes.contains(where: { buffer[relative($0.name)] == buffer[attributeName] }) else {
                throw fail("the attribute '\(String(decoding: buffer[attributeName], as: UTF8.self))' appears twice in one tag")
            }
            guard attributes.count < Self.maxAttributes else { throw fail("more than \(Self.maxAttributes) attributes in one tag") }
            attributes.append(Attribute(name: (base + attributeName.lowerBound)..<(base + attributeName.upperBound), value: (base + start)..<(base + end)))
            cursor = end + 1
        }
        guard openStarts.count < Self.maxDepth else { throw fail("elements nest more than \(Self.maxDepth) levels deep") }
        openStarts.append(openNames.count)
        openNames.append(contentsOf: buffer[name])
        rootSeen = true
        return .start((base + name.lowerBound)..<(base + name.upperBound))
    }

    private mutating func readEndTag() throws(VaultError) -> Event {
        let tagStart = position
        cursor += 2
        let name = try readName()
        skipSpaces()
        guard cursor < buffer.count, buffer[cursor] == UInt8(ascii: ">") else { throw fail("an end tag that is not well-formed") }
        cursor += 1
        let shown = String(decoding: buffer[name], as: UTF8.self)
        guard let top = openStarts.last else { throw fail("an end tag '</\(shown)>' with no element open", at: tagStart) }
        guard openNames[top...].elementsEqual(buffer[name]) else {
            throw fail("the end tag '</\(shown)>' does not close the element '\(openName)'", at: tagStart)
        }
        popOpen()
        return .end
    }

    /// The innermost open element's name, for messages.
    private var openName: String { openStarts.last.map { String(decoding: openNames[$0...], as: UTF8.self) } ?? "" }

    private mutating func popOpen() {
        openNames.removeSubrange(openStarts.removeLast()...)
    }

    /// `<?target …?>`; the XML declaration's encoding, when it names one, must be UTF-8.
    private mutating func readProcessingInstruction() throws(VaultError) {
        let start = position
        try skip(past: "?>", from: 2, what: "processing instruction")
        let instruction = String(decoding: buffer[(start - base)..<cursor], as: UTF8.self)
        guard instruction.hasPrefix("<?xml ") || instruction.hasPrefix("<?xml\t") || instruction.hasPrefix("<?xml\n"),
              let range = instruction.firstRange(of: "encoding") else { return }
        let rest = instruction[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        let encoding = rest.prefix { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "?" }.lowercased()
        guard encoding == "utf-8" || encoding == "utf8" else {
            throw fail("the XML declares the encoding '\(encoding.prefix(32))'; vaultfile reads XML in UTF-8 (save it as UTF-8)", at: start)
        }
    }

    /// A name at the cursor, as a range of `buffer`.
    private mutating func readName() throws(VaultError) -> Range<Int> {
        let start = cursor
        while cursor < buffer.count {
            let byte = buffer[cursor]
            if Self.isSpace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: "<") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { break }
            cursor += 1
        }
        guard cursor > start else { throw fail("a tag without a name") }
        guard cursor - start <= Self.maxNameLength else { throw fail("a name longer than \(Self.maxNameLength) bytes") }
        return start..<cursor
    }

    // MARK: Bytes

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    @discardableResult
    private mutating func skipSpaces() -> Bool {
        let start = cursor
        while cursor < buffer.count, Self.isSpace(buffer[cursor]) { cursor += 1 }
        return cursor > start
    }

    private func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - cursor >= count else { return false }
        for offset in 0..<count where buffer[cursor + offset] != literal.utf8Start[offset] { return false }
        return true
    }

    /// Moves the cursor past the first `terminator` at `skipped` bytes or more from it.
    private mutating func skip(past terminator: StaticString, from skipped: Int, what: String) throws(VaultError) {
        guard let found = try find(terminator, from: cursor + skipped) else { throw fail("the document ends inside a \(what)") }
        cursor = found + terminator.utf8CodeUnitCount
    }

    /// The range `range` of the document, as a range of `buffer`.
    @inline(__always)
    private func relative(_ range: Range<Int>) -> Range<Int> { (range.lowerBound - base)..<(range.upperBound - base) }

    /// Whether the bytes at `range` spell `name`.
    public func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount && buffer.withUnsafeBufferPointer { held in
            memcmp(held.baseAddress! + (range.lowerBound - base), name.utf8Start, range.count) == 0
        }
    }

    /// Whether the bytes at `range` are all white space (space, tab, LF, CR).
    public func isWhiteSpace(_ range: Range<Int>) -> Bool { buffer[relative(range)].allSatisfy(Self.isSpace) }

    /// `body` of the bytes at `range`, where they lie (valid until the next event).
    public func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let held = relative(range)
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[held])) }
    }

    /// The value of the last start tag's attribute `name`, references resolved; nil when absent.
    public func attribute(_ name: StaticString) throws(VaultError) -> [UInt8]? {
        guard let found = attributes.first(where: { matches($0.name, name) }) else { return nil }
        var value: [UInt8] = []
        try decode(found.value, into: &value)
        return value
    }

    /// The bytes at `range` as text (names in messages).
    public func text(of range: Range<Int>) -> String { String(decoding: buffer[relative(range)], as: UTF8.self) }

    /// Appends character data at `range` with its references resolved and its line ends
    /// normalised (CR LF and a lone CR become LF, as XML 1.0 §2.11 says).
    public func decode(_ range: Range<Int>, into output: inout [UInt8]) throws(VaultError) {
        let held = relative(range)
        var index = held.lowerBound
        while index < held.upperBound {
            let byte = buffer[index]
            if byte == 0x0D {
                output.append(0x0A)
                index += index + 1 < held.upperBound && buffer[index + 1] == 0x0A ? 2 : 1
                continue
            }
            guard byte == UInt8(ascii: "&") else { output.append(byte); index += 1; continue }
            guard let semicolon = buffer[index..<held.upperBound].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw fail("an '&' that starts no reference (write it as '&amp;')", at: base + index)
            }
            let reference = String(decoding: buffer[index + 1..<semicolon], as: UTF8.self)
            switch reference {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                guard reference.hasPrefix("#"), let scalar = Self.characterReference(reference.dropFirst()) else {
                    // Not echoed: character data may be a password, and a reference inside it a piece of one.
                    throw fail("a reference is not one of XML's own (&lt; &gt; &amp; &quot; &apos; or &#…;); vaultfile reads no entity declarations",
                               at: base + index)
                }
                output.append(contentsOf: String(scalar).utf8)
            }
            index = semicolon + 1
        }
    }

    /// The character of `#…;` without the `#`: decimal or `x` hexadecimal, a character XML allows.
    private static func characterReference(_ digits: Substring) -> Unicode.Scalar? {
        let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        guard let value, !digits.isEmpty, let scalar = Unicode.Scalar(value) else { return nil }
        switch value {
        case 0x09, 0x0A, 0x0D, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return scalar
        default: return nil
        }
    }

    // MARK: Lines

    private static func newlines(in buffer: [UInt8], _ range: Range<Int>) -> Int {
        guard !range.isEmpty else { return 0 }
        return buffer.withUnsafeBufferPointer { all in
            var count = 0
            for byte in UnsafeBufferPointer(rebasing: all[range]) where byte == 0x0A { count += 1 }
            return count
        }
    }

    private mutating func moveLineMark(to offset: Int) {
        let target = min(max(offset, base), base + buffer.count)
        lineAtMark = line(of: target)
        lineMark = target
    }

    // MARK: The stream

    /// Reads windows until `count` bytes from the cursor are held, or the document ends.
    private mutating func fill(_ count: Int) throws(VaultError) {
        while buffer.count - cursor < count, try readMore() {}
    }

    /// The index in `buffer` of the first `byte` at or after `start`, reading windows until one
    /// holds it; nil when the document ends first.
    private mutating func find(_ byte: UInt8, from start: Int) throws(VaultError) -> Int? {
        var distance = start - cursor  // from the cursor, which a new window may move
        while true {
            if let found = findHeld(byte, from: cursor + distance) { return found }
            distance = max(distance, buffer.count - cursor)
            guard streamed, try readMore() else { return nil }
        }
    }

    /// The index in `buffer` of the first `literal` at or after `start`, reading windows until
    /// one holds it whole; nil when the document ends first.
    private mutating func find(_ literal: StaticString, from start: Int) throws(VaultError) -> Int? {
        let count = literal.utf8CodeUnitCount
        let first = literal.utf8Start[0]
        var distance = start - cursor
        while true {
            while let found = findHeld(first, from: cursor + distance) {
                guard buffer.count - found >= count else {
                    distance = found - cursor  // its rest comes in the next window
                    break
                }
                if (0..<count).allSatisfy({ buffer[found + $0] == literal.utf8Start[$0] }) { return found }
                distance = found + 1 - cursor
            }
            // What is held holds no whole literal from `distance` on, but its last bytes may start one.
            distance = max(distance, buffer.count - cursor - (count - 1))
            guard streamed, try readMore() else { return nil }
        }
    }

    /// The index of the first `byte` held at or after `from`, reading nothing.
    private func findHeld(_ byte: UInt8, from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { all -> Int? in
            guard let hit = memchr(all.baseAddress! + from, Int32(byte), all.count - from) else { return nil }
            return all.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Reads windows until the start tag at the cursor is held whole: up to its first '>' outside
    /// a quoted attribute value (as `readStartTag` reads it), or the document's end.
    private mutating func findTagEnd() throws(VaultError) -> Int? {
        var distance = 1
        var quote: UInt8 = 0
        while true {
            var index = cursor + distance
            while index < buffer.count {
                let byte = buffer[index]
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: ">") {
                    return index
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                }
                index += 1
            }
            distance = index - cursor
            guard try readMore() else { return nil }
        }
    }

    /// Drops what lies before the event being read (and the pinned text), zeroing it, then reads
    /// the next window from the source and checks it; false when the document has ended.
    private mutating func readMore() throws(VaultError) -> Bool {
        guard let source else { return false }
        compact()
        reserve(window)
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: window))
        var failure: VaultError?
        let count = buffer.withUnsafeMutableBufferPointer { all -> Int in
            let room = UnsafeMutableBufferPointer(rebasing: all[old...])
            do throws(VaultError) {
                return min(max(0, try source(room)), room.count)
            } catch {
                failure = error
                SecureMemory.wipe(UnsafeMutableRawBufferPointer(room))
                return 0
            }
        }
        buffer.removeLast(window - count)
        if let failure {
            self.source = nil
            throw failure
        }
        if count == 0 { self.source = nil }
        try checkStart(final: count == 0)
        try checkWindow(final: count == 0)
        return count > 0
    }

    /// Drops the bytes before the cursor (and before the pinned offset), zeroing where they lay.
    private mutating func compact() {
        let keep = pinned.map { min(cursor, $0 - base) } ?? cursor
        guard keep > 0 else { return }
        if lineMark < base + keep { moveLineMark(to: base + keep) }
        buffer.withUnsafeMutableBufferPointer { all in
            let start = all.baseAddress!
            memmove(start, start + keep, all.count - keep)
            SecureMemory.wipe(UnsafeMutableRawBufferPointer(start: start + (all.count - keep), count: keep))
        }
        buffer.removeLast(keep)
        base += keep
        cursor -= keep
        checked -= keep
    }

    /// Room for `extra` more bytes without the array reallocating on its own (which would free the
    /// old bytes unwiped): a larger buffer is made here and the old one zeroed.
    private mutating func reserve(_ extra: Int) {
        guard buffer.capacity - buffer.count < extra else { return }
        var grown: [UInt8] = []
        grown.reserveCapacity(max(buffer.capacity * 2, buffer.count + extra))
        grown.append(contentsOf: buffer)
        SecureMemory.wipe(&buffer)
        buffer = grown
    }

    // MARK: Checks

    /// The start of the document: UTF-16 refused, a UTF-8 byte order mark skipped. Waits for three
    /// bytes unless the document is shorter (`final`).
    private mutating func checkStart(final: Bool) throws(VaultError) {
        guard !startChecked, buffer.count >= 3 || final else { return }
        startChecked = true
        if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { cursor = 3 }
        if buffer.starts(with: [0xFF, 0xFE]) || buffer.starts(with: [0xFE, 0xFF]) {
            throw .malformedInput("line 1: the XML is in UTF-16; vaultfile reads XML in UTF-8 (save it as UTF-8)")
        }
    }

    /// Checks the bytes held past `checked` for UTF-8 and for characters XML forbids, but for a
    /// character cut at the end of a window (`final`: there is no more).
    private mutating func checkWindow(final: Bool) throws(VaultError) {
        guard startChecked else { return }
        let end = final ? buffer.count : Self.wholeCharacters(buffer, from: checked)
        guard end > checked else { return }
        let range = checked..<end
        // Checked where it lies: a String of it would be one more copy of every secret (a KDBX's
        // decrypted XML too), freed without a wipe.
        guard buffer.withUnsafeBytes({ UTF8Bytes.isValid(UnsafeRawBufferPointer(rebasing: $0[range])) }) else {
            throw .malformedInput("the XML file is not UTF-8")
        }
        if let bad = buffer[range].firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw .malformedInput("line \(line(of: base + bad)): a control character (byte \(buffer[bad])) that XML does not allow")
        }
        checked = end
    }

    /// The end of the last whole UTF-8 character of `buffer` after `start`: a sequence cut by the
    /// window's end waits for the next one (anything else malformed is left to the check).
    private static func wholeCharacters(_ buffer: [UInt8], from start: Int) -> Int {
        let end = buffer.count
        for back in 1...4 where end - back >= start {
            let byte = buffer[end - back]
            if byte & 0xC0 == 0x80 { continue }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return back < length && byte < 0xF8 ? end - back : end
        }
        return end
    }
}
