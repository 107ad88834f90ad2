import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// enpass-json and 1pux built as they are read (`Interchange.streamedEntries`: each item handed
/// to the builder's sink as its reader reads it) against the build of every item read first
/// (`Interchange.foreignItems` then `ForeignBuilder.build(asEntries:)`, the plain reference), on
/// random documents: wherever the stream gives entries, the same entries, renamings, warnings
/// (the losses said) and vault; and the import's own entry point gives the reference's always
/// (and, for enpass-json, a file read a window at a time gives what the one-buffer read gives).
@Suite struct ForeignJSONSinkTests {
    /// Titles that repeat, clean to one name, are not ASCII or need an escape.
    private static let titles = ["Mail", "Mail", "Bank", "a/b", "a-b", "café", "cafe\u{301}", "", " x ", "..", "q\"uote", "line\nbreak",
                                 "https://news.ycombinator.com"]
    private static let texts = ["", "ada", "bob", "p\\w", "pé", "JBSWY3DPEHPK3PXP", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP",
                                "https://x.example/a/", "tab\there", "\u{1F600}"]

    /// `text` as a JSON string literal.
    private static func quoted(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed])
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }

    /// Each import's two builds, compared; whether the stream gave entries.
    private func compare(_ bytes: [UInt8], format: InterchangeFormat, round: Int) -> Bool {
        let options = ForeignBuildOptions(keepsHistory: round % 2 == 0, prefix: round % 5 == 0 ? ["in"] : [])
        let (streamed, reference, read) = ForeignBuildText.builds(of: bytes, format: format, options: options)
        let shown = format == .onePUX ? "round \(round)" : String(decoding: bytes, as: UTF8.self).debugDescription
        if streamed != "nil" { #expect(streamed == reference, "\(format) \(shown)") }
        #expect(read == reference, "\(format) \(shown)")
        if format == .enpassJSON || format == .onePUX {
            // A window at a time, as the import reads a file: what the one-buffer read gives,
            // for the document and for it cut short or with a key written twice (errors included);
            // a 1pux (its ZIP read a part at a time, `ZipBytes`) also with a byte changed, and
            // from a file whose reads come short.
            var variants = [bytes, Array(bytes.prefix(bytes.count * (round % 10) / 10))]
            if let at = firstRange(of: Array("\"title\": ".utf8), in: bytes) {
                variants.append(Array(bytes[..<at]) + Array("\"ti\\u0074le\": 1, ".utf8) + Array(bytes[at...]))
            }
            if format == .onePUX, !bytes.isEmpty {
                var changed = bytes
                changed[(round * 7_919) % bytes.count] ^= UInt8(1 + round % 255)
                variants.append(changed)
            }
            for variant in variants {
                let whole = ForeignBuildText.described { () throws(VaultError) in try Interchange.read(variant, format: format, now: 7, options: options) }
                let windows = format == .onePUX && round % 2 == 1
                    ? ImportWindows.short(variant, most: 1 + round % 97) : ImportWindows.over(variant, windowLength: 1 + (round * 7) % 61)
                let windowed = ForeignBuildText.described { () throws(VaultError) in try Interchange.read(windows: windows, format: format, now: 7, options: options) }
                #expect(windowed == whole, "\(format) in windows \(shown)")
            }
        }
        return streamed != "nil"
    }

    /// Where `needle` first starts in `bytes`.
    private func firstRange(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (0...bytes.count - needle.count).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    // MARK: - enpass-json

    /// A random Enpass export: folders (before or after the items, or none), items with any of
    /// their parts, some trashed, some naming a folder, some with an attachment.
    private static func randomEnpass(_ random: inout SplitMix) -> [UInt8] {
        func pick(_ list: [String]) -> String { list[random.next(upTo: list.count)] }
        let types = ["username", "email", "password", "url", "totp", "text", "section", ".Android#", "pin"]
        var items: [String] = []
        for _ in 0..<random.next(upTo: 7) {
            var members = ["\"title\": \(quoted(pick(titles)))"]
            if random.next(upTo: 3) == 0 { members.append("\"note\": \(quoted(pick(texts)))") }
            if random.next(upTo: 2) == 0 { members.append("\"createdAt\": \(1_600_000_000 + random.next(upTo: 9))") }
            if random.next(upTo: 2) == 0 { members.append("\"updated_at\": \(1_600_000_000 + random.next(upTo: 9))") }
            for flag in ["trashed", "favorite", "archived"] where random.next(upTo: 6) == 0 { members.append("\"\(flag)\": 1") }
            if random.next(upTo: 3) == 0 { members.append("\"category\": \(quoted(pick(["login", "note", "creditcard", ""])))") }
            if random.next(upTo: 4) == 0 { members.append("\"subtitle\": \(quoted(pick(texts)))") }
            if random.next(upTo: 3) == 0 {
                members.append("\"folders\": [" + (0..<random.next(upTo: 3)).map { _ in quoted(pick(["f1", "f2", "nope"])) }.joined(separator: ", ") + "]")
            }
            var fields: [String] = []
            for _ in 0..<random.next(upTo: 5) {
                var field = ["\"type\": \(quoted(pick(types)))", "\"value\": \(quoted(pick(texts)))"]
                if random.next(upTo: 2) == 0 { field.append("\"label\": \(quoted(pick(["Username", "PIN", "E-mail", "x y", "url"])))") }
                if random.next(upTo: 4) == 0 { field.append("\"sensitive\": 1") }
                if random.next(upTo: 6) == 0 { field.append("\"deleted\": 1") }
                if random.next(upTo: 4) == 0 {
                    field.append("\"history\": [{\"value\": \(quoted(pick(texts))), \"updated_at\": \(1_500_000_000 + random.next(upTo: 9))}]")
                }
                fields.append("{" + field.joined(separator: ", ") + "}")
            }
            members.append("\"fields\": [" + fields.joined(separator: ", ") + "]")
            if random.next(upTo: 6) == 0 {
                members.append("\"attachments\": [{\"name\": \"a.txt\", \"data\": \(quoted(pick(["aGVsbG8=", "!!", ""])))}]")
            }
            members.shuffle(using: &random)
            items.append("{" + members.joined(separator: ", ") + "}")
        }
        let folders = #""folders": [{"uuid": "f1", "title": "Top"}, {"uuid": "f2", "title": "Inner", "parent_uuid": "f1"}]"#
        let itemsMember = "\"items\": [" + items.joined(separator: ",\n") + "]"
        let document: String
        switch random.next(upTo: 3) {
        case 0: document = "{" + folders + ", " + itemsMember + "}"
        case 1: document = "{" + itemsMember + ", " + folders + "}"
        default: document = "{" + itemsMember + "}"
        }
        return Array(document.utf8)
    }

    @Test func test_streamedEntries_enpassMatchesTheReference() {
        var random = SplitMix(seed: 4_444)
        var streamed = 0
        for round in 0..<500 where compare(Self.randomEnpass(&random), format: .enpassJSON, round: round) { streamed += 1 }
        #expect(streamed > 100, "\(streamed) streamed")
    }

    // MARK: - 1pux

    /// A random 1pux: one or two accounts of one to three vaults, names given before or after
    /// the items, items with any of their parts (some trashed, some wrapped, some naming a file
    /// the archive holds, shares with another item, or lacks), stored or deflated.
    private static func randomOnePUX(_ random: inout SplitMix) -> [UInt8] {
        func pick(_ list: [String]) -> String { list[random.next(upTo: list.count)] }
        var accounts: [String] = []
        for account in 0..<(random.next(upTo: 4) == 0 ? 2 : 1) {
            var vaults: [String] = []
            for vault in 0..<(random.next(upTo: 3) == 0 ? 1 + random.next(upTo: 3) : 1) {
                var items: [String] = []
                for _ in 0..<random.next(upTo: 5) {
                    var overview = ["\"title\": \(quoted(pick(titles)))"]
                    if random.next(upTo: 3) == 0 { overview.append("\"url\": \(quoted(pick(texts)))") }
                    if random.next(upTo: 4) == 0 { overview.append("\"tags\": [\"a\", \"b\"]") }
                    var details: [String] = []
                    var logins: [String] = []
                    for _ in 0..<random.next(upTo: 4) {
                        logins.append("{\"designation\": \(quoted(pick(["username", "password", "", "other"]))), \"value\": \(quoted(pick(texts))), "
                                      + "\"name\": \(quoted(pick(["f", "remember"])))}")
                    }
                    details.append("\"loginFields\": [" + logins.joined(separator: ", ") + "]")
                    if random.next(upTo: 4) == 0 { details.append("\"notesPlain\": \(quoted(pick(texts)))") }
                    if random.next(upTo: 4) == 0 {
                        details.append("\"sections\": [{\"fields\": [{\"title\": \"PIN\", \"value\": {\(quoted(pick(["concealed", "string", "totp", "email"]))): "
                                       + "\(quoted(pick(texts)))}}]}]")
                    }
                    if random.next(upTo: 4) == 0 { details.append("\"passwordHistory\": [{\"value\": \"old\", \"time\": 1500000000}]") }
                    if random.next(upTo: 5) == 0 {
                        details.append("\"documentAttributes\": {\"fileName\": \"codes.txt\", \"documentId\": \(quoted(pick(["doc1", "doc2", "gone"])))}")
                    }
                    details.shuffle(using: &random)
                    var members = ["\"overview\": {" + overview.joined(separator: ", ") + "}", "\"details\": {" + details.joined(separator: ", ") + "}"]
                    if random.next(upTo: 6) == 0 { members.append("\"state\": \(quoted(pick(["trashed", "archived"])))") }
                    if random.next(upTo: 3) == 0 { members.append("\"createdAt\": \(1_600_000_000 + random.next(upTo: 9))") }
                    if random.next(upTo: 5) == 0 { members.append("\"favIndex\": 1") }
                    members.shuffle(using: &random)
                    let item = "{" + members.joined(separator: ", ") + "}"
                    items.append(random.next(upTo: 8) == 0 ? "{\"item\": \(item)}" : item)
                }
                let attrs = "\"attrs\": {\"name\": \(quoted(pick(["Private", "Shared", "", "Work/Home"]) + "\(vault)"))}"
                let itemsMember = "\"items\": [" + items.joined(separator: ", ") + "]"
                vaults.append(random.next(upTo: 4) == 0 ? "{" + itemsMember + ", " + attrs + "}" : "{" + attrs + ", " + itemsMember + "}")
            }
            let attrs = "\"attrs\": {\"accountName\": \"acct\(account)\"}"
            let vaultsMember = "\"vaults\": [" + vaults.joined(separator: ", ") + "]"
            accounts.append(random.next(upTo: 4) == 0 ? "{" + vaultsMember + ", " + attrs + "}" : "{" + attrs + ", " + vaultsMember + "}")
        }
        let data = Array(("{\"accounts\": [" + accounts.joined(separator: ", ") + "]}").utf8)
        let file = Array("the codes\n".utf8), other = [UInt8](repeating: 0x41, count: 300)
        var entries: [(name: String, method: Int, data: [UInt8], size: Int, crc: UInt32)] = []
        if random.next(upTo: 2) == 0, let deflated = Self.deflated(data) {
            entries.append(("export.data", 8, deflated, data.count, CRC32.checksum(data)))
        } else {
            entries.append(("export.data", 0, data, data.count, CRC32.checksum(data)))
        }
        entries.append(("files/doc1__codes.txt", 0, file, file.count, CRC32.checksum(file)))
        entries.append(("files/doc2", 0, other, other.count, CRC32.checksum(other)))
        return ForeignArchiveTests.zip(entries)
    }

    /// `data` as a raw deflate stream (zlib's, through the KDBX writer's deflater).
    private static func deflated(_ data: [UInt8]) -> [UInt8]? {
        guard let deflater = try? RawDeflater(capacity: 4096), (try? deflater.add(data, flush: .finish)) != nil else { return nil }
        return deflater.output.bytes
    }

    @Test func test_streamedEntries_onePUXMatchesTheReference() {
        var random = SplitMix(seed: 1_717)
        var streamed = 0, declined = 0
        for round in 0..<400 {
            if compare(Self.randomOnePUX(&random), format: .onePUX, round: round) { streamed += 1 } else { declined += 1 }
        }
        #expect(streamed > 100, "\(streamed) streamed")
        #expect(declined > 20, "\(declined) declined")
    }

    @Test func test_streamedEntries_onePUXFixtureMatchesTheReference() throws {
        // The fixture's account holds two vaults, the second after the first one's items: declined,
        // and read the plain way (`compare` checks the import's entry point gives the reference's).
        let bytes = try KeePassXMLReaderTests.fixture("1password.1pux")
        #expect(!compare(bytes, format: .onePUX, round: 1), "items of a first vault were handed over before the second was seen")
    }

    @Test func test_streamedEntries_onePUXDeclinesASecondVaultAfterItsItems() {
        // Items of the first vault are handed over before the second vault is seen: their folders
        // would change (the vault's name), so the stream declines and the plain read gives them.
        let json = #"{"accounts": [{"vaults": [{"attrs": {"name": "A"}, "items": [{"overview": {"title": "x"}}]}, "#
            + #"{"attrs": {"name": "B"}, "items": [{"overview": {"title": "y"}}]}]}]}"#
        let data = Array(json.utf8)
        let bytes = ForeignArchiveTests.zip([("export.data", 0, data, data.count, CRC32.checksum(data))])
        #expect(!compare(bytes, format: .onePUX, round: 1))
        let read = try? Interchange.read(bytes, format: .onePUX, now: 7, options: ForeignBuildOptions())
        #expect(read?.entries.map(\.name) == ["A/x", "B/y"])
    }

    // MARK: - Memory

    /// A 1pux of two items, the first one's password `secret` and its attached file `file`,
    /// export.data and the file stored. The archive is made around placeholders, and each secret
    /// written into it in place (made by concatenation, the blocks the pieces left would hold copies).
    private static func secretOnePUX(_ secret: ScannedSecret, _ file: ScannedSecret) throws -> [UInt8] {
        let head = #"{"accounts": [{"vaults": [{"items": [{"overview": {"title": "Mail"}, "details": {"documentAttributes": {"documentId": "d", "fileName": "f"}, "loginFields": [{"designation": "password", "value": ""#
        let tail = #""}]}}, {"overview": {"title": "Other"}, "details": {"password": "x"}}]}]}]}"#
        var data: [UInt8] = [], contents: [UInt8] = []
        data.reserveCapacity(head.utf8.count + secret.count + tail.utf8.count)
        data += Array(head.utf8)
        secret.append(to: &data)
        data += Array(tail.utf8)
        contents.reserveCapacity(file.count)
        file.append(to: &contents)
        let placeholder = [UInt8](repeating: UInt8(ascii: "Q"), count: secret.count)
        let filePlaceholder = [UInt8](repeating: UInt8(ascii: "Z"), count: file.count)
        var input = ForeignArchiveTests.zip([("export.data", 0, Array(head.utf8) + placeholder + Array(tail.utf8), data.count, CRC32.checksum(data)),
                                             ("files/d", 0, filePlaceholder, contents.count, CRC32.checksum(contents))])
        for (source, from, mark) in [(data, head.utf8.count, placeholder), (contents, 0, filePlaceholder)] {
            let at = try #require(input.firstRange(of: mark)).lowerBound
            input.withUnsafeMutableBufferPointer { target in
                source.withUnsafeBufferPointer { _ = memcpy(target.baseAddress! + at, $0.baseAddress! + from, mark.count) }
            }
        }
        wipe(&data)
        wipe(&contents)
        return input
    }

    /// A 1pux built as read (export.data stored, a file attached): each item's password and file
    /// are wiped once its record is written, the window as it moves and at its end, so once the
    /// records are gone and the input wiped, this process's memory holds no copy.
    @Test func test_streamedEntries_onePUXLeavesNoCopyOfASecretInFreedMemory() throws {
        let secret = ScannedSecret(), file = ScannedSecret()
        var input = try Self.secretOnePUX(secret, file)
        #expect(secret.copiesInMemory() >= 1 && file.copiesInMemory() >= 1, "the scan finds each while the input holds it")
        do {
            let imported = try Interchange.streamedEntries(input, format: .onePUX, now: 1, options: ForeignBuildOptions())
            #expect(imported?.records?.count == 2, "built as read, as records")
        }
        wipe(&input)
        #expect(secret.copiesInMemory() == 0, "a copy of the password is left in memory")
        #expect(file.copiesInMemory() == 0, "a copy of the attached file is left in memory")
    }

    /// The same 1pux read from a file a part at a time (`ZipBytes`: its directory, its headers,
    /// export.data and the attached file each read into a buffer): every buffer is wiped before it
    /// is freed, so once the records are gone and the file's memory wiped, no copy is left.
    @Test func test_readWindows_onePUXLeavesNoCopyOfASecretInFreedMemory() throws {
        let secret = ScannedSecret(), file = ScannedSecret()
        var input = try Self.secretOnePUX(secret, file)
        let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: input.count, alignment: 1)
        input.withUnsafeBytes { stored.copyMemory(from: $0) }
        wipe(&input)
        do {
            let windows = ImportWindows(byteCount: stored.count, windowLength: 1 << 16) { offset, buffer in
                let count = min(buffer.count, stored.count - offset)
                guard count > 0 else { return 0 }
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: stored[offset..<offset + count]))
                return count
            }
            let imported = try Interchange.read(windows: windows, format: .onePUX, now: 1, options: ForeignBuildOptions())
            #expect(imported.records?.count == 2, "built as read, as records")
        }
        wipe(stored)
        stored.deallocate()
        #expect(secret.copiesInMemory() == 0, "a copy of the password is left in memory")
        #expect(file.copiesInMemory() == 0, "a copy of the attached file is left in memory")
    }
}
