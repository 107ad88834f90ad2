import SecureMemory
import TestSupport
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

    /// A file smaller than the head (a dotenv file, a headerless Dashlane CSV whose first row is
    /// values, a vaultfile CSV) is read where it lies: once the caller wiped its buffer, this
    /// process's memory holds no copy of a value (the sniffer made an array and a string of the
    /// whole head, and strings of the first row's cells, freed without a wipe).
    @Test(.enabled(if: ScannedSecret.canScan, "a sanitized build: no scan of this process's memory"))
    func test_sniff_leavesNoCopyOfASmallFileInFreedMemory() {
        let samples: [(before: String, after: String, format: String?)] = [
            ("# a comment\nexport DB_USER=admin\nDB_PASSWORD=", "\nAPI_URL=https://a.example\n", "dotenv"),
            ("\r\nKEY=", "\r\n", "dotenv"),
            ("mail,https://mail.example,alice,", ",a note\n", nil),
            ("name,value,username\ndb,", ",admin\n", "csv"),
            ("name,url,username,password,note\nmail,https://mail.example,alice,", ",\n", "chrome-csv"),
            ("\u{FEFF}A=", "", "dotenv"),
        ]
        for sample in samples {
            let secret = ScannedSecret()
            var input: [UInt8] = []
            input.reserveCapacity(sample.before.utf8.count + secret.count + sample.after.utf8.count)
            input += Array(sample.before.utf8)
            secret.append(to: &input)
            input += Array(sample.after.utf8)
            #expect(secret.copiesInMemory() >= 1, "the scan finds the secret while the input holds it")
            let sniffed = FormatSniffer.sniff(input)
            #expect(sniffed?.format == sample.format, "\(sample.before)")
            wipe(&input)
            #expect(secret.copiesInMemory() == 0, "\(sample.before): a copy of the value is left in memory")
        }
    }

    /// The byte reading tells every input as the text reading did (`FormatSnifferReference`):
    /// headers of every tool in any case, quoted or spaced, in any column order, with or without
    /// a byte order mark and blank lines before them; dotenv lines, comments, `export`, bad lines;
    /// values with `=`, quotes, commas, non-ASCII text and invalid UTF-8; the markers of the other
    /// formats; LF and CRLF line ends.
    @Test func test_sniff_readsInPlaceWhatTheTextReadingRead() {
        var generator = SplitMix(seed: 44_2026)
        let columns = ["group", "title", "username", "password", "url", "notes", "folder", "favorite", "type", "name", "fields", "reprompt",
                       "login_uri", "login_username", "login_password", "collections", "httpRealm", "formActionOrigin", "guid", "totp",
                       "extra", "grouping", "fav", "otpauth", "username2", "username3", "note", "category", "otpSecret", "value", "timeCreated"]
        let headers = [["group", "title", "username", "password", "url", "notes"],
                       ["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri", "login_username", "login_password"],
                       ["url", "username", "password", "httprealm", "formactionorigin", "guid"],
                       ["url", "username", "password", "totp", "extra", "name", "grouping", "fav"],
                       ["title", "url", "username", "password", "otpauth"],
                       ["username", "username2", "username3", "title", "password", "note", "url", "category", "otpsecret"],
                       ["name", "url", "username", "password"], ["name", "value"]]
        let words = ["a", "Zz9", "p=w", "x,y", "\"q\"", "é", "日本", "€", "😀", " ", "\t", "#", "=", "export", "K_1", "$ANSIBLE_VAULT;", "!vault",
                     "ENC[AES256_GCM,", "<KeePassFile", "{", "<", "sops:"]
        func pick<T>(_ list: [T]) -> T { list[Int(generator.next() % UInt64(list.count))] }
        func chance(_ percent: UInt64) -> Bool { generator.next() % 100 < percent }
        func cased(_ text: String) -> String {
            String(text.map { chance(30) ? Character($0.uppercased()) : $0 })
        }
        var differences: [String] = [], compared = 0, recognised = 0
        for round in 0..<3_000 {
            let crlf = chance(40)
            let end = crlf ? "\r\n" : "\n"
            var bytes: [UInt8] = chance(15) ? [0xEF, 0xBB, 0xBF] : []
            for _ in 0..<(generator.next() % 3) { bytes += Array(pick([" ", "\t", "\n", "  "]).utf8) }
            var lines: [String] = []
            switch generator.next() % 5 {
            case 0, 1:
                var header = chance(70) ? pick(headers) : (0..<(1 + generator.next() % 6)).map { _ in pick(columns) }
                if chance(30) { header.append(pick(columns)) }
                header.shuffle(using: &generator)
                lines.append(header.map { column in
                    let text = cased(column)
                    return chance(30) ? "\"\(text)\"" : chance(10) ? " \(text) " : text
                }.joined(separator: ","))
            case 2:
                lines.append(pick(["{", "<", "$ANSIBLE_VAULT;1.1;AES256", "---", "app: demo"]))
            default:
                break
            }
            for _ in 0..<(generator.next() % 8) {
                switch generator.next() % 6 {
                case 0: lines.append("\(chance(20) ? "export " : "")\(pick(["A", "DB_PASSWORD", "k9", "_x", "B-C", "é"]))=\((0..<(generator.next() % 4)).map { _ in pick(words) }.joined())")
                case 1: lines.append(pick(["# comment", "   ", "", "\t# x", "export"]))
                case 2: lines.append((0..<(1 + generator.next() % 4)).map { _ in pick(words) }.joined(separator: ","))
                case 3: lines.append(pick(["password: !vault |", "    $ANSIBLE_VAULT;1.1;AES256", "key: ENC[AES256_GCM,data:x]"]))
                case 4 where !crlf: lines.append("sops:")
                default: lines.append((0..<(generator.next() % 5)).map { _ in pick(words) }.joined())
                }
            }
            bytes += Array(lines.joined(separator: end).utf8)
            if chance(30) { bytes += Array(end.utf8) }
            if chance(10) { bytes.insert(pick([0xFF, 0xC3, 0x80]), at: Int(generator.next() % UInt64(bytes.count + 1))) }
            // A CRLF among the blank lines before the content: told otherwise on purpose (below).
            let blank = bytes.drop { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }
            if bytes[..<blank.startIndex].contains(0x0D) { continue }
            // `sops:` after a CRLF: the text reading took CRLF for one character, not an LF.
            if bytes.firstRange(of: Array("\r\nsops:".utf8)) != nil { continue }
            let new = FormatSniffer.sniff(bytes), old = FormatSnifferReference.sniff(bytes)
            compared += 1
            if new != nil { recognised += 1 }
            if new != old, differences.count < 5 {
                differences.append("round \(round): \(String(reflecting: String(decoding: bytes, as: UTF8.self))): \(String(describing: new?.format)) against \(String(describing: old?.format))")
            }
        }
        #expect(differences.isEmpty, "\(differences)")
        #expect(compared > 2_000 && recognised > 500, "\(compared) inputs compared, \(recognised) recognised")
    }

    /// Where the byte reading differs from the text reading on purpose: a blank line ended by CRLF
    /// before the content is skipped as one ended by LF was (the text reading took CRLF for one
    /// character, neither a CR nor an LF, and so recognised nothing after it but dotenv).
    @Test func test_sniff_skipsBlankLinesEndedByCRLF() {
        #expect(FormatSniffer.sniff(bytes("\r\n{\"items\": [], \"folders\": []}"))?.format == "bitwarden-json")
        #expect(FormatSniffer.sniff(bytes("\r\n\r\nname,url,username,password\r\n"))?.format == "chrome-csv")
        #expect(FormatSniffer.sniff(bytes("\r\nA=1\r\n"))?.format == "dotenv")
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
