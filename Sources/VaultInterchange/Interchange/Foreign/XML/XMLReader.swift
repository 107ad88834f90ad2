#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - A bounded pull reader of XML

/// Reads an XML 1.0 document in UTF-8 one event at a time, without building a tree.
///
/// Bounded by design, since every byte is untrusted: a document type declaration is refused (so
/// no entity can be declared, and none expanded: the billion-laughs and external-entity attacks
/// have nothing to work with), the only references are the five predefined entities and
/// character references, elements nest at most `maxDepth` deep, a tag holds at most
/// `maxAttributes` attributes, and names are at most `maxNameLength` bytes. The whole input is
/// checked once for UTF-8 and for characters XML forbids (NUL and the other C0 controls but tab,
/// LF and CR). Well-formedness that a reader of KeePass files relies on is checked: every end
/// tag matches its start tag, one root element, nothing but comments and processing
/// instructions around it, no attribute given twice.
///
/// Names and text are handed over as ranges of the input (`bytes`), decoded only on request.
public struct XMLReader {
    /// The deepest nesting of elements read.
    public static let maxDepth = 128
    /// The most attributes one start tag may have.
    public static let maxAttributes = 32
    /// The longest element or attribute name, in bytes.
    public static let maxNameLength = 256

    /// One step through the document.
    public enum Event: Equatable {
        /// A start tag (its name's bytes in the input); `attributes` describes it until the next event.
        case start(Range<Int>)
        /// The end of the innermost open element (also after an empty-element tag `<a/>`).
        case end
        /// Character data between tags, as it lies in the input; `plain` when it holds no reference or CR.
        case text(Range<Int>, plain: Bool)
        /// A CDATA section's content, taken literally.
        case cdata(Range<Int>)
        /// The end of the document, after the root element closed.
        case endOfDocument
    }

    /// One attribute of the last start tag.
    public struct Attribute {
        /// Where its name lies in the input.
        public let name: Range<Int>
        /// Where its value lies in the input, between the quotes.
        public let value: Range<Int>
    }

    /// The document.
    public let bytes: [UInt8]
    /// Where the next event starts.
    public private(set) var position: Int
    /// The attributes of the last start tag.
    public private(set) var attributes: [Attribute] = []
    /// The names of the open elements, outermost first.
    private var open: [Range<Int>] = []
    /// An empty-element tag was read: its end comes next.
    private var pendingEnd = false
    private var rootSeen = false

    /// A reader of `bytes`; throws when they are not UTF-8 or hold a character XML forbids, or
    /// when the XML declaration names another encoding.
    public init(_ bytes: [UInt8]) throws(VaultError) {
        self.bytes = bytes
        position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw .malformedInput("line 1: the XML is in UTF-16; vaultfile reads XML in UTF-8 (save it as UTF-8)")
        }
        // Checked where it lies: a String of it would be one more copy of every secret (a KDBX's
        // decrypted XML too), freed without a wipe.
        guard bytes.withUnsafeBytes(UTF8Bytes.isValid) else { throw .malformedInput("the XML file is not UTF-8") }
        if let bad = bytes.firstIndex(where: { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) {
            throw .malformedInput("line \(Self.line(of: bad, in: bytes)): a control character (byte \(bytes[bad])) that XML does not allow")
        }
    }

    /// The 1-based line of the byte at `offset`.
    public static func line(of offset: Int, in bytes: [UInt8]) -> Int {
        var line = 1
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A { line += 1 }
        return line
    }

    /// The line of the current position, for messages.
    public var line: Int { Self.line(of: position, in: bytes) }

    /// How deep the reader is: the number of open elements.
    public var depth: Int { open.count }

    private func fail(_ what: String, at offset: Int? = nil) -> VaultError {
        .malformedInput("line \(Self.line(of: offset ?? position, in: bytes)): \(what)")
    }

    // MARK: Events

