import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The streamed readers of issue 44's speed rule (`JSONStream`, `ZipEntryReader`): enpass-json
/// and 1pux read one item's tape at a time, 1pux's export.data as it is inflated, Bitwarden JSON
/// without keeping every item twice. Each is tied to the whole-document reader, its plain
/// reference: the same items, and any document it declines read whole with the whole reader's
/// message.
@Suite struct ForeignJSONStreamTests {
    /// Everything an item holds, as one comparable text.
    static func described(_ read: ForeignImport) -> [String] {
        func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
        let items = read.items.map { item in
            [item.folders.joined(separator: "/"), item.title, text(item.value), item.username ?? "-", item.urls.joined(separator: " "),
             item.notes ?? "-", item.totp ?? "-", item.fields.map { "\($0.label)=\(text($0.value))=\($0.protected)" }.joined(separator: ";"),
             item.attachments.map { "\($0.name)=\(text($0.bytes))" }.joined(separator: ";"), "\(item.created ?? -1)", "\(item.modified ?? -1)",
             item.history.map { "\(text($0.value))@\($0.modified ?? -1)" }.joined(separator: ";"),
             item.extras.map { "\($0.label)=\($0.value)" }.joined(separator: ";")].joined(separator: "|")
        }
        return items + read.notKept.sorted { $0.key < $1.key }.map { "lost \($0.key)=\($0.value)" }
    }

    /// A 1pux archive whose export.data is `json`, stored (not compressed).
    static func onePUX(_ json: String, crc: UInt32? = nil) -> [UInt8] {
        let data = Array(json.utf8)
        return ForeignArchiveTests.zip([("export.data", 0, data, data.count, crc ?? CRC32.checksum(data))])
    }

