import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// `--format keepass-xml` (KeePassXMLReader, KeePassXMLParser, XMLReader): real keepassxc-cli output,
/// a hand-written KeePass 2 export, and hostile XML.
@Suite struct KeePassXMLReaderTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent("import/\(name)")))
    }

    static func read(_ text: String) throws(VaultError) -> ForeignImport {
        try KeePassXMLReader.read(Array(text.utf8), now: 0)
    }

    /// A KeePass file around `entries` (the inside of the root group).
    static func document(_ entries: String, meta: String = "") -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta>\(meta)</Meta><Root><Group><Name>Root</Name>\(entries)</Group></Root></KeePassFile>"
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - Success

    @Test func test_read_keepsEverythingOfARealKeePassXCExport() throws {
        let read = try KeePassXMLReader.read(try Self.fixture("keepassxc.xml"), now: 0)
        #expect(read.format == "keepass-xml")
        #expect(read.items.map(\.title) == ["Server note", "Mail", "https://news.ycombinator.com", "Bank", "Bank"], "a group's entries before its groups")
        let mail = read.items[1]
        #expect(mail.folders == ["Email", "Work"], "the root group 'Passwords' is dropped")
        #expect(Self.text(mail.value) == "second \"password\" & more")
        #expect(mail.username == "alice@example.com")
        #expect(mail.urls == ["https://mail.example.com", "https://webmail.example.com"])
        #expect(mail.notes == "line one\nline two")
        #expect(mail.totp == "otpauth://totp/Mail:alice?secret=JBSWY3DPEHPK3PXP&period=30&digits=6&issuer=Mail")
        let pin = try #require(mail.fields.first { $0.label == "Recovery PIN" })
        #expect(Self.text(pin.value) == "8642" && pin.protected)
        #expect(mail.fields.contains { $0.label == "Сервер" && Self.text($0.value) == "imap.example.com" && !$0.protected })
        #expect(!mail.fields.contains { $0.label == "otp" || $0.label == "KP2A_URL_1" })
        #expect(mail.attachments.map(\.name).sorted() == ["key.bin", "notes.txt"])
        #expect(mail.attachments.first { $0.name == "notes.txt" }?.bytes == Array("hello attachment\n".utf8))
        #expect(mail.attachments.first { $0.name == "key.bin" }?.bytes.count == 3000)
        #expect(mail.history.map { Self.text($0.value) }.first == "first <&> \"password\"")
        #expect(mail.history.allSatisfy { $0.username == "alice@example.com" && $0.modified != nil })
        #expect(mail.extras.contains { $0.label == "tags" && $0.value == "mail,work" }, "KeePassXC sorts the tags")
        #expect(mail.created != nil && mail.modified != nil)
        #expect(read.items[2].folders == ["Web"] && read.items[0].folders.isEmpty && read.items[0].value.isEmpty)
        #expect(read.items[3].extras.contains { $0.label == "expires" && $0.value.hasPrefix("2030-01-01T00:00:00") })
        #expect(read.notKept["KeePass's entry UUIDs"] == 5)
        #expect(read.notKept["KeePass's last-access times, usage counts and location-change times"] == 5)
    }

    @Test func test_read_keepsEverythingOfAKeePass2Export() throws {
        let read = try KeePassXMLReader.read(try Self.fixture("keepass2.xml"), now: 0)
        #expect(read.items.map(\.title) == ["Router", "Old phone", "Steam"])
        let router = read.items[0]
        #expect(router.folders == ["Home & Garden"], "the root group 'Database' is dropped")
        #expect(Self.text(router.value) == "réseau-42" && router.notes == "Firmware <2.1> & up")
        #expect(router.totp == "otpauth://totp/Router?secret=JBSWY3DPEHPK3PXP&period=30&digits=8&algorithm=SHA256")
        #expect(router.fields.map(\.label) == ["WPA key"] && router.fields[0].protected)
        #expect(router.attachments.map { "\($0.name)=\(Self.text($0.bytes))" } == ["pooled.txt=pooled attachment", "inline.txt=inline attachment bytes"])
        #expect(router.created == 1_700_000_000_000, "a KDBX 4 base64 time")
        #expect(router.modified == 1_709_528_767_000)
        #expect(router.history.count == 1 && Self.text(router.history[0].value) == "old-router" && router.history[0].username == "root")
        #expect(router.history[0].urls == ["http://192.168.0.1"] && router.history[0].title == nil, "a version is the whole entry it was")
        #expect(router.extras.contains { $0.label == "tags" && $0.value == "router;home" })
        // 48 65 6c 6c 6f 21 de ad be ef in Base32, a period of 60 s.
        #expect(read.items[1].totp == "otpauth://totp/Old%20phone?secret=JBSWY3DPEHPK3PXP&period=60&digits=6&algorithm=SHA1".replacingOccurrences(
            of: "JBSWY3DPEHPK3PXP", with: KeePassTOTP.base32([0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x21, 0xDE, 0xAD, 0xBE, 0xEF])))
        #expect(read.items[1].fields.isEmpty)
        #expect(read.items[2].totp == "steam://STEAMSECRETBASE32" && read.items[2].fields.isEmpty)
        for (loss, count) in [("KeePass's group notes", 1), ("KeePass's custom icons", 1), ("KeePass's deleted-object records", 1),
                              ("KeePass's auto-type settings", 1), ("KeePass's entry icons", 1),
                              ("KeePass's database name and description", 1)] {
            #expect(read.notKept[loss] == count, "\(loss): \(read.notKept)")
        }
        #expect(!read.notKept.keys.contains { $0.contains("history") }, "\(read.notKept)")
    }

    @Test func test_read_leavesTheRecycleBinOutAndCountsIt() throws {
        func entry(_ title: String) -> String { "<Entry><String><Key>Title</Key><Value>\(title)</Value></String></Entry>" }
        let groups = """
            \(entry("live"))<Group><UUID>BINBINBINBINBINBINBINA==</UUID><Name>Trash</Name>\(entry("gone"))
            <Group><UUID>SUBSUBSUBSUBSUBSUBSUBA==</UUID><Name>Old</Name>\(entry("gone too"))</Group></Group>
            <Group><UUID>OTHEROTHEROTHEROTHERAA==</UUID><Name>Recycle Bin</Name>\(entry("named so"))</Group>
            <Group><Name>x</Name><Group><Name>Recycle Bin</Name>\(entry("deeper"))</Group></Group>
            """
        // Meta/RecycleBinUUID names the bin: its entries and its groups' entries stay out, whatever its name.
        let byUUID = try Self.read(Self.document(groups, meta: "<RecycleBinEnabled>True</RecycleBinEnabled><RecycleBinUUID>BINBINBINBINBINBINBINA==</RecycleBinUUID>"))
        #expect(byUUID.items.map(\.title) == ["live", "named so", "deeper"])
        #expect(byUUID.notKept["entries in KeePass's recycle bin"] == 2)
        // No bin UUID (KeePass's zero UUID) but the bin enabled: the "Recycle Bin" group under the root.
        let byName = try Self.read(Self.document(groups, meta: "<RecycleBinUUID>AAAAAAAAAAAAAAAAAAAAAA==</RecycleBinUUID>"))
        #expect(byName.items.map(\.title) == ["live", "gone", "gone too", "deeper"])
        #expect(byName.notKept["entries in KeePass's recycle bin"] == 1)
        // The bin turned off: every entry is the user's.
        let off = try Self.read(Self.document(groups, meta: "<RecycleBinEnabled>False</RecycleBinEnabled><RecycleBinUUID>BINBINBINBINBINBINBINA==</RecycleBinUUID>"))
        #expect(off.items.count == 5 && off.notKept["entries in KeePass's recycle bin"] == nil)
    }

    @Test func test_base32_encodesRFC4648Vectors() {
        for (plain, encoded) in [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")] {
            #expect(KeePassTOTP.base32(Array(plain.utf8)) == encoded)
        }
    }

    // MARK: - Failure

    @Test func test_read_refusesADocumentTypeDeclarationAndUnknownEntities() {
        let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;\">]><KeePassFile>&lol2;</KeePassFile>"
        #expect(throws: VaultError.self) { try Self.read(laughs) }
        do { _ = try Self.read(laughs) } catch { #expect(error.description.contains("document type declaration"), "\(error)") }
        let external = "<?xml version=\"1.0\"?><!DOCTYPE x SYSTEM \"file:///etc/passwd\"><KeePassFile/>"
        #expect(throws: VaultError.self) { try Self.read(external) }
        do { _ = try Self.read(Self.document("<Entry><String><Key>Title</Key><Value>&xxe;</Value></String></Entry>")) } catch {
            #expect(error.description.contains("a reference is not one of XML's own") && !error.description.contains("xxe"), "\(error)")
        }
    }

    @Test func test_read_refusesXMLThatIsNotWellFormed() {
        let cases: [(String, String)] = [
            (Self.document("<Entry><String><Key>Title</Key><Value>x</Key></String></Entry>"), "does not close"),
            (String(Self.document("<Entry/>").dropLast(14)), "ends inside"),
            ("<KeePassFile/><KeePassFile/>", "second root"),
            ("<Other/>", "not a KeePass XML file"),
            ("", "no root element"),
            ("<KeePassFile a=\"1\" a=\"2\"/>", "appears twice"),
            ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><KeePassFile/>", "encoding"),
            ("<KeePassFile>\u{0}</KeePassFile>", "control character"),
            (Self.document("<Entry><String><Value>x</Value></String></Entry>"), "without a Key"),
            (Self.document("<Entry><String><Key>Password</Key><Value Protected=\"True\">AAAA</Value></String></Entry>"), "inner stream"),
            (Self.document("<Entry><Times><CreationTime>yesterday</CreationTime></Times></Entry>"), "the time 'yesterday'"),
            (Self.document("", meta: "<Binaries><Binary ID=\"0\" Compressed=\"True\">AAAA</Binary></Binaries>"), "not gzip"),
            (Self.document("<Group><Entry/><Name>late</Name></Group>"), "Name after"),
            (Self.document("<Entry><History><Entry><History/></Entry></History></Entry>"), "history inside a history"),
        ]
        for (text, words) in cases {
            do {
                _ = try Self.read(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(words), "\(text): \(error)")
            }
        }
        #expect(throws: VaultError.self) { try KeePassXMLReader.read([0x3C, 0x4B, 0xFF, 0xFE, 0x3E], now: 0) }
        #expect(throws: VaultError.self) { try KeePassXMLReader.read([0xFF, 0xFE, 0x3C, 0x00], now: 0) }
    }

    /// An attachment by reference to a binary the pool does not hold (KeePassXC's XML export may
    /// leave the pool out): before issue 44's leftovers the whole file was refused; now the entry
    /// is read without it, and the loss counted by entry.
    @Test func test_read_attachmentWithoutPooledDataIsCountedNotRefused() throws {
        let read = try KeePassXMLReader.read(Array(Self.document("<Entry><String><Key>Title</Key><Value>m</Value></String>"
            + "<Binary><Key>a</Key><Value Ref=\"7\"/></Binary><Binary><Key>b</Key><Value Ref=\"8\"/></Binary></Entry>").utf8), now: 0)
        #expect(read.items.map(\.title) == ["m"] && read.items[0].attachments.isEmpty)
        #expect(read.warnings == [.attachmentDataMissing(items: ["m"], count: 1)], "\(read.warnings)")
    }

    /// The first three entries whose attachments have no data are named, then "and N more".
    @Test func test_read_missingAttachmentDataNamesTheFirstEntries() throws {
        let entries = (1...5).map { "<Entry><String><Key>Title</Key><Value>e\($0)</Value></String><Binary><Key>a</Key><Value Ref=\"9\"/></Binary></Entry>" }
        let read = try KeePassXMLReader.read(Array(Self.document("<Group><Name>G</Name>" + entries.joined() + "</Group>").utf8), now: 0)
        #expect(read.warnings == [.attachmentDataMissing(items: ["G/e1", "G/e2", "G/e3"], count: 5)], "\(read.warnings)")
        let said = ImportWarning.attachmentDataMissing(items: ["G/e1", "G/e2", "G/e3"], count: 5).description
        #expect(said.hasPrefix("not kept: KeePass attachments whose data the XML does not hold, in 5 items ('G/e1', 'G/e2', 'G/e3' and 2 more); "), "\(said)")
    }

    /// Entry elements vaultfile does not read are named in the warning, each with its count.
    @Test func test_read_otherEntryElementsAreNamed() throws {
        let read = try KeePassXMLReader.read(Array(Self.document(
            "<Entry><String><Key>Title</Key><Value>a</Value></String><PreviousParentGroup>AAAA</PreviousParentGroup><QualityCheck>False</QualityCheck></Entry>"
                + "<Entry><String><Key>Title</Key><Value>b</Value></String><PreviousParentGroup>AAAA</PreviousParentGroup></Entry>").utf8), now: 0)
        #expect(read.notKept["KeePass's entry element <PreviousParentGroup>"] == 2, "\(read.notKept)")
        #expect(read.notKept["KeePass's entry element <QualityCheck>"] == 1, "\(read.notKept)")
        #expect(read.notKept["other KeePass entry elements"] == nil, "\(read.notKept)")
    }

    @Test func test_read_refusesNestingBeyondTheLimit() {
        let deep = String(repeating: "<Group>", count: XMLReader.maxDepth + 1)
        do { _ = try Self.read(Self.document(deep)) ; Issue.record("accepted") } catch {
            #expect(error.description.contains("nest more than \(XMLReader.maxDepth)"), "\(error)")
        }
    }

    // MARK: - Edge cases

    @Test func test_read_takesGroupsAndEntriesAtEveryLevel() throws {
        let read = try Self.read(Self.document("""
            <Entry><String><Key>Title</Key><Value>top</Value></String></Entry>
            <Group><Name>a/b</Name><Group><Name></Name><Entry><String><Key>Title</Key><Value>deep</Value></String>
            <String><Key>Empty</Key><Value/></String><String><Key>Password</Key><Value>line&#10;two&#13;&#10;</Value></String></Entry></Group></Group>
            """))
        #expect(read.items.map(\.folders) == [[], ["a/b", ""]], "folder names are the builder's to clean")
        #expect(read.items[1].fields.map(\.label) == ["Empty"] && read.items[1].fields[0].value.isEmpty)
        #expect(Self.text(read.items[1].value) == "line\ntwo\r\n", "character references are taken literally")
        #expect(try Self.read("<KeePassFile/>").items.isEmpty)
    }

    @Test func test_read_neverCrashesOnDamagedFixtures() throws {
        var generator = SplitMix(seed: 44)
        for name in ["keepassxc.xml", "keepass2.xml"] {
            let original = try Self.fixture(name)
            for round in 0..<300 {
                var bytes = original
                if round % 3 == 0 { bytes = Array(bytes.prefix(Int(generator.nextByte()) * bytes.count / 256)) }
                for _ in 0..<(1 + Int(generator.nextByte()) % 4) where !bytes.isEmpty {
                    let at = (Int(generator.nextByte()) << 8 | Int(generator.nextByte())) % bytes.count
                    bytes[at] = generator.nextByte()
                }
                _ = try? KeePassXMLReader.read(bytes, now: 0)
            }
        }
    }
}
