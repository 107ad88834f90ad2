#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - XMLReader: bytes, references and characters

extension XMLReader {
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    // MARK: Bytes where they lie
    //
    // Static, over the array itself: a method of the reader called from a mutating one is handed
    // a copy of the whole reader (130 bytes) on every call, which the event loop paid per event.

    /// Whether the bytes at `range` of `bytes` are all white space.
    static func allSpace(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { held in
            for index in range where !isSpace(held[index]) { return false }
            return true
        }
    }

    /// Whether the text at `range` of `bytes` holds no reference and no CR (it is itself); eight
    /// bytes at a time.
    static func isPlain(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBytes { held in
            var index = range.lowerBound
            while range.upperBound - index >= 8 {
                let word = held.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                // A zero byte in `word ^ 0x26…` is an '&', in `word ^ 0x0D…` a CR ("has a zero byte", exact as a test).
                let amp = word ^ 0x2626_2626_2626_2626, cr = word ^ 0x0D0D_0D0D_0D0D_0D0D
                let low: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
                if ((amp &- low) & ~amp & high) | ((cr &- low) & ~cr & high) != 0 { return false }
                index += 8
            }
            // The last bytes as the word that ends there (it overlaps bytes already checked).
            if index < range.upperBound, range.count >= 8 {
                let word = held.loadUnaligned(fromByteOffset: range.upperBound - 8, as: UInt64.self)
                let amp = word ^ 0x2626_2626_2626_2626, cr = word ^ 0x0D0D_0D0D_0D0D_0D0D
                let low: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
                return ((amp &- low) & ~amp & high) | ((cr &- low) & ~cr & high) == 0
            }
            while index < range.upperBound {
                if held[index] == UInt8(ascii: "&") || held[index] == 0x0D { return false }
                index += 1
            }
            return true
        }
    }

