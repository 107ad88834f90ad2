import Foundation
import TestSupport
import Testing

/// `vaultfile import --format keepassxc-csv` and `bitwarden-json` follow the builder's rules (issue
/// 44, "Nothing lost, every loss said"): the five findings of a cold user, run as a user runs them.
@Suite struct OlderReadersImportCLITests {
    private static let keepassHeader = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n"

    private func login(_ name: String, user: String, password: String, totp: String = "", fields: String = "") -> String {
        #"{"type":1,"name":"\#(name)","login":{"username":"\#(user)","password":"\#(password)","totp":"\#(totp)"},"fields":[\#(fields)]}"#
    }

    private func export(_ items: [String]) -> [UInt8] { bytes(#"{"encrypted":false,"folders":[],"items":[\#(items.joined(separator: ","))]}"#) }

    // MARK: - Success

    @Test func test_import_bitwardenCustomUsernameNeverReplacesTheLogin() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let input = export([login("site", user: "zed", password: "pw", fields: #"{"name":"username","value":"custom","type":0}"#)])
        let result = try cli.run(["import", "--format", "bitwarden-json"] + cli.unlock(), stdin: input)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("field 'username' stored as 'username_2' in entry 'site'"), "\(result.stderr)")
        #expect(try cli.run(["get", "site", "--field", "username"] + cli.unlock()).text == "zed")
        #expect(try cli.run(["get", "site", "--field", "username_2"] + cli.unlock()).text == "custom")
    }

    @Test func test_import_bareBase32TOTPGivesCodesFromBothReaders() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let csv = Self.keepassHeader + "\"Root\",\"kp\",\"ann\",\"pw\",\"\",\"\",\"JBSWY3DPEHPK3PXP\"\n"
        #expect(try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv)).status == 0)
        let json = export([login("bw", user: "bob", password: "pw", totp: "JBSWY3DPEHPK3PXP"), login("steam", user: "sam", password: "pw", totp: "steam://JBSWY3DPEHPK3PXP")])
        #expect(try cli.run(["import", "--format", "bitwarden-json"] + cli.unlock(), stdin: json).status == 0)
        // RFC 6238's way with this secret at t = 59: the same six digits from both readers' entries.
        let fromKeePass = try cli.run(["totp", "kp", "--at", "59"] + cli.unlock())
        let fromBitwarden = try cli.run(["totp", "bw", "--at", "59"] + cli.unlock())
        #expect(fromKeePass.status == 0 && fromKeePass.text.count == 6, "\(fromKeePass.stderr)")
        #expect(fromKeePass.text == fromBitwarden.text)
        let steam = try cli.run(["totp", "steam", "--at", "59"] + cli.unlock())
        #expect(steam.status == 0 && steam.text.count == 5, "\(steam.stderr)")
    }

    @Test func test_import_numbersRepeatedTitlesByUsernameInEitherFileOrder() throws {
        for order in [["bob", "ann"], ["ann", "bob"]] {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let csv = Self.keepassHeader + order.map { "\"Root\",\"mail\",\"\($0)\",\"pw-\($0)\",\"\",\"\",\"\"\n" }.joined()
            #expect(try cli.run(["import", "--format", "keepassxc-csv", "--prefix", "kp"] + cli.unlock(), stdin: bytes(csv)).status == 0)
            let json = export(order.map { login("mail", user: $0, password: "pw-\($0)") })
            #expect(try cli.run(["import", "--format", "bitwarden-json", "--prefix", "bw"] + cli.unlock(), stdin: json).status == 0)
            for folder in ["kp", "bw"] {
                #expect(try cli.run(["get", "\(folder)/mail"] + cli.unlock()).text == "pw-ann", "\(order) \(folder)")
                #expect(try cli.run(["get", "\(folder)/mail (2)"] + cli.unlock()).text == "pw-bob", "\(order) \(folder)")
            }
        }
    }

    @Test func test_import_URLTitleBecomesTheSiteAndKeepsTheTitle() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let csv = Self.keepassHeader + "\"Root\",\"https://news.ycombinator.com\",\"u\",\"pw\",\"\",\"\",\"\"\n"
        let result = try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0 && result.stderr.contains("renamed 'https://news.ycombinator.com' to 'news.ycombinator.com'"), "\(result.stderr)")
        #expect(try cli.run(["get", "news.ycombinator.com", "--field", "title"] + cli.unlock()).text == "https://news.ycombinator.com")
    }

    @Test func test_import_cleanedLabelKeepsItsLabelAndDryRunSaysEverything() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let input = export([login("https://news.ycombinator.com", user: "zed", password: "pw", totp: "JBSWY3DPEHPK3PXP",
                                  fields: #"{"name":"Recovery Codes!","value":"RC-1"},{"name":"username","value":"custom"}"#)])
        let before = try cli.read("t.vault")
        let dry = try cli.run(["import", "--format", "bitwarden-json", "--dry-run"] + cli.unlock(), stdin: input)
        #expect(dry.status == 0 && dry.text == "add news.ycombinator.com\n", "\(dry.stderr)")
        #expect(dry.stderr.contains("would be renamed 'https://news.ycombinator.com' to 'news.ycombinator.com'"), "\(dry.stderr)")
        #expect(dry.stderr.contains("field 'Recovery Codes!' stored as 'Recovery_Codes_'"), "\(dry.stderr)")
        #expect(dry.stderr.contains("field 'username' stored as 'username_2'"), "\(dry.stderr)")
        #expect(try cli.read("t.vault") == before, "--dry-run writes nothing")
        #expect(try cli.run(["import", "--format", "bitwarden-json"] + cli.unlock(), stdin: input).status == 0)
        #expect(try cli.run(["get", "news.ycombinator.com", "--field", "labels"] + cli.unlock()).text
            == "Recovery_Codes_\tRecovery Codes!\nusername_2\tusername\n")
    }

    // MARK: - Failure

    @Test func test_import_textThatIsNoTOTPIsKeptAndTotpExitsNonZero() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let csv = Self.keepassHeader + "\"Root\",\"m\",\"u\",\"pw\",\"\",\"\",\"not a secret!\"\n"
        let result = try cli.run(["import", "--format", "keepassxc-csv"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0 && result.stderr.contains("entry 'm': its TOTP is stored as it is"), "\(result.stderr)")
        let totp = try cli.run(["totp", "m"] + cli.unlock())
        #expect(totp.status != 0 && totp.stdout.isEmpty, "\(totp.stderr)")
    }
}
