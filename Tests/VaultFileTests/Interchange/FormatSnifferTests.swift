import Testing
@testable import VaultInterchange
@testable import VaultModel

/// What a file looks like (`FormatSniffer`), placing and choosing imported entries, and issue 47's
/// interchange items: Bitwarden's `{}` refused, KeePassXC CSV numbering that never clashes.
@Suite struct FormatSnifferTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: - FormatSniffer.sniff

    @Test func test_sniff_recognisesEachFormatByItsContent() {
        let samples: [(input: [UInt8], format: String?)] = [
            ([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0, 0], "kdbx"),
            ([0x89, 0x56, 0x41, 0x55, 0x4C, 0x54, 0x0D, 0x0A, 1], nil),
            (bytes("age-encryption.org/v1\n-> X25519 abc\n"), nil),
            (bytes("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<KeePassFile>\n<Meta/>"), "keepass-xml"),
            (bytes("\u{FEFF}name,url,username,password,note\r\nsite,https://a,u,p,\r\n"), "chrome-csv"),
            (bytes("\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\"\n"), "firefox-csv"),
            (bytes("\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n"), "keepassxc-csv"),
            (bytes("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"), "bitwarden-csv"),
            (bytes("url,username,password,totp,extra,name,grouping,fav\n"), "lastpass-csv"),
            (bytes("Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n"), "1password-csv"),
            (bytes("username,username2,username3,title,password,note,url,category,otpSecret\n"), "dashlane-csv"),
            (bytes("name,value,username\ndb,pw,admin\n"), "csv"),
            (bytes("{\"encrypted\": false, \"folders\": [], \"items\": []}"), "bitwarden-json"),
            (bytes("{\"folders\": [], \"items\": [{\"auto_submit\": true, \"template_type\": \"login.default\"}]}"), "enpass-json"),
            (bytes("{\n  \"entries\" : [],\n  \"vaultfile_export\" : 1\n}"), "json"),
            (bytes("# comment\nexport DB_PASSWORD=x\nAPI_KEY='y'\n"), "dotenv"),
            (bytes("$ANSIBLE_VAULT;1.1;AES256\n6162\n"), "ansible-vault"),
            (bytes("app: demo\npassword: !vault |\n    $ANSIBLE_VAULT;1.1;AES256\n    6162\n"), "ansible-vault"),
            (bytes("collections,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"), "bitwarden-csv"),
        ]
        for sample in samples {
            let sniffed = FormatSniffer.sniff(sample.input)
            #expect(sniffed != nil, "\(sample)")
            #expect(sniffed?.format == sample.format, "\(String(decoding: sample.input, as: UTF8.self))")
        }
        // Issue 45: a KDBX database is imported directly (--format kdbx), no longer through an XML export.
        #expect(FormatSniffer.sniff([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5])?.format == "kdbx")
    }

    /// KeePass 1's .kdb (second signature 0xB54BFB65) is named, with the way to convert it, not read.
    @Test func test_sniff_namesAKeePass1Database() {
        let kdb: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x65, 0xFB, 0x4B, 0xB5, 0x03, 0x00, 0x00, 0x00]
        let sniffed = FormatSniffer.sniff(kdb)
        #expect(sniffed?.format == nil && sniffed?.description == "a KeePass 1 database (.kdb)", "\(String(describing: sniffed))")
        #expect(sniffed?.advice?.contains("save it as KDBX") == true)
        #expect(FormatSniffer.sniffMagic(kdb) == sniffed)
    }

    @Test func test_sniffMagic_agreesWithSniffOnBinaryFilesAndReadsNoText() {
        for magic in [[0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 1], [0x89, 0x56, 0x41, 0x55, 0x4C, 0x54, 0x0D, 0x0A], bytes("age-encryption.org/v1\n"),
                      bytes("-----BEGIN AGE ENCRYPTED FILE-----\n"), [0x50, 0x4B, 0x03, 0x04] + bytes("export.data")] as [[UInt8]] {
            #expect(FormatSniffer.sniffMagic(magic) != nil && FormatSniffer.sniffMagic(magic) == FormatSniffer.sniff(magic), "\(magic)")
        }
        for text in ["name,url,username,password\n", "A=1\n", "{\"items\": []}", "<KeePassFile>", "abc"] {
            #expect(FormatSniffer.sniffMagic(bytes(text)) == nil, "\(text)")
        }
    }

    @Test func test_sniff_tellsNothingOfTextItDoesNotKnow() {
        for text in ["", "hello world\n", "{\"a\": 1}", "<html></html>", "a,b,c\n1,2,3\n"] {
            #expect(FormatSniffer.sniff(bytes(text)) == nil, "\(text)")
        }
        #expect(FormatSniffer.sniff([0xFF, 0x00, 0xC3]) == nil)
    }

    // MARK: - ImportedEntries.placed(under:), keeping(_:)

    @Test func test_placed_putsEveryEntryAndRenamingUnderTheFolder() throws {
        let csv = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n\"Root\",\"a/b\",\"u\",\"p\",\"\",\"\"\n\"Root\",\"LD_PRELOAD\",\"u\",\"p\",\"\",\"\"\n"
        let placed = try Interchange.read(bytes(csv), format: .keepassxcCSV, now: 0, options: ForeignBuildOptions(prefix: ["in", "kp"]))
        #expect(placed.names == ["in/kp/a-b", "in/kp/LD_PRELOAD"])
        #expect(placed.renamings.map(\.name) == ["in/kp/a-b"])
        #expect(placed.warnings.isEmpty, "under a folder the entry is no longer the variable LD_PRELOAD")
    }

    @Test func test_keeping_leavesOutTheEntriesRefused() throws {
        let imported = try Interchange.read(bytes("a=1\nb=2\nc=3\n"), format: .dotenv, now: 0)
        let kept = try imported.keeping { $0 != "b" }
        #expect(kept.names == ["a", "c"])
    }

    // MARK: - Issue 47: Bitwarden JSON without items, KeePassXC CSV numbering

    @Test func test_read_refusesABitwardenDocumentWithoutItems() throws {
        for document in ["{}", "{\"folders\": []}", "{\"items\": null}", "{\"encrypted\": false}"] {
            #expect(throws: VaultError.self, "\(document)") { try Interchange.read(bytes(document), format: .bitwardenJSON, now: 0) }
            #expect(throws: VaultError.self, "\(document)") { try Interchange.read(bytes(document), format: .bitwardenJSON, now: 0, asRecords: false) }
        }
        #expect(try Interchange.read(bytes("{\"items\": []}"), format: .bitwardenJSON, now: 0).count == 0)
    }

    @Test func test_read_keePassXCNumberingNeverClashesWithALiteral() throws {
        func names(_ titles: [String]) throws -> [String] {
            let rows = titles.map { "\"Root\",\"\($0)\",\"u\",\"p\",\"\",\"\"" }.joined(separator: "\n")
            let csv = bytes("\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n" + rows + "\n")
            let fast = try Interchange.read(csv, format: .keepassxcCSV, now: 0).names
            #expect(try Interchange.read(csv, format: .keepassxcCSV, now: 0, asRecords: false).names == fast)
            return fast
        }
        #expect(try names(["t", "t (2)", "t"]) == ["t", "t (2)", "t (3)"])
        // The builder's rule (issue 44): the literal keeps its name; the numbering skips it.
        #expect(try names(["t", "t", "t (2)"]) == ["t", "t (3)", "t (2)"])
        #expect(try names(["t", "t", "t"]) == ["t", "t (2)", "t (3)"])
        #expect(try names(["t (2)", "t", "t", "t"]) == ["t (2)", "t", "t (3)", "t (4)"])
    }
}
