import Foundation
import TestSupport
import Testing

/// The import builder's rules of issue 44 ("Nothing lost, every loss said") through the real
/// readers and the built binary, end to end: readable names for URL titles with the title kept,
/// every renaming and every column not kept printed with its count (stderr and `--json`), repeated
/// titles numbered by username then URL whatever the row order, TOTP from 1Password's OTPAuth and
/// Bitwarden's bare Base32 giving working codes, Firefox's titles from the site, `--dry-run`,
/// `--format auto` on every fixture of Fixtures/import, and a wrong `--format` naming the right one.
@Suite struct ForeignImportRulesCLITests {
    private static let fixtures = ProjectPaths.fixtures.appendingPathComponent("import")
    private static func fixture(_ name: String) -> String { fixtures.appendingPathComponent(name).path }
    private static let python3 = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
    private static let hasAge = FileManager.default.isExecutableFile(atPath: "/usr/bin/age")

    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> String {
        try cli.run(["get", name, "--field", field] + cli.unlock()).text
    }

    /// Lines of `stderr` that start with `prefix`.
    private func lines(_ stderr: String, _ prefix: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    /// The RFC 6238 code of the Base32 `secret` at `time` (SHA-1, 6 digits, 30 s), computed by
    /// Python's standard library: a reference independent of vaultfile's own TOTP code.
    private func referenceCode(_ cli: CLI, secret: String, at time: Int) throws -> String? {
        guard let python3 = Self.python3 else { return nil }
        let script = "import base64,hashlib,hmac,struct,sys\n"
            + "key = base64.b32decode(sys.argv[1]); digest = hmac.new(key, struct.pack('>Q', int(sys.argv[2]) // 30), hashlib.sha1).digest()\n"
            + "offset = digest[-1] & 15; print('%06d' % ((struct.unpack('>I', digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000), end='')\n"
        let result = try cli.run(["-c", script, secret, String(time)], executable: python3)
        return result.status == 0 ? result.text : nil
    }

    // MARK: - Names: URL titles, numbering, titles from the site

    @Test func test_import_chromeURLTitleGetsAReadableNameAndKeepsTheTitle() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password,note\nhttps://news.ycombinator.com,https://news.ycombinator.com/login,dave,hn-pw,\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["news.ycombinator.com"])
        #expect(try field(cli, "news.ycombinator.com", "title") == "https://news.ycombinator.com", "the original title is kept")
        #expect(try field(cli, "news.ycombinator.com", "username") == "dave")
        #expect(try cli.run(["get", "news.ycombinator.com"] + cli.unlock()).text == "hn-pw")
        #expect(result.stderr.contains("renamed 'https://news.ycombinator.com' to 'news.ycombinator.com'"), "\(result.stderr)")
        #expect(result.stderr.contains("the original title is kept in the field 'title'"), "\(result.stderr)")
    }

