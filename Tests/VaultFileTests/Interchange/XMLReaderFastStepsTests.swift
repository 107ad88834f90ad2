import Foundation
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The reader's one-step reads (`textElement`, `nextTag`, `end`, `start`), which the KeePass
/// parser tries before `next()`: each reads exactly what `next()` (white space between elements
/// skipped, as the parser skips it) and `withText` read from the same place, or nothing at all.
@Suite struct XMLReaderFastStepsTests {
    /// Pieces of KeePass XML, well-formed and not: tags with and without attributes, white space,
    /// text with references, CR, '>' and non-ASCII, CDATA, comments, empty elements, end tags
    /// with a space or of another element.
    static let pieces = ["<Key>", "</Key>", "<Value>", "</Value>", "<Value ProtectInMemory=\"True\">", "<Value ProtectInMemory=\"False\">",
                         "<Value ProtectInMemory='True'>", "<Value  ProtectInMemory=\"True\">", "<Value ProtectInMemory=\"True\" >", "<Value/>",
                         "<String>", "</String>", "<Key >", "</Key >", "</Kez>", "<Kéy>", "</Kéy>", " ", "\n\t", "\r\n", "Title", "pass word",
                         "a&amp;b", "x\ry", "a>b", "naïve", "<![CDATA[c<d]]>", "<!--c-->", "<?pi x?>", "<KeyX>", "</KeyX>", "&#65;", "<>", "</>"]

    static let spaces = ["", "", " ", "\n\t", "\r\n"]
    static let texts = ["Title", "", "pass word", "a&amp;b", "x\ry", "a>b", "naïve", "<![CDATA[c<d]]>", "a<!--c-->b", "&#65;", "a&b"]
    static let valueTags = ["<Value>", "<Value ProtectInMemory=\"True\">", "<Value ProtectInMemory=\"False\">", "<Value ProtectInMemory='True'>",
                            "<Value  ProtectInMemory=\"True\">", "<Value ProtectInMemory=\"True\" >", "<Value ProtectInMemory=\"True\" Protected=\"False\">"]

    /// A document of `count` KeePass strings inside a root element, their tags, white space and
    /// texts of every form above, and now and then a random piece (then often not well-formed).
    static func document(_ rng: inout SystemRandomNumberGenerator, count: Int) -> [UInt8] {
        func any(_ list: [String]) -> String { list.randomElement(using: &rng)! }
        var text = "<r>"
        for _ in 0..<count {
            if Int.random(in: 0..<10, using: &rng) == 0 { text += any(pieces); continue }
            text += any(spaces) + "<String>" + any(spaces) + any(["<Key>", "<Key>", "<Key >"]) + any(texts) + any(["</Key>", "</Key>", "</Key >"]) + any(spaces)
            text += Int.random(in: 0..<6, using: &rng) == 0 ? "<Value/>" : any(valueTags) + any(texts) + "</Value>"
            text += any(spaces) + "</String>"
        }
        return Array((text + any(spaces) + "</r>").utf8)
    }

    /// The next event of `reader` that is not white space between elements, as the parser reads it.
    static func nextElement(_ reader: inout XMLReader) throws(VaultError) -> XMLReader.Event {
        while true {
            let event = try reader.next()
            if case .text(let range, _) = event, reader.isWhiteSpace(range) { continue }
            return event
        }
    }

    /// The last start tag's attributes as text.
    static func attributes(_ reader: XMLReader) -> [String] {
        reader.attributes.map { reader.text(of: $0.name) + "=" + reader.text(of: $0.value) }
    }

    /// Whether `fast` and `slow` stand at the same place with the same open elements and attributes.
    static func same(_ fast: XMLReader, _ slow: XMLReader) -> Bool {
        fast.position == slow.position && fast.depth == slow.depth && attributes(fast) == attributes(slow) && fast.line == slow.line
    }

    @Test func test_fastSteps_readWhatNextAndWithTextRead() throws {
        var rng = SystemRandomNumberGenerator()
        var read = 0, declined = 0
        for _ in 0..<300 {
            let bytes = Self.document(&rng, count: Int.random(in: 1...12, using: &rng))
            guard var reader = try? XMLReader(bytes) else { continue }
            guard case .start = try reader.next() else { continue }
            for _ in 0..<64 {
                var fast = reader, slow = reader
                let names: [StaticString] = ["Key", "Value", "String"]
                let name = names.randomElement(using: &rng)!
                switch Int.random(in: 0..<5, using: &rng) {
                case 0, 1:
                    let attribute: StaticString? = Bool.random(using: &rng) ? "ProtectInMemory" : nil
                    if let got = fast.textElement(name, trueAttribute: attribute) {
                        read += 1
                        guard case .start(let tag) = try Self.nextElement(&slow) else { Issue.record("no start tag where textElement read one"); break }
                        #expect(slow.text(of: tag) == "\(name)")
                        #expect(Self.attributes(slow) == (got.attribute ? ["ProtectInMemory=True"] : []))
                        let text = try slow.withText("text") { Array($0) }
                        #expect(fast.withBytes(got.text) { Array($0) } == text)
                        #expect(Self.same(fast, slow))
                    } else {
                        declined += 1
                        #expect(fast.position == reader.position)
                    }
                case 2:
                    if let event = fast.nextTag() {
                        read += 1
                        let expected = try Self.nextElement(&slow)
                        switch (event, expected) {
                        case (.start(let a), .start(let b)): #expect(fast.text(of: a) == slow.text(of: b))
                        case (.end, .end): break
                        default: Issue.record("nextTag gave \(event), next() \(expected)")
                        }
                        #expect(Self.same(fast, slow))
                    } else {
                        declined += 1
                        #expect(fast.position == reader.position)
                    }
                case 3:
                    if fast.end() {
                        read += 1
                        #expect(try Self.nextElement(&slow) == .end)
                        #expect(Self.same(fast, slow))
                    } else {
                        declined += 1
                        #expect(fast.position == reader.position)
                    }
                default:
                    let started = Result<Bool, VaultError>(catching: { () throws(VaultError) -> Bool in try fast.start(name) })
                    switch started {
                    case .success(true):
                        read += 1
                        guard case .start(let tag) = try Self.nextElement(&slow) else { Issue.record("no start tag where start read one"); break }
                        #expect(slow.text(of: tag) == "\(name)")
                        #expect(Self.same(fast, slow))
                    case .success(false):
                        declined += 1
                        #expect(fast.position == reader.position)
                    case .failure(let error):
                        let slowError: String? = { () -> String? in
                            do { _ = try Self.nextElement(&slow); return nil } catch { return "\(error)" }
                        }()
                        #expect(slowError == "\(error)")
                    }
                }
                // On by one event of the plain walk (or stop where it fails).
                guard (try? reader.next()).map({ $0 != .endOfDocument }) == true else { break }
            }
        }
        // Both ways were taken many times.
        #expect(read > 1000 && declined > 1000)
    }
}