    /// The next event.
    public mutating func next() throws(VaultError) -> Event {
        if pendingEnd {
            pendingEnd = false
            open.removeLast()
            return .end
        }
        while true {
            guard position < bytes.count else {
                if !open.isEmpty { throw fail("the document ends inside the element '\(text(of: open.last!))'") }
                if !rootSeen { throw fail("no root element: this is not XML") }
                return .endOfDocument
            }
            if bytes[position] != UInt8(ascii: "<") {
                let start = position
                let end = bytes.withUnsafeBufferPointer { buffer -> Int in
                    guard let found = memchr(buffer.baseAddress! + start, Int32(UInt8(ascii: "<")), buffer.count - start) else { return buffer.count }
                    return buffer.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                position = end
                if open.isEmpty {
                    guard bytes[start..<end].allSatisfy(Self.isSpace) else { throw fail("text outside the root element", at: start) }
                    continue
                }
                let plain = !bytes[start..<end].contains { $0 == UInt8(ascii: "&") || $0 == 0x0D }
                return .text(start..<end, plain: plain)
            }
            if starts(with: "</") { return try readEndTag() }
            if starts(with: "<!--") { try skip(past: "-->", what: "comment"); continue }
            if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw fail("a CDATA section outside the root element") }
                let start = position + 9
                try skip(past: "]]>", what: "CDATA section")
                return .cdata(start..<position - 3)
            }
            if starts(with: "<!DOCTYPE") || starts(with: "<!doctype") {
                throw fail("the XML has a document type declaration (<!DOCTYPE>); vaultfile refuses one, since its entities could expand without bound or read other files")
            }
            if starts(with: "<!") { throw fail("a markup declaration ('<!') outside a document type declaration") }
            if starts(with: "<?") { try readProcessingInstruction(); continue }
            return try readStartTag()
        }
    }

    /// Reads to the end of the element whose start tag was just read, skipping whatever it holds.
    public mutating func skipElement() throws(VaultError) {
        let target = open.count - 1
        while open.count > target {
            if case .endOfDocument = try next() { return }
        }
    }

    /// The text content of the element whose start tag was just read, up to its end tag, with
    /// references resolved and line ends normalised; child elements are refused (`what` names the element).
    public mutating func readText(_ what: @autoclosure () -> String) throws(VaultError) -> [UInt8] {
        var text: [UInt8] = []
        while try !append(try next(), to: &text, what) {}
        return text
    }

    /// `readText`, handing the text to `body`: where it lies when it is one plain run (most
    /// elements), else as `readText` assembles it; no array is made for the common case.
    public mutating func withText<R>(_ what: @autoclosure () -> String, _ body: (UnsafeBufferPointer<UInt8>) -> R) throws(VaultError) -> R {
        var text: [UInt8] = []
        var event = try next()
        if case .text(let range, plain: true) = event {
            event = try next()
            switch event {
            case .end, .endOfDocument: return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
            default: text.append(contentsOf: bytes[range])
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
            if plain { text.append(contentsOf: bytes[range]) } else { try decode(range, into: &text) }
        case .cdata(let range):
            text.append(contentsOf: bytes[range])
        case .start:
            throw fail("\(what()) holds an element where text was expected")
        case .end, .endOfDocument:
            return true
        }
        return false
    }

    // MARK: Tags

    private mutating func readStartTag() throws(VaultError) -> Event {
        guard !(open.isEmpty && rootSeen) else { throw fail("a second root element") }
        position += 1
        let name = try readName()
        attributes.removeAll(keepingCapacity: true)
        while true {
            let hadSpace = skipSpaces()
            guard position < bytes.count else { throw fail("the document ends inside a start tag") }
            if bytes[position] == UInt8(ascii: ">") { position += 1; break }
            if starts(with: "/>") { position += 2; pendingEnd = true; break }
            guard hadSpace else { throw fail("a start tag that is not well-formed (expected a space, '>' or '/>')") }
            let attributeName = try readName()
            skipSpaces()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { throw fail("an attribute without '='") }
            position += 1
            skipSpaces()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
                throw fail("an attribute value without quotes")
            }
            let quote = bytes[position]
            let start = position + 1
            guard let end = bytes[start...].firstIndex(of: quote) else { throw fail("the document ends inside an attribute value") }
            guard !bytes[start..<end].contains(UInt8(ascii: "<")) else { throw fail("'<' inside an attribute value") }
            guard !attributes.contains(where: { bytes[$0.name] == bytes[attributeName] }) else {
                throw fail("the attribute '\(text(of: attributeName))' appears twice in one tag")
            }
            guard attributes.count < Self.maxAttributes else { throw fail("more than \(Self.maxAttributes) attributes in one tag") }
            attributes.append(Attribute(name: attributeName, value: start..<end))
            position = end + 1
        }
        guard open.count < Self.maxDepth else { throw fail("elements nest more than \(Self.maxDepth) levels deep") }
        open.append(name)
        rootSeen = true
        return .start(name)
    }

    private mutating func readEndTag() throws(VaultError) -> Event {
        let tagStart = position
        position += 2
        let name = try readName()
        skipSpaces()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw fail("an end tag that is not well-formed") }
        position += 1
        guard let top = open.last else { throw fail("an end tag '</\(text(of: name))>' with no element open", at: tagStart) }
        guard bytes[top] == bytes[name] else {
            throw fail("the end tag '</\(text(of: name))>' does not close the element '\(text(of: top))'", at: tagStart)
        }
        open.removeLast()
        return .end
    }

    /// `<?target …?>`; the XML declaration's encoding, when it names one, must be UTF-8.
    private mutating func readProcessingInstruction() throws(VaultError) {
        let start = position
        try skip(past: "?>", what: "processing instruction")
        let instruction = String(decoding: bytes[start..<position], as: UTF8.self)
        guard instruction.hasPrefix("<?xml ") || instruction.hasPrefix("<?xml\t") || instruction.hasPrefix("<?xml\n"),
              let range = instruction.firstRange(of: "encoding") else { return }
        let rest = instruction[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" }
        let encoding = rest.prefix { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "?" }.lowercased()
        guard encoding == "utf-8" || encoding == "utf8" else {
            throw fail("the XML declares the encoding '\(encoding.prefix(32))'; vaultfile reads XML in UTF-8 (save it as UTF-8)", at: start)
        }
    }

    private mutating func readName() throws(VaultError) -> Range<Int> {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if Self.isSpace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: "<") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { break }
            position += 1
        }
        guard position > start else { throw fail("a tag without a name") }
        guard position - start <= Self.maxNameLength else { throw fail("a name longer than \(Self.maxNameLength) bytes") }
        return start..<position
    }

    // MARK: Bytes

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    @discardableResult
    private mutating func skipSpaces() -> Bool {
        let start = position
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
        return position > start
    }

    private func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for offset in 0..<count where bytes[position + offset] != literal.utf8Start[offset] { return false }
        return true
    }

    private mutating func skip(past terminator: StaticString, what: String) throws(VaultError) {
        let start = position
        while position < bytes.count {
            if starts(with: terminator) { position += terminator.utf8CodeUnitCount; return }
            position += 1
        }
        throw fail("the document ends inside a \(what)", at: start)
    }

    /// Whether the bytes at `range` spell `name`.
    public func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount && bytes.withUnsafeBufferPointer { buffer in
            memcmp(buffer.baseAddress! + range.lowerBound, name.utf8Start, range.count) == 0
        }
    }

    /// The value of the last start tag's attribute `name`, references resolved; nil when absent.
    public func attribute(_ name: StaticString) throws(VaultError) -> [UInt8]? {
        guard let found = attributes.first(where: { matches($0.name, name) }) else { return nil }
        var value: [UInt8] = []
        try decode(found.value, into: &value)
        return value
    }

    /// The bytes at `range` as text (names in messages).
    public func text(of range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    /// Appends character data at `range` with its references resolved and its line ends
    /// normalised (CR LF and a lone CR become LF, as XML 1.0 §2.11 says).
    public func decode(_ range: Range<Int>, into output: inout [UInt8]) throws(VaultError) {
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == 0x0D {
                output.append(0x0A)
                index += index + 1 < range.upperBound && bytes[index + 1] == 0x0A ? 2 : 1
                continue
            }
            guard byte == UInt8(ascii: "&") else { output.append(byte); index += 1; continue }
            guard let semicolon = bytes[index..<range.upperBound].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw fail("an '&' that starts no reference (write it as '&amp;')", at: index)
            }
            let reference = String(decoding: bytes[index + 1..<semicolon], as: UTF8.self)
            switch reference {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                guard reference.hasPrefix("#"), let scalar = Self.characterReference(reference.dropFirst()) else {
                    throw fail("the reference '&\(reference);' is not one of XML's own; vaultfile reads no entity declarations", at: index)
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
}