    @Test func test_import_formatCharactersInTitlesAreLeftOutAndTheTitleKept() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // A zero-width space pasted from a web page, a BOM, a right-to-left mark: one of them used
        // to stop the whole import (a new name may not hold them).
        try cli.write("c.csv", bytes("name,url,username,password,note\nGit\u{200B}Hub,https://github.com,u1,p1,\n\u{FEFF}Bank,https://bank.example,u2,p2,\n"
                                     + "\u{200F}\u{05D1}\u{05E0}\u{05E7},https://bank.example.il,u3,p3,\nPlain,https://plain.example,u4,p4,\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["Bank", "GitHub", "Plain", "\u{05D1}\u{05E0}\u{05E7}"])
        #expect(try field(cli, "GitHub", "title") == "Git\u{200B}Hub", "the original title is kept")
        #expect(try field(cli, "Bank", "title") == "\u{FEFF}Bank")
        #expect(try cli.run(["get", "GitHub"] + cli.unlock()).text == "p1")
        #expect(lines(result.stderr, "vaultfile: renamed '").count == 3, "\(result.stderr)")
        // KeePassXC's CSV names through the other cleaner: the same rule.
        try cli.write("k.csv", bytes("\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n\"Root/W\u{200B}eb\",\"Mail\u{200E}\",\"u\",\"p\",\"\",\"\"\n"))
        let keepass = try cli.run(["import", "--format", "keepassxc-csv", "--prefix", "kp/", cli.path("k.csv")] + cli.unlock())
        #expect(keepass.status == 0, "\(keepass.stderr)")
        let all = try names(cli)
        #expect(all.contains { $0.hasPrefix("kp/") && $0.hasSuffix("Web/Mail") }, "\(all)")
    }

    @Test func test_import_titleOfOnlyFormatCharactersNeverTakesThePrefixsName() throws {
        // recheck58 N1: a title that cleaning leaves empty named the entry after the prefix itself,
        // and --overwrite replaced an unrelated entry of that name.
        let cli = try CLI.withEntriesSet([("imp", bytes("mine"))]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password,note\n\u{200B},https://zw.example,u,ATTACKER,\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", "--prefix", "imp/", "--overwrite", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "imp"] + cli.unlock()).text == "mine", "the entry named as the prefix is untouched")
        let all = try names(cli)
        #expect(all == ["imp", "imp/zw.example"], "\(all)")
        #expect(try field(cli, "imp/zw.example", "title") == "\u{200B}", "the title is kept")
    }

    @Test(.enabled(if: CLI.hasScript, "script (util-linux) is not installed: skipped"))
    func test_import_withoutAFileOnATerminalStopsAtOnce() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let session = try cli.interactive(["import"] + cli.unlock(), answers: [])
        #expect(session.status == 2, "\(session.screen)")
        #expect(session.screen.contains("no file was named, and standard input is a terminal"), "\(session.screen)")
        #expect(session.screen.contains("vaultfile import FILE"), "\(session.screen)")
    }

    @Test func test_import_printsEveryRenamingAndEveryColumnNotKeptWithCounts() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Firefox's export: guid and timeLastUsed in both rows, formActionOrigin in one.
        let firefox = try cli.run(["import", "--format", "firefox-csv", Self.fixture("firefox.csv")] + cli.unlock())
        #expect(firefox.status == 0, "\(firefox.stderr)")
        let warnings = lines(firefox.stderr, "vaultfile: warning: not kept: ")
        #expect(warnings.contains { $0.contains("Firefox's guid column, in 2 items") }, "\(firefox.stderr)")
        #expect(warnings.contains { $0.contains("Firefox's timeLastUsed column, in 2 items") }, "\(firefox.stderr)")
        #expect(warnings.contains { $0.contains("Firefox's formActionOrigin column, in 1 item ") }, "\(firefox.stderr)")
        // The same through --json: one not_kept warning per column, the same text.
        let json = try jsonObject(try cli.run(["import", "--format", "firefox-csv", "--json", "--dry-run", "--overwrite",
                                               Self.fixture("firefox.csv")] + cli.unlock()).stdout)
        let messages = (json["warnings"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "not_kept" }.compactMap { $0["message"] as? String }
        #expect(messages.count == warnings.count && warnings.allSatisfy { line in messages.contains { line.hasSuffix($0) } }, "\(messages)")
        // Three Chrome rows whose names need a change: three renamings, on stderr and in --json.
        let rows = ["https://a.example/x,https://a.example,u1,p1,", "https://a.example/x,https://a.example,u2,p2,", "https://b.example,https://b.example,u3,p3,"]
        try cli.write("c.csv", bytes("name,url,username,password,note\n" + rows.joined(separator: "\n") + "\n"))
        let chrome = try cli.run(["import", "--format", "chrome-csv", "--prefix", "web/", cli.path("c.csv")] + cli.unlock())
        #expect(chrome.status == 0, "\(chrome.stderr)")
        #expect(lines(chrome.stderr, "vaultfile: renamed '").count == 3, "\(chrome.stderr)")
        let renamed = try jsonObject(try cli.run(["import", "--format", "chrome-csv", "--prefix", "web/", "--json", "--dry-run", "--overwrite",
                                                  cli.path("c.csv")] + cli.unlock()).stdout)["renamed"] as? [[String: Any]]
        #expect(renamed?.count == 3 && renamed?.allSatisfy { ($0["reasons"] as? [String])?.contains("title_kept") == true } == true, "\(renamed ?? [])")
        #expect(Set(renamed?.compactMap { $0["to"] as? String } ?? []) == Set(try names(cli).filter { $0.hasPrefix("web/") }))
        // Bitwarden's custom `username` field next to the login: kept as another field, and said.
        let bitwarden = try cli.run(["import", "--format", "bitwarden-csv", Self.fixture("bitwarden.csv")] + cli.unlock())
        #expect(bitwarden.stderr.contains("field 'username' stored as 'username_2' in entry 'Work/Servers/db01'"), "\(bitwarden.stderr)")
        #expect(try field(cli, "Work/Servers/db01", "username") == "admin" && field(cli, "Work/Servers/db01", "username_2") == "not-the-login")
    }

    @Test func test_import_numbersRepeatedTitlesByUsernameThenURLWhateverTheRowOrder() throws {
        let rows = ["site,https://b.example,amy,amy-b,", "site,https://z.example,zed,zed-z,", "site,https://a.example,amy,amy-a,", "site,https://c.example,bob,bob-c,"]
        var held: [[String: String]] = []
        for order in [rows, rows.reversed(), [rows[1], rows[3], rows[0], rows[2]]] {
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            try cli.write("c.csv", bytes("name,url,username,password,note\n" + order.joined(separator: "\n") + "\n"))
            let result = try cli.run(["import", "--format", "chrome-csv", cli.path("c.csv")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            let listed = try names(cli)
            #expect(listed.sorted() == ["site", "site (2)", "site (3)", "site (4)"], "\(listed)")
            held.append(try Dictionary(uniqueKeysWithValues: listed.map { ($0, try cli.run(["get", $0] + cli.unlock()).text) }))
        }
        // Username first (amy, amy, bob, zed), then URL between the two of amy.
        #expect(held[0] == ["site": "amy-a", "site (2)": "amy-b", "site (3)": "bob-c", "site (4)": "zed-z"], "\(held[0])")
        #expect(held.allSatisfy { $0 == held[0] }, "the same names whatever the order of the rows: \(held)")
    }

    @Test func test_import_firefoxWithoutTitleIsNamedFromTheSite() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "firefox-csv", Self.fixture("firefox.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["accounts.firefox.com", "intranet.example.com"])
        #expect(try field(cli, "accounts.firefox.com", "url") == "https://accounts.firefox.com")
        #expect(try field(cli, "intranet.example.com", "username") == "erin")
        #expect(try cli.run(["get", "intranet.example.com"] + cli.unlock()).text == "intra-pw")
    }

    // MARK: - TOTP

    @Test func test_import_totpOf1PasswordAndBareBase32OfBitwardenGiveWorkingCodes() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        #expect(try cli.run(["import", "--format", "1password-csv", "--prefix", "op/", Self.fixture("1password.csv")] + cli.unlock()).status == 0)
        #expect(try cli.run(["import", "--format", "bitwarden-csv", "--prefix", "bw/", Self.fixture("bitwarden.csv")] + cli.unlock()).status == 0)
        // Bitwarden's login_totp is a bare Base32 secret: it became an otpauth:// URI.
        #expect(try field(cli, "bw/Social/Twitter", "totp").hasPrefix("otpauth://totp/"))
        guard try referenceCode(cli, secret: "JBSWY3DPEHPK3PXP", at: 59) != nil else {
            print("skipped: the TOTP reference needs python3 (apt-get install python3)"); return
        }
        for time in [59, 1_111_111_109, 2_000_000_000] {
            let expected = try referenceCode(cli, secret: "JBSWY3DPEHPK3PXP", at: time)
            for name in ["op/GitHub", "bw/Social/Twitter"] {
                let code = try cli.run(["totp", name, "--at", String(time)] + cli.unlock())
                #expect(code.status == 0 && code.text == expected, "\(name) at \(time): \(code.text) \(code.stderr)")
            }
        }
    }

    // MARK: - --dry-run

    @Test func test_import_dryRunOfKeePassXMLChangesNothing() throws {
        let cli = try CLI.withEntriesSet([("kept", bytes("old"))]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let result = try cli.run(["import", "--format", "keepass-xml", "--dry-run", Self.fixture("keepassxc.xml")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let planned = result.text.split(separator: "\n")
        #expect(planned.count == 5 && planned.allSatisfy { $0.hasPrefix("add ") }, "\(result.text)")
        #expect(result.stderr.contains("would import 5 entries") && result.stderr.contains("nothing was changed (--dry-run)"), "\(result.stderr)")
        #expect(result.stderr.contains("would be renamed 'Web/https://news.ycombinator.com'"), "\(result.stderr)")
        #expect(try cli.read("t.vault") == before, "the vault file is not written")
        #expect(try names(cli) == ["kept"])
    }

    // MARK: - --format auto and a wrong --format

    /// What `--format auto` must pick for each file of Fixtures/import (nil: no header says it, so it must refuse).
    private static let expectedFormats: [String: String?] = [
        "1password.1pux": "1pux", "1password.csv": "1password-csv", "bitwarden.csv": "bitwarden-csv", "bitwarden-org.csv": "bitwarden-csv",
        "chrome.csv": "chrome-csv", "firefox.csv": "firefox-csv", "dashlane.csv": "dashlane-csv", "dashlane-headerless.csv": nil,
        "enpass.json": "enpass-json", "keepass2.xml": "keepass-xml", "keepassxc.xml": "keepass-xml", "lastpass.csv": "lastpass-csv",
        "ansible-vault/whole-1.1.yml": "ansible-vault", "ansible-vault/whole-1.2.txt": "ansible-vault", "ansible-vault/inline.yml": "ansible-vault",
        "sops/secrets.json": "sops", "sops/secrets.yaml": "sops",
    ]
    /// Files of Fixtures/import that are no export: the README, the 1pux maker, sops' identities and data keys.
    private static let notExports: Set<String> = ["README.md", "make-1pux.py", "sops/keys.txt", "sops/datakeys.json"]

    @Test func test_import_formatAutoPicksTheRightReaderForEveryFixture() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("vault-pass", bytes("fixture-password\n"))
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.fixtures.path).filter {
            var folder: ObjCBool = false
            // hostile/ holds imports refused by the limits (ImportAmplificationCLITests), not samples.
            return FileManager.default.fileExists(atPath: Self.fixture($0), isDirectory: &folder) && !folder.boolValue && !$0.hasPrefix("hostile/")
        }
        #expect(Set(files).subtracting(Self.notExports) == Set(Self.expectedFormats.keys), "every fixture has its expected format")
        for (file, expected) in Self.expectedFormats.sorted(by: { $0.key < $1.key }) {
            if file.hasPrefix("sops/") && !Self.hasAge { print("skipped: \(file) (sops needs age)"); continue }
            let credentials = file.hasPrefix("ansible-vault/") ? ["--source-password-file", cli.path("vault-pass")] : []
            let result = try cli.run(["import", "--format", "auto", "--dry-run", "--json", Self.fixture(file)] + credentials + cli.unlock(),
                                     extra: ["SOPS_AGE_KEY_FILE": Self.fixture("sops/keys.txt")])
            guard let expected else {
                #expect(result.status == 64 && result.stderr.contains("cannot tell the format"), "\(file): \(result.stderr)")
                continue
            }
            #expect(result.status == 0, "\(file): \(result.stderr)")
            let summary = try jsonObject(result.stdout)
            #expect(summary["format"] as? String == expected, "\(file)")
            #expect((summary["imported"] as? Int ?? 0) > 0, "\(file): \(result.text)")
        }
        #expect(try names(cli).isEmpty, "--dry-run wrote nothing")
    }

    @Test func test_import_wrongFormatNamesTheRightOne() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // Each export given as another format that refuses it; the message names what it is and the command.
        let cases: [(file: String, given: String, right: String, looks: String)] = [
            ("1password.csv", "bitwarden-csv", "1password-csv", "a 1Password CSV export"),
            ("bitwarden.csv", "firefox-csv", "bitwarden-csv", "a Bitwarden CSV export"),
            ("bitwarden-org.csv", "lastpass-csv", "bitwarden-csv", "a Bitwarden organisation CSV export"),
            ("lastpass.csv", "csv", "lastpass-csv", "a LastPass CSV export"),
            ("dashlane.csv", "1pux", "dashlane-csv", "a Dashlane CSV export"),
            ("enpass.json", "keepass-xml", "enpass-json", "an Enpass JSON export"),
            ("keepassxc.xml", "enpass-json", "keepass-xml", "a KeePass 2 XML export"),
            ("keepass2.xml", "dotenv", "keepass-xml", "a KeePass 2 XML export"),
            ("1password.1pux", "lastpass-csv", "1pux", "a 1Password export (1PUX)"),
            ("chrome.csv", "json", "chrome-csv", "a Chrome (or Chromium, Edge) CSV export"),
            ("firefox.csv", "bitwarden-json", "firefox-csv", "a Firefox CSV export"),
        ]
        for item in cases {
            let path = Self.fixture(item.file)
            let result = try cli.run(["import", "--format", item.given, path] + cli.unlock())
            #expect(result.status == 2, "\(item.file) as \(item.given): \(result.stderr)")
            #expect(result.stderr.contains("is not \(item.given) input: it looks like \(item.looks); nothing was imported"), "\(item.file): \(result.stderr)")
            #expect(result.stderr.contains("import it with: vaultfile import --format \(item.right) \(path)"), "\(item.file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }
}
