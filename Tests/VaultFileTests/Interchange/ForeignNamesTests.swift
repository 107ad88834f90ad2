import SecureMemory
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// Field names and titles of imported entries (cold review of issues 44 and 45): Punycode against
/// RFC 3492's samples, non-ASCII labels made distinct field names, reserved names given way by
/// custom fields only, the title an export gives back, numbered titles kept, KeePass's further
/// URL names kept, and a pass store's lines for vaultfile's own fields read back as those fields.
@Suite struct ForeignNamesTests {
    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    private func build(_ items: [ForeignItem]) throws -> ImportedEntries {
        var source = ForeignImport(format: "test")
        source.items = items
        return try source.entries(now: 1_700_000_000_000, options: ForeignBuildOptions())
    }

    private func entry(_ imported: ImportedEntries, _ name: String) -> Entry? {
        imported.entries.first { $0.name == name }?.entry
    }

    // MARK: - Punycode and field names

    @Test func test_encode_matchesRFC3492AndPython() {
        // RFC 3492 §7.1 (A) Arabic and (L) Japanese, and what Python's "punycode" codec gives.
        let samples = ["\u{0644}\u{064A}\u{0647}\u{0645}\u{0627}\u{0628}\u{062A}\u{0643}\u{0644}\u{0645}\u{0648}\u{0634}\u{0639}\u{0631}\u{0628}\u{064A}\u{061F}": "egbpdaj6bu4bxfgehfvwxn",
                       "3\u{5E74}B\u{7D44}\u{91D1}\u{516B}\u{5148}\u{751F}": "3B-ww4c5e180e575a65lsy2b",
                       "bücher": "bcher-kva", "пример": "e1afmkfd", "Пин": "r0a4cp", "密码": "vctw07d", "PIN-код": "PIN--t4d9a2a"]
        for (label, wanted) in samples { #expect(Punycode.encode(Array(label.unicodeScalars)) == wanted, "\(label)") }
    }

    @Test func test_fieldName_nonASCIILabelsAreDistinctAndASCIIOnesAsBefore() {
        let names = ["Пин", "Код", "密码", "Пин код", "ключ"].map(ImportedNameCleaner.fieldName(fromLabel:))
        #expect(names == ["xn--r0a4cp", "xn--m0a6c3a", "xn--vctw07d", "xn--_-8rb8dolqj", "xn--j1ac0b1a"], "\(names)")
        for name in names { #expect(name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x5F }) }
        #expect(ImportedNameCleaner.fieldName(fromLabel: "Recovery Codes!") == "Recovery_Codes_", "ASCII labels as before")
        #expect(ImportedNameCleaner.fieldName(fromLabel: "attachment.ключ.bin") == "attachment.xn--.bin-k5dg8f9b", "an attachment keeps its mark")
        #expect(ImportedNameCleaner.fieldName(fromLabel: String(repeating: "я", count: 100)).utf8.count == 64)
        // NFC first: two spellings of one label, one name.
        #expect(ImportedNameCleaner.fieldName(fromLabel: "й") == ImportedNameCleaner.fieldName(fromLabel: "и\u{0306}"))
    }

    // MARK: - Reserved names

    @Test func test_entries_customFieldsWithReservedNamesGiveWay() throws {
        var bank = ForeignItem(title: "Bank", value: Array("pw".utf8))
        for label in ["title", "totp", "otp", "tags", "attachment.x", "url2", "labels", "favorite", "ssh-key", "notes"] {
            bank.fields.append(ForeignField(label: label, value: Array("v-\(label)".utf8)))
        }
        bank.extras = [(label: "tags", value: "real")]
        let imported = try build([bank])
        let fields = try #require(entry(imported, "Bank")?.fields)
        #expect(text(fields["tags"]) == "real", "the reader's tags keep their name")
        for (stored, label) in [("title_2", "title"), ("totp_2", "totp"), ("otp_2", "otp"), ("tags_2", "tags"), ("attachment_2.x", "attachment.x"),
                                ("url2_2", "url2"), ("labels_2", "labels"), ("favorite_2", "favorite"), ("ssh-key_2", "ssh-key"), ("notes_2", "notes")] {
            #expect(text(fields[stored]) == "v-\(label)", "\(stored)")
            #expect(text(fields["labels"])?.contains("\(stored)\t\(label)\n") == true, "\(stored)")
        }
        #expect(fields["title"] == nil && fields["totp"] == nil && fields["otp"] == nil && fields["attachment.x"] == nil && fields["url2"] == nil)
        let warning = imported.warnings.first { if case .fieldRenamed(let label, _, _, _, .reserved) = $0 { label == "title" } else { false } }
        #expect(warning?.description.contains("vaultfile reads a field 'title' as the entry's title in an export") == true, "\(imported.warnings)")
    }

    // MARK: - The title an export gives back

    @Test func test_explains_onlyTheTitleTheNameWasMadeOf() {
        #expect(ForeignNaming.explains("A / B", leaf: "A - B"))
        #expect(ForeignNaming.explains("https://news.ycombinator.com", leaf: "news.ycombinator.com"))
        #expect(ForeignNaming.explains("Dup", leaf: "Dup (2)") && ForeignNaming.explains("db01 ", leaf: "db01 (12)"))
        #expect(!ForeignNaming.explains("Dr", leaf: "Bank") && !ForeignNaming.explains("Dup", leaf: "Dup (x)") && !ForeignNaming.explains("Dup", leaf: "Dup ()"))
        #expect(!ForeignNaming.explains("", leaf: "untitled"))
    }

    @Test func test_entries_aNumberedNameKeepsItsTitle() throws {
        var zed = ForeignItem(title: "Dup", value: Array("z".utf8))
        zed.username = "zed"
        var amy = ForeignItem(title: "Dup", value: Array("a".utf8))
        amy.username = "amy"
        let imported = try build([zed, amy])
        #expect(entry(imported, "Dup")?.fields["title"] == nil)
        #expect(text(entry(imported, "Dup (2)")?.fields["title"]) == "Dup")
        let renaming = try #require(imported.renamings.first)
        #expect(renaming.account == "user zed" && renaming.reasons.contains(.titleKept))
        // Both go back out titled Dup, and so does the earlier version of the numbered one.
        var vault = Vault(history: .standard)
        for (name, value) in imported.entries { try vault.put(value, as: name, now: 1) }
        var changed = try #require(vault.entry("Dup (2)"))
        changed.value = Array("z2".utf8)
        try vault.put(changed, as: "Dup (2)", now: 2)
        var xml = try KeePassXMLExport.write(vault, prefix: "", now: 0)
        defer { wipe(&xml.bytes) }
        let text = String(decoding: xml.bytes, as: UTF8.self)
        #expect(text.components(separatedBy: "<Key>Title</Key><Value>Dup</Value>").count == 4 && !text.contains("Dup (2)"), "\(text)")
    }

    @Test func test_keepassXML_aNonASCIIAttachmentGoesBackUnderItsName() throws {
        var item = ForeignItem(title: "Doc", value: Array("pw".utf8))
        item.attachments = [ForeignAttachment(name: "ключ.bin", bytes: [1, 2])]
        let imported = try build([item])
        #expect(entry(imported, "Doc")?.fields["attachment.xn--.bin-k5dg8f9b"] == [1, 2])
        var vault = Vault()
        for (name, value) in imported.entries { try vault.put(value, as: name) }
        var xml = try KeePassXMLExport.write(vault, prefix: "", now: 0)
        defer { wipe(&xml.bytes) }
        let text = String(decoding: xml.bytes, as: UTF8.self)
        #expect(text.contains("<Binary><Key>ключ.bin</Key>") && !text.contains("attachment.ключ"), "the file's name, not the label's mark")
    }

    // MARK: - KeePass's further URLs

    @Test func test_keepassXML_aFurtherURLKeepsItsKeePassName() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Root><Group><Name>Root</Name><Entry>
            <String><Key>Title</Key><Value>Bank</Value></String><String><Key>URL</Key><Value>https://one.example</Value></String>
            <String><Key>KP2A_URL_1</Key><Value>https://two.example</Value></String><String><Key>KP2A_URL_7</Key><Value>https://three.example</Value></String>
            </Entry><Entry><String><Key>Title</Key><Value>Plain</Value></String><String><Key>URL</Key><Value>https://a.example</Value></String>
            <String><Key>KP2A_URL</Key><Value>https://b.example</Value></String><String><Key>KP2A_URL_1</Key><Value>https://c.example</Value></String>
            </Entry></Group></Root></KeePassFile>
            """
        let imported = try KeePassXMLReader.read(Array(xml.utf8), now: 0).entries(now: 0, options: ForeignBuildOptions())
        let bank = try #require(entry(imported, "Bank"))
        #expect(text(bank.fields["url2"]) == "https://two.example" && text(bank.fields["url3"]) == "https://three.example")
        #expect(text(bank.fields["labels"]) == "url2\tKP2A_URL_1\nurl3\tKP2A_URL_7\n")
        #expect(entry(imported, "Plain")?.fields["labels"] == nil, "KeePass's usual names need no label")
        var vault = Vault()
        for (name, value) in imported.entries { try vault.put(value, as: name) }
        var written = try KeePassXMLExport.write(vault, prefix: "", now: 0)
        defer { wipe(&written.bytes) }
        let out = String(decoding: written.bytes, as: UTF8.self)
        #expect(out.contains("<Key>KP2A_URL_1</Key><Value>https://two.example</Value>") && out.contains("<Key>KP2A_URL_7</Key><Value>https://three.example</Value>"), "\(out)")
        #expect(out.contains("<Key>KP2A_URL</Key><Value>https://b.example</Value>") && out.contains("<Key>KP2A_URL_1</Key><Value>https://c.example</Value>"))
        #expect(!out.contains("<Key>labels</Key>"))
    }

    /// cold63 F5: KeePassXC writes an entry's strings sorted by key (`KP2A_URL_10` before
    /// `KP2A_URL_2`); the further URLs are taken by their number, so `url3` is `KP2A_URL_2`.
    @Test func test_keepassXML_furtherURLsAreTakenByTheirNumberNotTheirKeysOrder() throws {
        let keys = ["KP2A_URL_1", "KP2A_URL_10", "KP2A_URL_11", "KP2A_URL_2", "KP2A_URL_3", "KP2A_URL_9", "KP2A_URL"]
        let strings = keys.map { "<String><Key>\($0)</Key><Value>https://\($0).example</Value></String>" }.joined()
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Root><Group><Name>Root</Name><Entry>
            <String><Key>Title</Key><Value>Bank</Value></String><String><Key>URL</Key><Value>https://one.example</Value></String>
            \(strings)</Entry></Group></Root></KeePassFile>
            """
        let imported = try KeePassXMLReader.read(Array(xml.utf8), now: 0).entries(now: 0, options: ForeignBuildOptions())
        let bank = try #require(entry(imported, "Bank"))
        let urls = (2...8).map { text(bank.fields["url\($0)"]) }
        let inOrder = ["KP2A_URL", "KP2A_URL_1", "KP2A_URL_2", "KP2A_URL_3", "KP2A_URL_9", "KP2A_URL_10", "KP2A_URL_11"]
        #expect(urls == inOrder.map { "https://\($0).example" }, "\(urls)")
        // Only the ones the export would not name so are labelled.
        #expect(text(bank.fields["labels"]) == "url6\tKP2A_URL_9\nurl7\tKP2A_URL_10\nurl8\tKP2A_URL_11\n")
    }

    // MARK: - pass

    @Test func test_passStore_titlesTagsAndCustomReservedFieldsReadBackAsTheyWere() throws {
        var site = ForeignItem(title: "https://x.example", value: Array("xp".utf8))
        site.extras = [(label: "tags", value: "work")]
        site.fields = [ForeignField(label: "totp", value: Array("custom totp attr".utf8)), ForeignField(label: "title", value: Array("Dr".utf8))]
        let first = try build([site])
        var vault = Vault()
        for (name, value) in first.entries { try vault.put(value, as: name) }
        var export = PassStoreExport(vault, prefix: "")
        let made = export.contents(of: "x.example")
        let file = try #require(made)
        let lines = String(decoding: file, as: UTF8.self)
        #expect(lines.contains("title: https://x.example\n") && lines.contains("tags: work\n") && lines.contains("totp_2: custom totp attr\n"), "\(lines)")
        #expect(!export.losses.contains { $0.kind == "reads_differently" }, "\(export.losses)")
        var source = ForeignImport(format: "pass")
        source.items = [try PassReader.item(ForeignStoreFile(path: ["x.example"], bytes: file))]
        let again = try source.entries(now: 0, options: ForeignBuildOptions())
        let back = try #require(entry(again, "x.example"))
        for key in ["title", "tags", "title_2", "totp_2"] { #expect(back.fields[key] == vault.entry("x.example")?.fields[key], "\(key)") }
        #expect(back.fields["totp"] == nil)
    }
}