    static let onePUXDocument = #"""
        {"accounts": [{"vaults": [{"items": [
          {"uuid": "1", "overview": {"title": "Mail", "url": "https://mail.example"}, "createdAt": 1600000000,
           "details": {"loginFields": [{"designation": "username", "value": "ada"}, {"designation": "password", "value": "p\u00e9\\1"}]}},
          {"item": {"overview": {"title": "Old"}, "details": {"password": "wrapped"}}},
          {"state": "trashed", "overview": {"title": "Gone"}}
        ], "attrs": {"name": "Work"}}, {"attrs": {"name": "Home"}, "items": [{"overview": {"title": "Bank"}, "details": {"notesPlain": "n"}}]}],
          "attrs": {"accountName": "ada@example"}}]}
        """#

    // MARK: - Success

    @Test func test_onePUX_streamedReadsWhatTheWholeDocumentReads() throws {
        for bytes in [try KeePassXMLReaderTests.fixture("1password.1pux"), Self.onePUX(Self.onePUXDocument),
                      Self.onePUX("\u{FEFF}" + Self.onePUXDocument + "\n")] {
            let whole = Self.described(try OnePUXReader.read(bytes, chunk: nil))
            // Windows of a few bytes cut every token somewhere: the walk reads on where it was.
            for chunk in [1, 2, 7, 64, 1 << 18] {
                #expect(Self.described(try OnePUXReader.read(bytes, chunk: chunk)) == whole, "chunk \(chunk)")
            }
        }
        let read = try OnePUXReader.read(Self.onePUX(Self.onePUXDocument), chunk: 3)
        #expect(read.items.map(\.title) == ["Mail", "Old", "Bank"] && read.items.map(\.folders) == [["Work"], ["Work"], ["Home"]],
                "the vaults' names, given after their items, are folders once two vaults are seen")
        #expect(String(decoding: read.items[0].value, as: UTF8.self) == "pé\\1")
    }

    @Test func test_enpassJSON_streamedReadsWhatTheWholeDocumentReads() throws {
        let foldersLast = #"""
            {"items": [{"title": "A", "folders": ["f2"], "fields": [{"type": "password", "value": "x", "label": "P"}]},
                       {"title": "B", "trashed": 1}, {"title": "C", "favorite": 1, "createdAt": -5}],
             "folders": [{"uuid": "f1", "title": "Top"}, {"uuid": "f2", "title": "Inner", "parent_uuid": "f1"}]}
            """#
        for bytes in [try KeePassXMLReaderTests.fixture("enpass.json"), Array(foldersLast.utf8), Array(("\u{FEFF} " + foldersLast + " ").utf8)] {
            #expect(Self.described(try EnpassJSONReader.streamed(bytes)) == Self.described(try EnpassJSONReader.whole(bytes)))
        }
        let read = try EnpassJSONReader.streamed(Array(foldersLast.utf8))
        #expect(read.items.map(\.folders) == [["Top", "Inner"], []] && read.items[1].created == -5_000)
    }

    @Test func test_bitwardenJSON_itemsMadeAsReadKeepTheirFolders() throws {
        let json = #"""
            {"items": [{"type": 1, "name": "Mail", "folderId": "f", "login": {"username": "ada", "password": "pw"}},
                       {"type": 2, "name": "Note", "notes": "text"}],
             "folders": [{"id": "f", "name": "Work/Mail"}], "encrypted": false}
            """#
        let read = try BitwardenJSON.read(Array(json.utf8), now: 0)
        #expect(read.items.map(\.folders) == [["Work", "Mail"], []] && read.items.map(\.title) == ["Mail", "Note"])
        // A secure note's text is its notes, not a value (the rule the Bitwarden export reads back by).
        #expect(read.items[0].username == "ada" && read.items[1].value.isEmpty && read.items[1].notes == "text")
    }

    @Test func test_readTaking_freesAnExportOnceReadIntoItems() throws {
        var bytes = Array(#"{"items": [{"title": "A", "fields": [{"type": "password", "value": "x"}]}]}"#.utf8)
        let imported = try Interchange.read(taking: &bytes, format: .enpassJSON, options: ForeignBuildOptions())
        #expect(bytes.isEmpty && imported.entries.map(\.name) == ["A"], "the input is wiped and let go before the entries are built")
        var own = Array(#"{"vaultfile_export": 1, "entries": [{"name": "k", "value": "v"}]}"#.utf8)
        let kept = own
        #expect(try Interchange.read(taking: &own, format: .json, options: ForeignBuildOptions()).entries.count == 1 && own == kept,
                "vaultfile's own formats read as they always were")
    }

    // MARK: - Failure

    @Test func test_readTaking_keepsTheInputWhenTheReaderRefusesIt() {
        var bytes = Array(#"{"items": [1]}"#.utf8)
        let before = bytes
        #expect(throws: VaultError.self) { try Interchange.read(taking: &bytes, format: .enpassJSON, options: ForeignBuildOptions()) }
        #expect(bytes == before, "the caller still has it to say what the file looks like")
    }

    @Test func test_streams_declineWhatTheWholeReaderRefuses_withItsMessage() throws {
        let enpass: [(String, String)] = [
            (#"{"items": [], "items": []}"#, "appears twice"),
            (#"{"items": [{"title": "a", "title": "b"}]}"#, "appears twice"),
            (#"{"items": [{"title": "a"}]} x"#, "more after the end"),
            (#"{"items": [{"title": "a"}"#, "line 1"),
            (#"{"items": [1]}"#, "an item that is not an object"),
            (#"{"folders": []}"#, "no \"items\" array"),
            ("{\"items\": [{\"title\": \"\u{1}\"}]}", "not valid"),
            (String(repeating: "[", count: JSONTape.maxDepth + 1), "nest more than"),
        ]
        for (text, words) in enpass {
            #expect(throws: VaultError.self) { try EnpassJSONReader.streamed(Array(text.utf8)) }
            do { _ = try EnpassJSONReader.read(Array(text.utf8), now: 0); Issue.record("accepted: \(text)") } catch {
                #expect(error.description.contains(words), "\(text): \(error)")
            }
        }
        let deep = #"{"accounts": [{"vaults": [{"items": [{"details": "# + String(repeating: "[", count: JSONTape.maxDepth) + "]}]}]}]}"
        for (bytes, words) in [(Self.onePUX(#"{"accounts": [], "accounts": []}"#), "appears twice"),
                               (Self.onePUX(#"{"accounts": [{"vaults": [{"items": [{"a": 1}, 2]}]}]}"#), "not an object"),
                               (Self.onePUX(deep), "nest more than"),
                               (Self.onePUX(#"{"other": 1}"#), "no \"accounts\""),
                               (Self.onePUX(Self.onePUXDocument, crc: 1), "CRC-32 does not match")] {
            for chunk in [1, 1 << 18] {
                do { _ = try OnePUXReader.read(bytes, chunk: chunk); Issue.record("accepted: \(words)") } catch {
                    #expect(error.description.contains(words), "\(words): \(error)")
                }
            }
        }
    }

    // MARK: - Edge cases

    @Test func test_zipEntryReader_endsAtTheDeclaredSizeWithItsCRC() throws {
        // The fixture's deflated export.data, inflated into windows of odd sizes: the bytes whole.
        let archive = try ZipArchive(try KeePassXMLReaderTests.fixture("1password.1pux"), what: "the 1pux file")
        let entry = try #require(archive.entry(named: "export.data"))
        let whole = try archive.contents(of: entry)
        for room in [1, 5, 4096] {
            let reader = try ZipEntryReader(entry, of: archive)
            var window: [UInt8] = []
            while try reader.read(into: &window, room: room) {}
            #expect(window == whole, "room \(room)")
        }
        // A stored entry whose CRC-32 is wrong is refused at its end.
        let damaged = try ZipArchive(Self.onePUX("{}", crc: 7), what: "the 1pux file")
        let reader = try ZipEntryReader(try #require(damaged.entry(named: "export.data")), of: damaged)
        var window: [UInt8] = []
        #expect(throws: VaultError.self) { while try reader.read(into: &window, room: 1) {} }
    }
}
