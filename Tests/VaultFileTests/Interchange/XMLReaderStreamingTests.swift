import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// XMLReader fed a window at a time (issue 45: a KDBX file's XML read as zlib inflates it, never
/// whole in memory): every window size, from 1 byte to the whole document, gives the events, the
/// items and the errors that reading the document from one buffer gives.
@Suite struct XMLReaderStreamingTests {
    /// A document with every construct the reader knows, split anywhere by small windows: a byte
    /// order mark, the declaration, comments, a processing instruction, CDATA, references, CR LF,
    /// two-, three- and four-byte characters, quoted '>' and quotes in attribute values, empty
    /// elements, and a text longer than most windows.
    static let document: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("""
        <?xml version="1.0" encoding="UTF-8"?>\r
        <!-- a comment with <tags> & single dashes - here -->
        <root a="x>y" b='q"r' c="&amp;&#65;&#x42;">\r
          <é k="ü">naïve — 日本 𝄞</é><empty/><e2 z='1' />\r
          <t>one &lt;two&gt; &quot;three&quot; &apos;four&apos;\r\nfive\rsix</t>
          <![CDATA[raw <b> & ]] ]> stuff]]><?pi some data?>
          <long>\(String(repeating: "0123456789abcdef", count: 300))</long>
        </root>
        <!-- trailing -->

        """.utf8)

    /// A source handing over `bytes` at most `most` bytes per call (fewer than asked when `most` is smaller).
    static func source(_ bytes: [UInt8], most: Int = .max) -> XMLReader.Source {
        var offset = 0
        return { (target) throws(VaultError) -> Int in
            let count = min(target.count, most, bytes.count - offset)
            for index in 0..<count { target[index] = bytes[offset + index] }
            offset += count
            return count
        }
    }

    /// Every event of `reader` as text: names, attributes with their values decoded, text decoded.
    static func events(_ reader: inout XMLReader) throws(VaultError) -> [String] {
        var seen: [String] = []
        while true {
            let event = try reader.next()
            switch event {
            case .start(let name):
                var attributes: [String] = []
                for attribute in reader.attributes {
                    var value: [UInt8] = []
                    try reader.decode(attribute.value, into: &value)
                    attributes.append(reader.text(of: attribute.name) + "=" + String(decoding: value, as: UTF8.self))
                }
                seen.append("<\(reader.text(of: name)) \(attributes.joined(separator: " "))> at \(reader.line)")
            case .end:
                seen.append("</>")
            case .text(let range, let plain):
                var text: [UInt8] = []
                try reader.decode(range, into: &text)
                seen.append("text(\(plain)) " + String(decoding: text, as: UTF8.self))
            case .cdata(let range):
                seen.append("cdata " + reader.text(of: range))
            case .endOfDocument:
                seen.append("end of document at \(reader.line)")
                return seen
            }
        }
    }

    static func streamed(_ bytes: [UInt8], window: Int, most: Int = .max) throws(VaultError) -> [String] {
        var reader = try XMLReader(window: window, source: source(bytes, most: most))
        defer { reader.wipe() }
        return try events(&reader)
    }

    static func whole(_ bytes: [UInt8]) throws(VaultError) -> [String] {
        var reader = try XMLReader(bytes)
        return try events(&reader)
    }

