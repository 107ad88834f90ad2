import Foundation
import TestSupport
import Testing

/// Issue 44's small leftovers: KeePassXC's CSV writes Steam's TOTP as `…&digits=6&encoder=steam`
/// (imported as Steam's five characters, as KeePassXC computes it), and a title holding a newline
/// is shown escaped in its renaming message (one line each).
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

    // MARK: - Failure

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

    @Test func test_import_renamingOfATitleWithANewlineIsOneEscapedLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let csv = "name,url,username,password\n\"two\nlines\",https://example.com,u,pw\n"
        let result = try cli.run(["import", "--format", "chrome-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        let renamed = result.stderr.split(separator: "\n").filter { $0.contains("renamed") }
        #expect(renamed.count == 1 && renamed[0].contains("'two\\x0Alines' to 'two lines'"), "\(result.stderr.debugDescription)")
    }
}
