import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// enpass-json and 1pux (OnePUXReader) over the JSON tape, and the tape's refusals.
@Suite struct ForeignJSONReadersTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - Success

    @Test func test_enpassJSON_readsFoldersFieldsHistoryAndAttachments() throws {
        let read = try EnpassJSONReader.read(try KeePassXMLReaderTests.fixture("enpass.json"), now: 0)
        #expect(read.items.map(\.title) == ["Git server", "Alarm", "Visa"])
        let git = read.items[0]
        #expect(git.folders == ["Work", "Servers"] && git.username == "grace" && Self.text(git.value) == "enpass-secret")
        #expect(git.urls == ["https://git.example.com"] && git.totp == "JBSWY3DPEHPK3PXP" && git.notes == "Deploy key in the safe")
        #expect(git.fields.map { "\($0.label)=\(Self.text($0.value))=\($0.protected)" } == ["E-mail=grace@example.com=false", "Security answer=Rex=true"])
        #expect(git.history.map { Self.text($0.value) } == ["enpass-old"] && git.history[0].modified == 1_600_000_000_000)
        #expect(git.attachments.map { "\($0.name)=\(Self.text($0.bytes))" } == ["readme.txt=hello enpass"])
        #expect(git.created == 1_600_000_000_000 && git.modified == 1_650_000_000_000)
        #expect(git.extras.contains { $0.label == "favorite" && $0.value == "yes" })
        #expect(read.items[1].notes == "The alarm code is 2468\u{a0}(front door)" && read.items[1].extras.contains { $0.label == "archived" && $0.value == "yes" })
        #expect(read.items[2].fields.map(\.label) == ["Cardholder", "Number", "CVC"] && read.items[2].extras.contains { $0.label == "category" && $0.value == "creditcard" })
        #expect(read.notKept["Enpass's deleted fields"] == 1)
        #expect(read.notKept[EnpassJSONReader.sectionHeadings] == 1, "ADDITIONAL DETAILS: its field kept, its heading said")
    }

    @Test func test_onePUX_readsVaultsSectionsHistoryAndFiles() throws {
        let read = try OnePUXReader.read(try KeePassXMLReaderTests.fixture("1password.1pux"), now: 0)
        #expect(read.items.map(\.title) == ["Example", "Bike lock", "Deploy key"], "the trashed item is left out")
        #expect(read.notKept["1Password items in the trash (not imported)"] == 1)
        // Two titled sections of one item: one item, as the warning says (cold63 F6: before, 2).
        #expect(read.notKept[OnePUXReader.sectionTitles] == 1 && read.notKept["1Password's URL labels"] == 1,
                "the fields and URLs are kept; their headings and labels are said")
        let example = read.items[0]
        #expect(example.folders == ["Private"], "two vaults: each is a folder")
        #expect(example.username == "heidi@example.com" && Self.text(example.value) == "1p-secret")
        #expect(example.urls == ["https://example.com", "https://admin.example.com"])
        #expect(example.totp == "otpauth://totp/Example:heidi?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        #expect(example.notes == "Recovery kit printed")
        #expect(example.fields.map { "\($0.label)=\(Self.text($0.value))=\($0.protected)" }
                == ["remember=✓=false", "PIN=2580=true", "recovery e-mail=backup@example.com=false"])
        #expect(example.history.map { Self.text($0.value) } == ["1p-oldest", "1p-older"], "oldest first")
        #expect(example.attachments.map { "\($0.name)=\(Self.text($0.bytes))" } == ["codes.txt=1111-2222\n3333-4444\n55"])
        #expect(example.extras.contains { $0.label == "tags" && $0.value == "work, sso" } && example.extras.contains { $0.label == "favorite" && $0.value == "yes" })
        #expect(example.created == 1_600_000_000_000 && example.modified == 1_700_000_000_000)
        #expect(read.items[1].notes == "Combination 10-20-30" && read.items[1].extras.contains { $0.label == "archived" && $0.value == "yes" })
        let key = read.items[2]
        #expect(key.folders == ["Shared"] && key.extras.contains { $0.label == "category" && $0.value == "ssh key" })
        #expect(key.fields.first { $0.label == "private key" }.map { $0.protected && Self.text($0.value).hasPrefix("-----BEGIN OPENSSH") } == true)
        #expect(key.fields.first { $0.label == "address" }.map { Self.text($0.value) }?.contains("city: Springfield") == true)
    }

    // MARK: - Failure

    @Test func test_jsonTape_refusesWhatEveryJSONImportRefuses() {
        let cases: [(String, String)] = [
            (#"{"a": 1, "a": 2}"#, "appears twice"),
            (#"{"a": 1, "\u0061": 2}"#, "appears twice"),
            (#"{"é": 1, "e\u0301": 2}"#, "appears twice"),
            (String(repeating: "[", count: JSONTape.maxDepth + 1), "nest more than"),
            (#"{"a": 1,}"#, "expected a key"),
            (#"[1, 2,]"#, "expected a value"),
            (#"{"a": "\ud800"}"#, "not valid"),
            ("{\"a\": \"x\ty\"}", "not valid"),
            (#"{"a": 01}"#, "expected a value"),
            (#"{"a": 1} {"#, "more after the end"),
            (#"{"a" 1}"#, "expected ':'"),
            ("", "ends where a value"),
        ]
        for (text, words) in cases {
            do { _ = try JSONTape(Array(text.utf8), what: "a test"); Issue.record("accepted: \(text)") } catch {
                #expect(error.description.contains(words), "\(text): \(error)")
            }
        }
        // A large object: the repeat is found through the set of keys, in linear time.
        let many = "{" + (0..<50_000).map { "\"k\($0)\": 0" }.joined(separator: ",") + ", \"k49999\": 1}"
        #expect(throws: VaultError.self) { try JSONTape(Array(many.utf8), what: "a test") }
        #expect(throws: VaultError.self) { try JSONTape([0x22, 0xFF, 0x22], what: "a test") }
    }

    /// The repeated-key check (a bit per plain key, then the keys compared) on random objects
    /// of 1–24 keys, nested and side by side, each key spelled plain, escaped or non-ASCII
    /// (`"ab"`, `"a\u0062"`, `"é"`, `"e\u0301"`…): a document is refused exactly when one of its
    /// objects names one decoded key twice, and the tape of a value (a stream's) says the same.
    @Test func test_jsonTape_refusesARepeatedKeyExactlyWhenThereIsOne() {
        var generator = SplitMix(seed: 163)
        // Spellings of few decoded keys, many of one length and one first and last byte.
        let spellings: [(literal: String, key: String)] = [
            (#""ab""#, "ab"), (#""a\u0062""#, "ab"), (#""\u0061b""#, "ab"), (#""ba""#, "ba"), (#""aab""#, "aab"), (#""abb""#, "abb"),
            (#""""#, ""), (#""a""#, "a"), (#""\u0061""#, "a"), (#""é""#, "é"), (#""\u00e9""#, "é"), (#""e\u0301""#, "e\u{301}"),
            (#""title""#, "title"), (#""ti\u0074le""#, "title"), (#""tXtle""#, "tXtle"), (#""category""#, "category"),
            (#""favorite""#, "favorite"), (#""archived""#, "archived"), (#""k0""#, "k0"), (#""k1""#, "k1"), (#""k2""#, "k2"),
        ]
        func object(depth: Int, repeated: inout Bool) -> String {
            let count = 1 + Int(generator.nextByte()) % 24
            var keys: Set<String> = []
            var members: [String] = []
            for _ in 0..<count {
                let spelling = spellings[Int(generator.nextByte()) % spellings.count]
                if !keys.insert(spelling.key).inserted { repeated = true }
                let value = depth < 3 && generator.nextByte() % 4 == 0 ? "[\(object(depth: depth + 1, repeated: &repeated)), 1]" : "0"
                members.append("\(spelling.literal): \(value)")
            }
            return "{" + members.joined(separator: ", ") + "}"
        }
        for round in 0..<2_000 {
            var repeated = false
            let text = "[" + (0..<1 + round % 3).map { _ in object(depth: 0, repeated: &repeated) }.joined(separator: ", ") + "]"
            let bytes = Array(text.utf8)
            #expect(((try? JSONTape(bytes, what: "a test")) == nil) == repeated, "\(text)")
            var position = 0, scratch = JSONTape.Scratch()
            #expect(((try? JSONTape(value: bytes, at: &position, depth: 0, what: "a test", reusing: &scratch)) == nil) == repeated, "\(text)")
        }
    }

    @Test func test_readers_refuseDocumentsOfAnotherShape() throws {
        #expect(throws: VaultError.self) { try EnpassJSONReader.read(Array(#"{"folders": []}"#.utf8), now: 0) }
        #expect(throws: VaultError.self) { try EnpassJSONReader.read(Array(#"{"items": [1]}"#.utf8), now: 0) }
        do { _ = try OnePUXReader.read(Array("PK not a zip".utf8), now: 0); Issue.record("accepted") } catch {
            #expect(error.description.contains("not a ZIP archive"), "\(error)")
        }
        let text = Array("{}".utf8)
        let noData = ForeignArchiveTests.zip([("export.attributes", 0, text, text.count, CRC32.checksum(text))])
        do { _ = try OnePUXReader.read(noData, now: 0); Issue.record("accepted") } catch {
            #expect(error.description.contains("holds no export.data"), "\(error)")
        }
        let notAccounts = ForeignArchiveTests.zip([("export.data", 0, text, text.count, CRC32.checksum(text))])
        #expect(throws: VaultError.self) { try OnePUXReader.read(notAccounts, now: 0) }
    }

    // MARK: - Edge cases

    @Test func test_enpassJSON_neverCrashesOnDamageAndTakesOddValues() throws {
        let odd = #"{"items": [{"title": 5, "fields": [{"type": "password", "value": 12}, {"value": "v"}], "folders": ["missing"], "createdAt": 1.5e3}]}"#
        let read = try EnpassJSONReader.read(Array(odd.utf8), now: 0)
        #expect(read.items[0].title == "" && Self.text(read.items[0].value) == "12" && read.items[0].folders.isEmpty)
        #expect(read.items[0].fields.map(\.label) == ["text"] && read.items[0].created == 1_500_000)
        let mail = #"{"items": [{"title": "m", "fields": [{"type": "email", "label": "E-mail", "value": "a@b"}, {"type": "text", "label": "x", "value": "a@b"}]}]}"#
        let login = try EnpassJSONReader.read(Array(mail.utf8), now: 0).items[0]
        #expect(login.username == "a@b" && login.fields.map(\.label) == ["x"], "an e-mail field is the login when no username field is")
        var generator = SplitMix(seed: 4403)
        let original = try KeePassXMLReaderTests.fixture("enpass.json")
        for _ in 0..<300 {
            var bytes = Array(original.prefix(Int(generator.nextByte()) * original.count / 255 + 1))
            bytes[Int(generator.nextByte()) % bytes.count] = [0x22, 0x7B, 0x5D, 0x00, 0xFF, 0x5C][Int(generator.nextByte()) % 6]
            _ = try? EnpassJSONReader.read(bytes, now: 0)
        }
    }
}
