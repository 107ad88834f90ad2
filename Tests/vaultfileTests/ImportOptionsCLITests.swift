import Foundation
import TestSupport
import Testing

/// `vaultfile import`'s options of issue 44 (`--dry-run`, `--skip-existing`, `--prefix`, `--format
/// auto`, a wrong `--format`, folders) and issue 47's Bitwarden `{}` and KeePassXC numbering; `totp`
/// on Steam and unsupported URIs.
@Suite struct ImportOptionsCLITests {
    private static let keepassHeader = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n"

    // MARK: - --dry-run

    @Test func test_import_dryRunPrintsThePlanAndChangesNothing() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let result = try cli.run(["import", "--format", "dotenv", "--dry-run", "--overwrite"] + cli.unlock(), stdin: bytes("a=1\nb=2\n"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "add a\nreplace b\n", "\(result.text)")
        #expect(result.stderr.contains("would import 2 entries from stdin (1 new, 1 replaced); nothing was changed (--dry-run)"), "\(result.stderr)")
        #expect(try cli.read("t.vault") == before, "the vault file is not written")
        let json = try cli.run(["import", "--format", "dotenv", "--dry-run", "--skip-existing", "--json"] + cli.unlock(), stdin: bytes("a=1\nb=2\n"))
        let summary = try jsonObject(json.stdout)
        #expect(summary["dry_run"] as? Bool == true && summary["added"] as? Int == 1 && summary["skipped"] as? Int == 1)
        #expect((summary["entries"] as? [[String: Any]])?.map { $0["action"] as? String } == ["add"])
        #expect(summary["skipped_names"] as? [String] == ["b"])
    }