    /// The error `body` throws, as text ("no error" when it throws none).
    static func failure<R>(_ body: () throws(VaultError) -> R) -> String {
        do { _ = try body(); return "no error" } catch { return error.description }
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("import/\(name)")))
    }

    /// What an import keeps of `read`, as text to compare.
    static func summary(_ read: ForeignImport) -> String {
        var lines = read.items.map { item in
            [item.folders.joined(separator: "/"), item.title, String(decoding: item.value, as: UTF8.self), item.username ?? "-",
             item.urls.joined(separator: ","), item.notes ?? "-", item.totp ?? "-",
             item.fields.map { "\($0.label)=\(String(decoding: $0.value, as: UTF8.self))/\($0.protected)" }.joined(separator: ";"),
             item.attachments.map { "\($0.name):\($0.bytes.count):\($0.bytes.reduce(0) { $0 &* 31 &+ Int($1) })" }.joined(separator: ";"),
             "\(item.created ?? -1)/\(item.modified ?? -1)",
             item.history.map { "\(String(decoding: $0.value, as: UTF8.self))/\($0.username ?? "-")/\($0.notes ?? "-")/\($0.modified ?? -1)" }.joined(separator: ";"),
             item.extras.map { "\($0.label)=\($0.value)" }.joined(separator: ";")].joined(separator: "|")
        }
        lines += read.notKept.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return lines.joined(separator: "\n")
    }

    // MARK: - Success

    @Test func test_next_everyWindowSizeGivesTheEventsOfOneBuffer() throws {
        let expected = try Self.whole(Self.document)
        #expect(expected.contains("cdata raw <b> & ]] ]> stuff") && expected.contains("<root a=x>y b=q\"r c=&AB> at 3"), "\(expected)")
        #expect(expected.contains("text(false) one <two> \"three\" 'four'\nfive\nsix"))
        for window in Array(1...80) + [127, 128, 4096, Self.document.count, 1 << 16] {
            #expect(try Self.streamed(Self.document, window: window) == expected, "window \(window)")
        }
    }

    @Test func test_next_aSourceThatGivesLessThanAskedReadsTheSame() throws {
        let expected = try Self.whole(Self.document)
        for most in [1, 2, 3, 5, 11] {
            #expect(try Self.streamed(Self.document, window: 64, most: most) == expected, "at most \(most) bytes a call")
        }
    }

    @Test func test_read_keePassFixturesStreamedAtEveryWindowMatchOneBuffer() throws {
        for name in ["keepassxc.xml", "keepass2.xml"] {
            let bytes = try Self.fixture(name)
            let expected = Self.summary(try KeePassXMLReader.read(bytes, now: 0))
            let budget = ExpansionBudget(inputBytes: bytes.count, what: name)
            for window in Array(1...24) + [61, 512, 4093, bytes.count, 1 << 16] {
                var parser = try KeePassXMLParser(window: window, source: Self.source(bytes), unprotect: nil, budget: budget)
                let read = try KeePassXMLReader.read(&parser, format: "keepass-xml", pool: nil)
                #expect(Self.summary(read) == expected, "\(name), window \(window)")
            }
        }
    }

    // MARK: - Failure

    @Test func test_next_errorsStreamedNameTheLinesOfOneBuffer() throws {
        let cases: [(String, String)] = [
            ("<a>\n<b>\n</a>", "does not close the element 'b'"),
            ("<a>\n\n\n<b x='1' x='2'/></a>", "appears twice"),
            ("<a>&bogus;</a>", "not one of XML's own"),
            ("<a>\n\n<!DOCTYPE x></a>", "document type declaration"),
            ("<a>\n<b>text", "the document ends inside the element 'b'"),
            ("<a>\n<!-- never closed", "ends inside a comment"),
            ("<a><![CDATA[never closed", "ends inside a CDATA section"),
            ("<a b=\"never closed>", "ends inside"),
            ("<a>\n\n\u{01}</a>", "line 3: a control character (byte 1)"),
            ("<a/><b/>", "a second root element"),
            ("text", "text outside the root element"),
            ("", "no root element"),
        ]
        for (text, words) in cases {
            let bytes = Array(text.utf8)
            let expected = Self.failure { () throws(VaultError) in try Self.whole(bytes) }
            #expect(expected.contains(words), "\(text): \(expected)")
            for window in [1, 2, 3, 7, 64] {
                #expect(Self.failure { () throws(VaultError) in try Self.streamed(bytes, window: window) } == expected, "\(text), window \(window)")
            }
        }
    }

    @Test func test_init_refusesUTF16AndBadUTF8CutAtAnyWindow() throws {
        for window in [1, 2, 3, 4, 64] {
            #expect(Self.failure { () throws(VaultError) in try Self.streamed([0xFF, 0xFE, 0x3C, 0x00], window: window) }.contains("UTF-16"))
            // An overlong form, a lone continuation byte, and a four-byte character cut by the end.
            for bad: [UInt8] in [[0x3C, 0x61, 0x3E, 0xC0, 0xAF, 0x3C, 0x2F, 0x61, 0x3E], [0x3C, 0x61, 0x3E, 0x80], [0x3C, 0x61, 0x3E, 0xF0, 0x9D, 0x84]] {
                #expect(Self.failure { () throws(VaultError) in try Self.streamed(bad, window: window) }.contains("not UTF-8"), "\(bad), window \(window)")
            }
        }
    }

    @Test func test_next_aSourceErrorIsThrownAsItIs() throws {
        var calls = 0
        let start = Array("<a>".utf8)
        let failing: XMLReader.Source = { (target) throws(VaultError) -> Int in
            calls += 1
            guard calls <= start.count else { throw .sourceDamaged(file: "f", why: "the stream broke") }
            target[0] = start[calls - 1]
            return 1
        }
        var reader = try XMLReader(window: 1, source: failing)
        #expect(Self.failure { () throws(VaultError) in try reader.next() }.contains("the stream broke"))
    }

    // MARK: - Edge cases

    @Test func test_next_aTruncatedStreamFailsAtEveryLengthAsOneBufferDoes() throws {
        for length in 0..<Self.document.count {
            let cut = Array(Self.document.prefix(length))
            let expected = Self.failure { () throws(VaultError) in try Self.whole(cut) }
            #expect(Self.failure { () throws(VaultError) in try Self.streamed(cut, window: 5) } == expected, "cut at \(length)")
        }
    }

    @Test func test_withText_aPlainTextIsHeldWhileItsEndTagComesIn() throws {
        // The text fills the window; its end tag comes in the next ones.
        let bytes = Array("<a><v>\(String(repeating: "x", count: 10))</v><v>tail</v></a>".utf8)
        for window in 1...20 {
            var reader = try XMLReader(window: window, source: Self.source(bytes))
            _ = try reader.next()
            var texts: [String] = []
            for _ in 0..<2 {
                _ = try reader.next()
                texts.append(try reader.withText("v") { String(decoding: $0, as: UTF8.self) })
            }
            #expect(texts == [String(repeating: "x", count: 10), "tail"], "window \(window)")
            reader.wipe()
        }
    }

    @Test func test_markLine_countsAsOneBufferWhateverWasDropped() throws {
        let bytes = Array((0..<200).map { "<e>\($0)</e>\n" }.joined().utf8)
        let document = Array("<r>\n".utf8) + bytes + Array("</r>".utf8)
        var reader = try XMLReader(window: 3, source: Self.source(document))
        var lines: [Int] = []
        while true {
            let event = try reader.next()
            if case .endOfDocument = event { break }
            if case .start(let name) = event, reader.matches(name, "e") { lines.append(reader.markLine()) }
        }
        #expect(lines == Array(2...201))
    }

    /// The scans that look at eight bytes at a time or jump with memchr (`isPlain`, `firstForbidden`,
    /// `newlines`, `index(of:in:_:)`, `same`) answer as the byte walk does, on random bytes drawn
    /// mostly from the bytes they look for, at every start and end of a short buffer.
    @Test func test_wordScans_agreeWithTheByteWalk() {
        var generator = SplitMix(seed: 44_028)
        let pool: [UInt8] = [0x26, 0x0D, 0x0A, 0x09, 0x00, 0x1F, 0x20, 0x3C, 0x41, 0x7F, 0x80, 0xA6, 0x8D, 0xFF]
        var disagreements: [String] = []
        var compared = 0
        for _ in 0..<300 {
            let count = Int(generator.next() % 40)
            let bytes = (0..<count).map { _ in generator.next() % 3 == 0 ? pool.randomElement(using: &generator)! : UInt8(0x61) }
            for start in 0...count {
                for end in start...count {
                    let slice = bytes[start..<end]
                    let agree = [
                        XMLReader.isPlain(bytes, start..<end) == !slice.contains { $0 == 0x26 || $0 == 0x0D },
                        XMLReader.firstForbidden(bytes, start..<end) == slice.firstIndex { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D },
                        XMLReader.newlines(in: bytes, start..<end) == slice.filter { $0 == 0x0A }.count,
                        XMLReader.index(of: 0x3C, in: bytes, start..<end) == slice.firstIndex(of: 0x3C),
                        XMLReader.allSpace(bytes, start..<end) == slice.allSatisfy(XMLReader.isSpace),
                        XMLReader.same(bytes, start..<end, bytes, 0..<(end - start)) == slice.elementsEqual(bytes[0..<(end - start)]),
                        XMLReader.plainTextEnd(bytes, from: start) == bytes[start...].firstIndex(of: 0x3C).flatMap { lessThan in
                            bytes[start..<lessThan].contains { $0 == 0x26 || $0 == 0x0D } ? nil : lessThan
                        },
                    ]
                    compared += 1
                    if let which = agree.firstIndex(of: false) { disagreements.append("scan \(which) on \(bytes) \(start)..<\(end)") }
                }
            }
        }
        #expect(compared > 50_000)
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }
}
