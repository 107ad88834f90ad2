import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The KeePass XML reader handing each entry to the builder as read (`KeePassXMLReader.read(…each:)`,
/// `KDBXReader.entries`) against every item read first and built (`build(asEntries:)`, the plain
/// reference): wherever the stream gives entries, the same entries, renamings, warnings, history
/// and vault; where it declines, the import's own entry point gives the reference.
@Suite struct KeePassStreamTests {
    private func described(_ build: () throws(VaultError) -> ImportedEntries?) -> String {
        ForeignBuildText.described(build)
    }

    // MARK: - Random KeePass XML

    private static let titles = ["Mail", "Mail", "Bank", "a/b", "a-b", "café", "cafe\u{301}", "", " spaced ", "t (2)", "..", "https://x.example/a/"]
    private static let groups = ["Work", "Home", "Recycle Bin", "a/b", "Ünï", ""]
    private static let keys = ["PIN", "username", "Recovery codes", "KP2A_URL", "KP2A_URL_1", "otp", "TOTP Seed", "TOTP Settings", "a label!", "url"]
    private static let values = ["", "x", "1234", "https://y.example", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP", "30;6",
                                 "line\nbreak", "&amp;&lt;"]
    private static let times = ["2023-11-14T22:13:20Z", "2020-01-01T00:00:00Z", "2024-02-29T12:00:00Z"]

    /// A random KeePass XML document: Meta (with a recycle bin, a pool of two binaries, or
    /// neither; sometimes after Root or absent), then groups nested up to three deep, each with
    /// entries whose titles repeat, are cleaned alike or are unique, with custom strings, URLs,
    /// TOTP attributes, tags, times, attachments by reference (some to nothing) or inline, and history.
    private static func randomXML(_ byte: () -> UInt8) -> [UInt8] {
        func pick(_ list: [String]) -> String { list[Int(byte()) % list.count] }
        func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
        var serial = 0
        func string(_ key: String, _ value: String) -> String { "<String><Key>\(key)</Key><Value>\(value)</Value></String>" }
        func attachments() -> String {
            var xml = ""
            for index in 0..<Int(byte() % 4 == 0 ? byte() % 3 : 0) {
                let value = byte() % 3 == 0 ? "<Value>\(b64("inline \(byte())"))</Value>" : "<Value Ref=\"\(byte() % 3)\"/>"
                xml += "<Binary><Key>file\(index).txt</Key>\(value)</Binary>"
            }
            return xml
        }
        func entry(history: Bool) -> String {
            serial += 1
            let title = byte() % 2 == 0 ? pick(titles) : "entry \(serial)"
            var xml = "<Entry><UUID>\(b64("uuid\(serial)"))</UUID>"
            xml += string("Title", title) + string("Password", "pw\(byte() % 5)")
            if byte() % 2 == 0 { xml += string("UserName", byte() % 3 == 0 ? "" : "user\(byte() % 4)") }
            if byte() % 2 == 0 { xml += string("URL", pick(values)) }
            if byte() % 3 == 0 { xml += string("Notes", pick(values)) }
            for _ in 0..<Int(byte() % 3) { xml += string(pick(keys), pick(values)) }
            if byte() % 4 == 0 { xml += "<Tags>\(pick(["a;b", " t ", ""]))</Tags>" }
            if byte() % 4 == 0 { xml += "<IconID>3</IconID>" }
            if byte() % 2 == 0 {
                // Now and then a time that is none: the stream fails as the reference does.
                xml += "<Times><CreationTime>\(byte() % 64 == 0 ? "bm9uc2Vuc2U=" : pick(times))</CreationTime><LastModificationTime>\(pick(times))</LastModificationTime>"
                    + (byte() % 3 == 0 ? "<ExpiryTime>\(pick(times))</ExpiryTime><Expires>True</Expires>" : "") + "</Times>"
            }
            xml += attachments()
            if history, byte() % 3 == 0 {
                xml += "<History>"
                for _ in 0..<Int(1 + byte() % 2) { xml += entry(history: false) }
                xml += "</History>"
            }
            return xml + "</Entry>"
        }
        func group(depth: Int) -> String {
            serial += 1
            var xml = "<Group><UUID>\(b64("group\(serial)"))</UUID><Name>\(depth == 0 ? "Root" : pick(groups))</Name>"
            if byte() % 5 == 0 { xml += "<Notes>n</Notes>" }
            for _ in 0..<Int(byte() % 4) { xml += entry(history: true) }
            if depth < 3 { for _ in 0..<Int(byte() % (depth == 0 ? 4 : 2)) { xml += group(depth: depth + 1) } }
            return xml + "</Group>"
        }
        var meta = "<Meta><Generator>random</Generator>"
        if byte() % 2 == 0 { meta += "<Binaries><Binary ID=\"0\">\(b64("zero"))</Binary><Binary ID=\"1\">\(b64(""))</Binary></Binaries>" }
        if byte() % 4 == 0 { meta += "<RecycleBinEnabled>False</RecycleBinEnabled>" }
        if byte() % 5 == 0 { meta += "<DatabaseName>db</DatabaseName>" }
        meta += "</Meta>"
        let root = "<Root>" + group(depth: 0) + (byte() % 4 == 0 ? "<DeletedObjects><DeletedObject/></DeletedObjects>" : "") + "</Root>"
        let order = byte() % 8
        let body = order == 0 ? root + meta : order == 1 ? root : meta + root
        return Array("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<KeePassFile>\(body)</KeePassFile>\n".utf8)
    }

    @Test func test_streamedEntries_keepassXMLMatchesTheReference() {
        var generator = SplitMix(seed: 45_017)
        func byte() -> UInt8 { generator.nextByte() }
        var streamedCount = 0, declined = 0, failed = 0
        for round in 0..<600 {
            let bytes = Self.randomXML(byte)
            let options = ForeignBuildOptions(keepsHistory: round % 2 == 0, prefix: round % 5 == 0 ? ["in"] : [])
            let streamed = described { () throws(VaultError) in try Interchange.streamedEntries(bytes, format: .keepassXML, now: 7, options: options) }
            let reference = described { () throws(VaultError) in
                guard var foreign = try Interchange.foreignItems(bytes, format: .keepassXML, now: 7) else { return nil }
                defer { foreign.wipe() }
                return try ForeignBuilder.build(asEntries: foreign, now: 7, options: options)
            }
            if streamed != "nil" {
                if streamed.hasPrefix("error") { failed += 1 } else { streamedCount += 1 }
                #expect(streamed == reference, "\(String(decoding: bytes, as: UTF8.self))")
            } else {
                declined += 1
            }
            // Through the import's own entry point: the reference whenever the stream declines.
            let read = described { () throws(VaultError) in try Interchange.read(bytes, format: .keepassXML, now: 7, options: options) }
            #expect(read == reference, "\(String(decoding: bytes, as: UTF8.self))")
        }
        // Most build as read (titles rarely repeat); some decline (a repeated title, a pool not read
        // yet); a few fail as the reference fails (a time that is not one).
        #expect(streamedCount > 250, "\(streamedCount) streamed")
        #expect(declined > 25, "\(declined) declined")
        #expect(failed > 5 && failed < 150, "\(failed) failed")
    }

    @Test func test_streamedEntries_keepassXMLFixturesMatchTheReference() throws {
        for name in ["keepassxc.xml", "keepass2.xml"] {
            let bytes = try KeePassXMLReaderTests.fixture(name)
            for options in [ForeignBuildOptions(), ForeignBuildOptions(keepsHistory: true, prefix: ["kp"])] {
                let read = described { () throws(VaultError) in try Interchange.read(bytes, format: .keepassXML, now: 7, options: options) }
                let reference = described { () throws(VaultError) in
                    var foreign = try KeePassXMLReader.read(bytes, now: 7)
                    defer { foreign.wipe() }
                    return try ForeignBuilder.build(asEntries: foreign, now: 7, options: options)
                }
                #expect(read == reference, "\(name)")
                #expect(!read.hasPrefix("error"), "\(name): \(read)")
            }
        }
    }

    // MARK: - KDBX

    @Test(arguments: ["kdbx4-argon2id-chacha20.kdbx", "kdbx4-argon2d-aes.kdbx", "kdbx4-aeskdf-chacha20.kdbx", "kdbx31-aeskdf-salsa20.kdbx"])
    func test_kdbxEntries_matchItemsReadThenBuilt(_ name: String) throws {
        let bytes = try KDBXTests.fixture(name)
        for options in [ForeignBuildOptions(), ForeignBuildOptions(keepsHistory: true, prefix: ["kp"])] {
            var taken = bytes
            let streamed = try KDBXReader.entries(taking: &taken, file: name, credentials: KDBXTests.password, limits: KDBXTests.limits,
                                                  now: 7, options: options)
            #expect(taken.isEmpty, "the file's bytes are taken")
            var foreign = try KDBXReader.read(bytes, file: name, credentials: KDBXTests.password, limits: KDBXTests.limits, now: 7)
            defer { foreign.wipe() }
            let reference = described { () throws(VaultError) in try ForeignBuilder.build(asEntries: foreign, now: 7, options: options) }
            #expect(described { streamed } == reference, "\(name)")
        }
    }
}