    /// The index of the first `byte` in `range` of `bytes`, or nil.
    static func index(of byte: UInt8, in bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard !range.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { held -> Int? in
            guard let hit = memchr(held.baseAddress! + range.lowerBound, Int32(byte), range.count) else { return nil }
            return held.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Whether `range` of `bytes` and `otherRange` of `other` hold the same bytes.
    static func same(_ bytes: [UInt8], _ range: Range<Int>, _ other: [UInt8], _ otherRange: Range<Int>) -> Bool {
        guard range.count == otherRange.count else { return false }
        guard !range.isEmpty else { return true }
        return bytes.withUnsafeBufferPointer { held in
            other.withUnsafeBufferPointer { them in
                memcmp(held.baseAddress! + range.lowerBound, them.baseAddress! + otherRange.lowerBound, range.count) == 0
            }
        }
    }

    @discardableResult
    mutating func skipSpaces() -> Bool {
        let start = cursor
        while cursor < buffer.count, Self.isSpace(buffer[cursor]) { cursor += 1 }
        return cursor > start
    }

    func starts(with literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard buffer.count - cursor >= count else { return false }
        for offset in 0..<count where buffer[cursor + offset] != literal.utf8Start[offset] { return false }
        return true
    }

    /// Moves the cursor past the first `terminator` at `skipped` bytes or more from it.
    mutating func skip(past terminator: StaticString, from skipped: Int, what: String) throws(VaultError) {
        guard let found = try find(terminator, from: cursor + skipped) else { throw fail("the document ends inside a \(what)") }
        cursor = found + terminator.utf8CodeUnitCount
    }

    /// The range `range` of the document, as a range of `buffer`.
    @inline(__always)
    func relative(_ range: Range<Int>) -> Range<Int> { (range.lowerBound - base)..<(range.upperBound - base) }

    /// Whether the bytes at `range` spell `name`.
    @inline(__always)
    public func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount && buffer.withUnsafeBufferPointer { held in
            memcmp(held.baseAddress! + (range.lowerBound - base), name.utf8Start, range.count) == 0
        }
    }

    /// Whether the bytes at `range` are all white space (space, tab, LF, CR).
    @inline(__always)
    public func isWhiteSpace(_ range: Range<Int>) -> Bool { Self.allSpace(buffer, relative(range)) }

    /// `body` of the bytes at `range`, where they lie (valid until the next event).
    @inline(__always)
    public func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let held = relative(range)
        return buffer.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[held])) }
    }

    /// The value of the last start tag's attribute `name`, references resolved; nil when absent.
    public func attribute(_ name: StaticString) throws(VaultError) -> [UInt8]? {
        guard let found = attribute(named: name) else { return nil }
        var value: [UInt8] = []
        try decode(found.value, into: &value)
        return value
    }

    // MARK: Elements read without events

    /// A position to name in a later message (`line(at:)`).
    public struct Place {
        let offset: Int
        /// Counted when the place was taken (a streamed reader may drop its bytes before the message).
        let line: Int?
    }

    /// Where the next event starts, to name later: a streamed reader counts its line now (as
    /// `markLine()`), a reader of one buffer when asked (every byte stays: the count is the same).
    public mutating func place() -> Place {
        streamed ? Place(offset: position, line: markLine()) : Place(offset: position, line: nil)
    }

    /// The 1-based line of `place` (the line mark moves there, as `markLine()` moves it).
    public mutating func line(at place: Place) -> Int {
        if let line = place.line { return line }
        moveLineMark(to: place.offset)
        return lineAtMark
    }

    /// The text of an element `name` when the document goes on, from the cursor, with white
    /// space, `<name>`, text that holds no reference and no CR, and `</name>`, all held: the
    /// reader moves past them and returns where the text lies in the document. These are what
    /// `next()` (the white space skipped as a caller of KeePass's elements skips it) and
    /// `withText` read there, with the same result. Nil, nothing read, when anything else comes
    /// next (then read it with `next()`). A place in the text (`Place(offset:)`) may be named
    /// until the next read.
    public mutating func textElement(_ name: StaticString) -> Range<Int>? {
        textElement(name, trueAttribute: nil)?.text
    }

    /// `textElement(_:)` of an element whose start tag may also be `<name attribute="True">`
    /// (KeePass's `<Value ProtectInMemory="True">`, exactly so): whether it was, with the text.
    /// The attribute is then the last start tag's, as `next()` leaves it.
    public mutating func textElement(_ name: StaticString, trueAttribute attribute: StaticString?) -> (text: Range<Int>, attribute: Bool)? {
        guard !pendingEnd, openCount > 0, openCount < Self.maxDepth else { return nil }
        let count = name.utf8CodeUnitCount
        var index = cursor
        while index < buffer.count, Self.isSpace(buffer[index]) { index += 1 }
        guard buffer.count - index > count + 1, buffer[index] == UInt8(ascii: "<"), Self.spells(buffer, at: index + 1, name) else { return nil }
        var start = index + count + 2
        var given: Attribute?
        if buffer[index + 1 + count] != UInt8(ascii: ">") {
            // ` attribute="True">`: a space, the name, `="True"`, '>'.
            guard let attribute, buffer[index + 1 + count] == UInt8(ascii: " ") else { return nil }
            let nameAt = index + count + 2, length = attribute.utf8CodeUnitCount
            guard buffer.count - nameAt > length + 8, Self.spells(buffer, at: nameAt, attribute), Self.spells(buffer, at: nameAt + length, "=\"True\">") else {
                return nil
            }
            given = Attribute(name: (base + nameAt)..<(base + nameAt + length), value: (base + nameAt + length + 2)..<(base + nameAt + length + 6))
            start = nameAt + length + 8
        }
        guard let lessThan = Self.plainTextEnd(buffer, from: start),
              buffer.count - lessThan > count + 2, buffer[lessThan + 1] == UInt8(ascii: "/"), Self.spells(buffer, at: lessThan + 2, name),
              buffer[lessThan + 2 + count] == UInt8(ascii: ">") else { return nil }
        cursor = lessThan + count + 3
        attributeCount = 0
        if let given {
            if attributeList.isEmpty { attributeList.append(given) } else { attributeList[0] = given }
            attributeCount = 1
        }
        return ((base + start)..<(base + lessThan), given != nil)
    }

    /// The next event when it is, after white space (held), a start tag without attributes
    /// (`<name>`) or the end tag of the innermost open element, inside the root element: read as
    /// `next()` reads it (the white space skipped as a caller of KeePass's elements skips it).
    /// Nil, nothing read, when anything else comes next (then read it with `next()`).
    public mutating func nextTag() -> Event? {
        guard !pendingEnd, openCount > 0 else { return nil }
        var index = cursor
        while index < buffer.count, Self.isSpace(buffer[index]) { index += 1 }
        guard buffer.count - index > 2, buffer[index] == UInt8(ascii: "<") else { return nil }
        let first = buffer[index + 1]
        if first == UInt8(ascii: "/") {
            guard let after = endOfOpenEndTag(at: index + 2) else { return nil }
            cursor = after
            popOpen()
            return .end
        }
        // Not a comment, CDATA, declaration or processing instruction; a name ended by '>'.
        guard first != UInt8(ascii: "!"), first != UInt8(ascii: "?"), openCount < Self.maxDepth else { return nil }
        var end = index + 1
        while end < buffer.count, !(buffer[end] < 64 && Self.nameEnds >> UInt64(buffer[end]) & 1 != 0) { end += 1 }
        guard end > index + 1, end - (index + 1) <= Self.maxNameLength, end < buffer.count, buffer[end] == UInt8(ascii: ">"),
              (try? push((index + 1)..<end)) != nil else { return nil }
        cursor = end + 1
        attributeCount = 0
        return .start((base + index + 1)..<(base + end))
    }

    /// Reads the end tag of the innermost open element when it comes next (after white space,
    /// held), as `next()` reads it: true; false, nothing read, otherwise.
    public mutating func end() -> Bool {
        guard !pendingEnd, openCount > 0 else { return false }
        var index = cursor
        while index < buffer.count, Self.isSpace(buffer[index]) { index += 1 }
        guard buffer.count - index > 2, buffer[index] == UInt8(ascii: "<"), buffer[index + 1] == UInt8(ascii: "/"),
              let after = endOfOpenEndTag(at: index + 2) else { return false }
        cursor = after
        popOpen()
        return true
    }

    /// Reads the start tag of an element `name` when it comes next (after white space, held), as
    /// `next()` reads it, attributes and errors alike: true; false, nothing read, otherwise.
    public mutating func start(_ name: StaticString) throws(VaultError) -> Bool {
        guard !pendingEnd, openCount > 0 else { return false }
        let count = name.utf8CodeUnitCount
        var index = cursor
        while index < buffer.count, Self.isSpace(buffer[index]) { index += 1 }
        // The name ends where `readName` would end it.
        guard buffer.count - index > count + 1, buffer[index] == UInt8(ascii: "<"), Self.spells(buffer, at: index + 1, name),
              buffer[index + 1 + count] < 64, Self.nameEnds >> UInt64(buffer[index + 1 + count]) & 1 != 0 else { return false }
        cursor = index
        if streamed { _ = try findTagEnd() }
        _ = try readStartTag()
        return true
    }

    /// Whether `bytes` from `index` on spell `name` (the caller checked that they are held);
    /// eight bytes at a time, then one (names are short: no call to memcmp).
    @inline(__always)
    static func spells(_ bytes: [UInt8], at index: Int, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        return bytes.withUnsafeBufferPointer { held in
            let given = UnsafeRawPointer(held.baseAddress! + index), wanted = UnsafeRawPointer(name.utf8Start)
            var offset = 0
            while count - offset >= 8 {
                guard given.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == wanted.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
                offset += 8
            }
            while offset < count {
                guard given.load(fromByteOffset: offset, as: UInt8.self) == wanted.load(fromByteOffset: offset, as: UInt8.self) else { return false }
                offset += 1
            }
            return true
        }
    }

    /// The index in `bytes` of the first '<' at or after `start` when no '&' and no CR come before
    /// it (the text up to it is plain, as `isPlain` tells); nil when one does, or no '<' is held.
    /// Eight bytes at a time: the lowest mark of "has a zero byte" of each test is its first such
    /// byte (a borrow only runs upwards), so the lowest of the three is the first of the three bytes.
    static func plainTextEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        bytes.withUnsafeBytes { held -> Int? in
            var index = start
            let low: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
            while held.count - index >= 8 {
                let word = held.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let less = word ^ 0x3C3C_3C3C_3C3C_3C3C, amp = word ^ 0x2626_2626_2626_2626, cr = word ^ 0x0D0D_0D0D_0D0D_0D0D
                let found = ((less &- low) & ~less & high) | ((amp &- low) & ~amp & high) | ((cr &- low) & ~cr & high)
                if found != 0 {
                    index += found.trailingZeroBitCount >> 3
                    return held[index] == UInt8(ascii: "<") ? index : nil
                }
                index += 8
            }
            while index < held.count {
                let byte = held[index]
                if byte == UInt8(ascii: "<") { return index }
                if byte == UInt8(ascii: "&") || byte == 0x0D { return nil }
                index += 1
            }
            return nil
        }
    }

    /// The last start tag's attribute `name`, or nil.
    @inline(__always)
    func attribute(named name: StaticString) -> Attribute? {
        for index in 0..<attributeCount where matches(attributeList[index].name, name) { return attributeList[index] }
        return nil
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
}