    @Test func test_import_dryRunFailsAsTheImportWould() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "dotenv", "--dry-run"] + cli.unlock(), stdin: bytes("b=2\n"))
        #expect(result.status == 2 && result.stderr.contains("1 entry exists already ('b'); nothing was imported"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    // MARK: - --skip-existing, --prefix

    @Test func test_import_skipExistingAddsOnlyNewNames() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "dotenv", "--skip-existing"] + cli.unlock(), stdin: bytes("a=1\nb=2\n"))
        #expect(result.status == 0 && result.stderr.contains("imported 1 entry from stdin (1 new, 0 replaced, 1 skipped (1 with changes))"), "\(result.stderr)")
        #expect(try cli.run(["get", "b"] + cli.unlock()).text == "old")
        #expect(try cli.run(["get", "a"] + cli.unlock()).text == "1")
    }

    @Test func test_import_skipExistingOfANewerExportGoesByAccount() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let header = "name,url,username,password,note\n"
        try cli.write("t1.csv", bytes(header + "Twitter,https://twitter.com,tw_b,pb,\nTwitter,https://twitter.com,tw_c,pc,\n"))
        #expect(try cli.run(["import", "--format", "chrome-csv", cli.path("t1.csv")] + cli.unlock()).status == 0)
        // A later export adds tw_a, which numbering by username puts first: by name alone it took
        // 'Twitter' (skipped, lost without a word) and tw_c came in a second time as 'Twitter (3)'.
        try cli.write("t2.csv", bytes(header + "Twitter,https://twitter.com,tw_a,pa,\nTwitter,https://twitter.com,tw_b,pb,\nTwitter,https://twitter.com,tw_c,pc,\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", "--skip-existing", cli.path("t2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        // tw_a, whose name the vault holds for tw_b, is numbered after the vault's entries (cold60 M2 d).
        #expect(result.stderr.contains("renamed 'Twitter' to 'Twitter (3)' (user tw_a, twitter.com; the vault's entries of 'Twitter' hold other accounts"), "\(result.stderr)")
        #expect(result.stderr.contains("imported 1 entry from"), "\(result.stderr)")
        #expect(try names(cli) == ["Twitter", "Twitter (2)", "Twitter (3)"], "no account twice")
        #expect(try cli.run(["get", "Twitter", "--field", "username"] + cli.unlock()).text == "tw_b", "never overwritten")
        #expect(try cli.run(["get", "Twitter (3)"] + cli.unlock()).text == "pa")
    }

    @Test func test_import_skipExistingOfPasswordOnlyItemsGoesByValue() throws {
        // recheck58 N2: items with no username or URL are numbered by their values; a later export
        // with one more such item must bring in that item, whatever the numbers say.
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let header = "name,url,username,password,note\n"
        try cli.write("t1.csv", bytes(header + "PIN,,,p1,\nPIN,,,p2,\n"))
        #expect(try cli.run(["import", "--format", "chrome-csv", cli.path("t1.csv")] + cli.unlock()).status == 0)
        try cli.write("t2.csv", bytes(header + "PIN,,,p1,\nPIN,,,p2,\nPIN,,,p3,\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", "--skip-existing", cli.path("t2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        var values: [String] = []
        for name in try names(cli) { values.append(try cli.run(["get", name] + cli.unlock()).text) }
        let passwords = values.sorted()
        // p3 is in the vault or said not imported; no password twice.
        #expect(Set(passwords).count == passwords.count, "\(passwords)")
        #expect(passwords.contains("p3") || result.stderr.contains("not imported: 'PIN"), "\(passwords) \(result.stderr)")
    }

    @Test func test_import_skipExistingWithOverwriteIsAUsageError() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "dotenv", "--skip-existing", "--overwrite"] + cli.unlock(), stdin: bytes("b=2\n"))
        #expect(result.status == 64 && result.stderr.contains("--overwrite and --skip-existing"), "\(result.stderr)")
        #expect(try cli.run(["get", "b"] + cli.unlock()).text == "old")
    }

    @Test func test_import_prefixPlacesEveryEntryUnderTheFolder() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let csv = Self.keepassHeader + "\"Root/Work\",\"db\",\"u\",\"p\",\"\",\"\"\n"
        let result = try cli.run(["import", "--format", "keepassxc-csv", "--prefix", "imported/kp/"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "imported/kp/Work/db"] + cli.unlock()).text == "p")
        let bad = try cli.run(["import", "--format", "dotenv", "--prefix", "a//b"] + cli.unlock(), stdin: bytes("x=1\n"))
        #expect(bad.status == 64 && bad.stderr.contains("--prefix"), "\(bad.stderr)")
    }

    // MARK: - --format auto, a wrong --format, folders

    @Test func test_import_withoutFormatTellsItFromTheContent() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let bitwarden = #"{"encrypted": false, "folders": [], "items": [{"type": 1, "name": "site", "login": {"username": "u", "password": "p"}}]}"#
        let result = try cli.run(["import", "--json"] + cli.unlock(), stdin: bytes(bitwarden))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jsonObject(result.stdout)["format"] as? String == "bitwarden-json")
        let auto = try cli.run(["import", "--format", "auto"] + cli.unlock(), stdin: bytes("API_KEY=x\n"))
        #expect(auto.status == 0, "\(auto.stderr)")
        #expect(try cli.run(["get", "API_KEY"] + cli.unlock()).text == "x")
        let unknown = try cli.run(["import"] + cli.unlock(), stdin: bytes("hello world\n"))
        #expect(unknown.status == 64 && unknown.stderr.contains("cannot tell the format of stdin"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("--format"))
    }

    @Test func test_import_wrongFormatSaysWhatTheFileLooksLikeAndHowToImportIt() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("chrome.csv", bytes("name,url,username,password,note\nsite,https://a.example,u,p,\n"))
        let chrome = try cli.run(["import", "--format", "csv", cli.path("chrome.csv")] + cli.unlock())
        #expect(chrome.status == 2, "\(chrome.stderr)")
        #expect(chrome.stderr.contains("is not csv input: it looks like a Chrome (or Chromium, Edge) CSV export; nothing was imported"), "\(chrome.stderr)")
        try cli.write("db.kdbx", [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5] + [UInt8](repeating: 7, count: 100))
        let kdbx = try cli.run(["import", "--format", "keepassxc-csv", cli.path("db.kdbx")] + cli.unlock())
        #expect(kdbx.status == 2 && kdbx.stderr.contains("it looks like a KeePass database (KDBX)"), "\(kdbx.stderr)")
        #expect(kdbx.stderr.contains("import it with: vaultfile import --format kdbx"), "\(kdbx.stderr)")
        try cli.write("v.json", bytes("{\"entries\": [], \"vaultfile_export\": 1}"))
        let json = try cli.run(["import", "--format", "dotenv", cli.path("v.json")] + cli.unlock())
        #expect(json.status == 2 && json.stderr.contains("import it with: vaultfile import --format json"), "\(json.stderr)")
    }

    @Test func test_import_ofAFolderNeedsAFolderFormat() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("store"), withIntermediateDirectories: true)
        let given = try cli.run(["import", "--format", "csv", cli.path("store")] + cli.unlock())
        #expect(given.status == 64 && given.stderr.contains("is a folder; --format csv reads a file"), "\(given.stderr)")
        let auto = try cli.run(["import", cli.path("store")] + cli.unlock())
        #expect(auto.status == 64 && auto.stderr.contains("no store marker"), "\(auto.stderr)")
    }

    // MARK: - Issue 47: Bitwarden's {} and KeePassXC's t (2)

    @Test func test_import_refusesABitwardenDocumentWithoutItems() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "bitwarden-json"] + cli.unlock(), stdin: bytes("{}"))
        #expect(result.status == 2 && result.stderr.contains("no 'items' list"), "\(result.stderr)")
    }

    @Test func test_import_keePassXCNumberingNeverClashesWithALiteral() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let csv = Self.keepassHeader + ["t", "t", "t (2)"].enumerated().map { "\"Root\",\"\($1)\",\"u\",\"p\($0)\",\"\",\"\"\n" }.joined()
        let result = try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        // The builder's rule (issue 44): the literal keeps its name, the numbering skips it.
        #expect(try cli.run(["get", "t (2)"] + cli.unlock()).text == "p2")
        #expect(Set([try cli.run(["get", "t"] + cli.unlock()).text, try cli.run(["get", "t (3)"] + cli.unlock()).text]) == ["p0", "p1"])
    }

    // MARK: - totp on Steam and unsupported URIs

    @Test func test_totp_printsSteamGuardCodes() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let uri = "otpauth://totp/Steam:me?secret=JBSWY3DPEHPK3PXP&issuer=Steam&encoder=steam\n"
        #expect(try cli.run(["set", "steam", "--totp"] + cli.unlock(), stdin: bytes(uri)).status == 0)
        let code = try cli.run(["totp", "steam", "--at", "59"] + cli.unlock())
        #expect(code.status == 0 && code.text == "2YXGV", "\(code.stderr)")
    }

    @Test func test_totp_unsupportedURIExitsNonZeroWithoutACode() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let uri = "S=otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&encoder=yandex\nH=otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1\n"
        #expect(try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes(uri)).status == 0)
        for name in ["S", "H"] {
            let result = try cli.run(["totp", name, "--at", "59"] + cli.unlock())
            #expect(result.status == 2 && result.stdout.isEmpty, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("unsupported TOTP parameter"), "\(result.stderr)")
        }
    }
}
