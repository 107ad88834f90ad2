#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

extension XMLReader {
    // MARK: Tags

    mutating func readStartTag() throws(VaultError) -> Event {
        guard !(openCount == 0 && rootSeen) else { throw fail("a second root element") }
        cursor += 1
        let name = try readName()
        attributeCount = 0
        // Most tags: the name, then '>' at once.
        if cursor < buffer.count, buffer[cursor] == UInt8(ascii: ">") {
            cursor += 1
            try push(name)
            return .start((base + name.lowerBound)..<(base + name.upperBound))
        }
        while true {
            let hadSpace = skipSpaces()
            guard cursor < buffer.count else { throw fail("the document ends inside a start tag") }
            if buffer[cursor] == UInt8(ascii: ">") { cursor += 1; break }
            if buffer[cursor] == UInt8(ascii: "/"), cursor + 1 < buffer.count, buffer[cursor + 1] == UInt8(ascii: ">") { cursor += 2; pendingEnd = true; break }
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
            guard let end = Self.index(of: quote, in: buffer, start..<buffer.count) else { throw fail("the document ends inside an attribute value") }
            guard Self.index(of: UInt8(ascii: "<"), in: buffer, start..<end) == nil else { throw fail("'<' inside an attribute value") }
            for earlier in attributeList[..<attributeCount]
            where Self.same(buffer, (earlier.name.lowerBound - base)..<(earlier.name.upperBound - base), buffer, attributeName) {
                throw fail("the attribute '\(String(decoding: buffer[attributeName], as: UTF8.self))' appears twice in one tag")
            }
            guard attributeCount < Self.maxAttributes else { throw fail("more than \(Self.maxAttributes) attributes in one tag") }
            let attribute = Attribute(name: (base + attributeName.lowerBound)..<(base + attributeName.upperBound), value: (base + start)..<(base + end))
            if attributeCount < attributeList.count { attributeList[attributeCount] = attribute } else { attributeList.append(attribute) }
            attributeCount += 1
            cursor = end + 1
        }
        try push(name)
        return .start((base + name.lowerBound)..<(base + name.upperBound))
    }

    /// Opens the element whose name lies at `name` of `buffer`.
    @inline(__always)
    mutating func push(_ name: Range<Int>) throws(VaultError) {
        guard openCount < Self.maxDepth else { throw fail("elements nest more than \(Self.maxDepth) levels deep") }
        var bounds = name
        if streamed {
            let start = openCount > 0 ? openBounds[2 * openCount - 1] : 0, end = start + name.count
            if openNames.count < end { openNames.append(contentsOf: repeatElement(0, count: end - openNames.count)) }
            // A byte at a time (names are short): one array read while the other is written made a
            // retain and a release of the document's buffer per start tag.
            var to = start
            for index in name {
                openNames[to] = buffer[index]
                to += 1
            }
            bounds = start..<end
        }
        openBounds[2 * openCount] = bounds.lowerBound
        openBounds[2 * openCount + 1] = bounds.upperBound
        openCount += 1
        rootSeen = true
    }

    mutating func readEndTag() throws(VaultError) -> Event {
        // The end tag of the open element, as most are: its name and '>' compared where they lie.
        if let after = endOfOpenEndTag(at: cursor + 2) {
            cursor = after
            popOpen()
            return .end
        }
        let tagStart = position
        cursor += 2
        let name = try readName()
        skipSpaces()
        guard cursor < buffer.count, buffer[cursor] == UInt8(ascii: ">") else { throw fail("an end tag that is not well-formed") }
        cursor += 1
        guard openCount > 0 else { throw fail("an end tag '</\(text(held: name))>' with no element open", at: tagStart) }
        let (top, end) = (openBounds[2 * openCount - 2], openBounds[2 * openCount - 1])
        guard Self.same(streamed ? openNames : buffer, top..<end, buffer, name) else {
            throw fail("the end tag '</\(text(held: name))>' does not close the element '\(openName)'", at: tagStart)
        }
        popOpen()
        return .end
    }

    /// The innermost open element's name, for messages.
    var openName: String {
        guard openCount > 0 else { return "" }
        return String(decoding: (streamed ? openNames : buffer)[openBounds[2 * openCount - 2]..<openBounds[2 * openCount - 1]], as: UTF8.self)
    }

    @inline(__always)
    mutating func popOpen() {
        openCount -= 1
    }

    /// The index past the end tag of the innermost open element when one lies whole at `start` of
    /// `buffer` (after its `</`): its name, then `>` at once (what `readEndTag` reads the slow way
    /// then finds the same: the name ends at the '>', a byte no name holds). Nil otherwise.
    @inline(__always)
    func endOfOpenEndTag(at start: Int) -> Int? {
        guard openCount > 0 else { return nil }
        let top = openBounds[2 * openCount - 2], count = openBounds[2 * openCount - 1] - top
        guard start + count < buffer.count else { return nil }
        let same: Bool
        if streamed {
            same = openNames.withUnsafeBufferPointer { names in
                buffer.withUnsafeBufferPointer { held in memcmp(names.baseAddress! + top, held.baseAddress! + start, count) == 0 }
            }
        } else {
            same = buffer.withUnsafeBufferPointer { held in memcmp(held.baseAddress! + top, held.baseAddress! + start, count) == 0 }
        }
        guard same, buffer[start + count] == UInt8(ascii: ">") else { return nil }
        return start + count + 1
    }

    /// The bytes at `range` of `buffer` as text (names in messages).
    func text(held range: Range<Int>) -> String { String(decoding: buffer[range], as: UTF8.self) }

    /// `<?target …?>`; the XML declaration's encoding, when it names one, must be UTF-8.
    mutating func readProcessingInstruction() throws(VaultError) {
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

    /// The bytes that end a name, as bits: tab, LF, CR, space, '"', "'", '/', '<', '=', '>'.
    static var nameEnds: UInt64 { 0x7000_8085_0000_2600 }

    /// A name at the cursor, as a range of `buffer`.
    mutating func readName() throws(VaultError) -> Range<Int> {
        let start = cursor
        cursor = buffer.withUnsafeBufferPointer { held -> Int in
            var index = start
            // Eight bytes at a time: every byte that ends a name is below 64, and the lowest mark
            // of "has a byte less than 64" (the bit trick, exact for 64 ≤ 128: a borrow only runs
            // upwards) is the first such byte; a digit, '-', '.' or ':' is passed over.
            while held.count - index >= 8 {
                let word = UnsafeRawPointer(held.baseAddress! + index).loadUnaligned(as: UInt64.self)
                let below = (word &- 0x4040_4040_4040_4040) & ~word & 0x8080_8080_8080_8080
                if below == 0 { index += 8; continue }
                index += below.trailingZeroBitCount >> 3
                if Self.nameEnds >> UInt64(held[index]) & 1 != 0 { return index }
                index += 1
            }
            while index < held.count {
                let byte = held[index]
                // Every byte that ends a name is below 64: one bit of `nameEnds` each.
                if byte < 64, Self.nameEnds >> UInt64(byte) & 1 != 0 { break }
                index += 1
            }
            return index
        }
        guard cursor > start else { throw fail("a tag without a name") }
        guard cursor - start <= Self.maxNameLength else { throw fail("a name longer than \(Self.maxNameLength) bytes") }
        return start..<cursor
    }
}
