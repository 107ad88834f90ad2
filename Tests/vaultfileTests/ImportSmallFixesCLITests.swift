import Foundation
import TestSupport
import Testing

/// Issue 44's small leftovers: KeePassXC's CSV writes Steam's TOTP as `…&digits=6&encoder=steam`
/// (imported as Steam's five characters, as KeePassXC computes it); a title holding a newline is
/// shown escaped in its renaming message (one line each); Bitwarden CSV's `fields` cell with CR LF
/// line ends; a 1pux ZIP with two `export.data` refused; a pass store's file whose name is not
/// UTF-8 skipped and named, escaped.
@Suite struct ImportSmallFixesCLITests {
    private static let keepassHeader = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n"
    private static let steamAlphabet = Set("23456789BCDFGHJKMNPQRTVWXY")

    private func code(_ cli: CLI, _ name: String, at time: Int) throws -> CLI.Result {
        try cli.run(["totp", name, "--at", String(time)] + cli.unlock())
    }

    // MARK: - Success

    @Test func test_import_keepassXCSteamTOTPWithDigits6GivesSteamCodes() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let uri = "otpauth://totp/Steam:bob?secret=JBSWY3DPEHPK3PXP&period=30&digits=%@&encoder=steam"
        let csv = Self.keepassHeader
            + "\"Root\",\"steam6\",\"bob\",\"pw\",\"\",\"\",\"\(uri.replacingOccurrences(of: "%@", with: "6"))\"\n"
            + "\"Root\",\"steam5\",\"bob\",\"pw\",\"\",\"\",\"\(uri.replacingOccurrences(of: "%@", with: "5"))\"\n"
        let result = try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0 && !result.stderr.contains("cannot compute"), "\(result.stderr)")
        for time in [59, 1_111_111_109, 2_000_000_000] {
            let six = try code(cli, "steam6", at: time), five = try code(cli, "steam5", at: time)
            #expect(six.status == 0 && six.text.count == 5 && six.text.allSatisfy(Self.steamAlphabet.contains), "\(six.text) \(six.stderr)")
            #expect(six.text == five.text, "the same Steam code at \(time)")
        }
    }

    @Test func test_import_bitwardenCSVFieldsCellWithCRLFGivesOneFieldPerLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let csv = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\r\n"
            + ",,login,Site,,\"pin: 1234\r\nquestion: first pet\r\nRex\",0,https://example.com,u,pw,\r\n"
        let result = try cli.run(["import", "--format", "bitwarden-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "Site", "--field", "pin"] + cli.unlock()).stdout == bytes("1234"))
        #expect(try cli.run(["get", "Site", "--field", "question"] + cli.unlock()).stdout == bytes("first pet\nRex"))
    }

    // MARK: - Failure

    @Test func test_import_1puxWithTwoExportDataIsRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = ProjectPaths.fixtures.appendingPathComponent("import/hostile/duplicate-export-data.1pux").path
        let result = try cli.run(["import", "--format", "1pux", path] + cli.unlock())
        #expect(result.status == 2 && result.stderr.contains("two files named 'export.data'"), "\(result.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_digits6WithoutTheSteamEncoderStaysSixDigits() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // The fix touches Steam URIs only: digits=6 alone is RFC 6238's six digits, as the bare secret gives
        // (whose codes ForeignImportRulesCLITests checks against Python's reference).
        let csv = Self.keepassHeader + "\"Root\",\"plain\",\"bob\",\"pw\",\"\",\"\",\"otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=6\"\n"
            + "\"Root\",\"bare\",\"bob\",\"pw\",\"\",\"\",\"JBSWY3DPEHPK3PXP\"\n"
        #expect(try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv)).status == 0)
        let plain = try code(cli, "plain", at: 59), bare = try code(cli, "bare", at: 59)
        #expect(plain.status == 0 && plain.text.count == 6 && plain.text.allSatisfy(\.isNumber), "\(plain.text) \(plain.stderr)")
        #expect(plain.text == bare.text)
    }

    // MARK: - Edge

    @Test func test_importPass_fileNameThatIsNotUTF8IsSkippedAndNamedEscaped() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // No gpg runs: the one .gpg file's name is Latin-1 'café', skipped before decrypting.
        try cli.shell("mkdir -p store && echo someone > store/.gpg-id && printf x > \"store/$(printf 'caf\\351.gpg')\"")
        let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("files whose names are not UTF-8 (not read; e.g. 'caf\\xE9.gpg')"), "\(result.stderr)")
        #expect(try names(cli).isEmpty)
    }

    @Test func test_import_renamingOfATitleWithANewlineIsOneEscapedLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let csv = "name,url,username,password\n\"two\nlines\",https://example.com,u,pw\n"
        let result = try cli.run(["import", "--format", "chrome-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        let renamed = result.stderr.split(separator: "\n").filter { $0.contains("renamed") }
        #expect(renamed.count == 1 && renamed[0].contains("'two\\x0Alines' to 'two lines'"), "\(result.stderr.debugDescription)")
    }
}
