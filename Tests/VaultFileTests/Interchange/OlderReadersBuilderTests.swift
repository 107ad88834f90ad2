import Foundation
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// The two older readers (keepassxc-csv, bitwarden-json) follow the builder's rules (issue 44,
/// "Nothing lost, every loss said"): each rule on both readers, and both readers against the
/// builder itself on the landed fixtures.
@Suite struct OlderReadersBuilderTests {
    private func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private static let keepassHeader = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n"

    /// A KeePassXC CSV of rows (group, title, username, password, url, totp).
    private func keepass(_ rows: [(String, String, String, String, String, String)]) -> [UInt8] {
        bytes(Self.keepassHeader + rows.map { "\"\($0.0)\",\"\($0.1)\",\"\($0.2)\",\"\($0.3)\",\"\($0.4)\",\"\",\"\($0.5)\",\"0\",\"\",\"\"\n" }.joined())
    }

    /// A Bitwarden export of logins (name, username, password, uri, totp, custom fields as JSON).
    private func bitwarden(_ items: [(String, String, String, String, String, String)]) -> [UInt8] {
        let list = items.map { item in
            #"{"type":1,"name":"\#(item.0)","login":{"username":"\#(item.1)","password":"\#(item.2)","totp":"\#(item.4)","uris":[{"uri":"\#(item.3)"}]},"fields":[\#(item.5)]}"#
        }
        return bytes(#"{"encrypted":false,"folders":[],"items":[\#(list.joined(separator: ","))]}"#)
    }

    private func read(_ input: [UInt8], _ format: InterchangeFormat) throws -> ImportedEntries {
        try Interchange.read(input, format: format, now: 1_700_000_000_000)
    }

    private func found(_ imported: ImportedEntries, _ name: String) -> Entry? {
        imported.entries.first { $0.name == name }?.entry
    }

    // MARK: - Success

    @Test func test_bitwardenRead_keepsTheLoginBesideACustomUsernameField() throws {
        let imported = try read(bitwarden([("site", "zed", "pw", "", "", #"{"name":"username","value":"custom","type":0}"#)]), .bitwardenJSON)
        let site = try #require(found(imported, "site"))
        #expect(text(site.fields["username"]) == "zed")
        #expect(text(site.fields["username_2"]) == "custom")
        #expect(text(site.fields["labels"]) == "username_2\tusername\n")
        #expect(imported.warnings.contains { if case .fieldRenamed(let label, let field, _, _, .reserved) = $0 { return label == "username" && field == "username_2" } else { return false } })
    }

    @Test func test_keepassRead_makesABareBase32SecretAWorkingURI() throws {
        let imported = try read(keepass([("Root", "mail", "ann", "pw", "", "JBSWY3DPEHPK3PXP")]), .keepassxcCSV)
        let totp = try #require(text(found(imported, "mail")?.fields["totp"]))
        #expect(totp == "otpauth://totp/ann?secret=JBSWY3DPEHPK3PXP")
        #expect(throws: Never.self) { _ = try TOTPParameters(uri: Array(totp.utf8)) }
    }

    @Test func test_bitwardenRead_makesBase32AndSteamSecretsWorkingURIs() throws {
        let imported = try read(bitwarden([("a", "ann", "pw", "", "jbsw y3dp ehpk 3pxp", ""), ("s", "sam", "pw", "", "steam://JBSWY3DPEHPK3PXP", "")]), .bitwardenJSON)
        #expect(text(found(imported, "a")?.fields["totp"]) == "otpauth://totp/ann?secret=JBSWY3DPEHPK3PXP")
        let steam = try #require(text(found(imported, "s")?.fields["totp"]))
        #expect(steam.hasPrefix("otpauth://totp/Steam%3Asam?") || steam.hasPrefix("otpauth://totp/Steam:sam?"), "\(steam)")
        #expect(steam.contains("encoder=steam"))
        #expect(throws: Never.self) { _ = try TOTPParameters(uri: Array(steam.utf8)) }
    }

    @Test func test_bothReaders_numberRepeatedTitlesByUsernameNotFileOrder() throws {
        let forward = [("Root", "mail", "bob", "b-pw", "", ""), ("Root", "mail", "ann", "a-pw", "", "")]
        for rows in [forward, forward.reversed()] {
            let imported = try read(keepass(rows), .keepassxcCSV)
            #expect(text(found(imported, "mail")?.fields["username"]) == "ann")
            #expect(text(found(imported, "mail (2)")?.fields["username"]) == "bob")
            let logins = rows.map { ($0.1, $0.2, $0.3, "", "", "") }
            let fromBitwarden = try read(bitwarden(logins), .bitwardenJSON)
            #expect(text(found(fromBitwarden, "mail")?.fields["username"]) == "ann")
            #expect(text(found(fromBitwarden, "mail (2)")?.fields["username"]) == "bob")
        }
    }

    @Test func test_bothReaders_nameAURLTitleAfterItsSiteAndKeepTheTitle() throws {
        let fromKeePass = try read(keepass([("Root", "https://news.ycombinator.com", "u", "pw", "", "")]), .keepassxcCSV)
        let fromBitwarden = try read(bitwarden([("https://news.ycombinator.com", "u", "pw", "", "", "")]), .bitwardenJSON)
        for imported in [fromKeePass, fromBitwarden] {
            #expect(imported.names == ["news.ycombinator.com"])
            #expect(text(found(imported, "news.ycombinator.com")?.fields["title"]) == "https://news.ycombinator.com")
            #expect(imported.renamings.first?.reasons.contains(.titleKept) == true)
        }
    }

    @Test func test_bitwardenRead_keepsACleanedLabelInTheFieldLabels() throws {
        let imported = try read(bitwarden([("site", "u", "pw", "", "", #"{"name":"Recovery Codes!","value":"RC-1"}"#)]), .bitwardenJSON)
        let site = try #require(found(imported, "site"))
        #expect(text(site.fields["Recovery_Codes_"]) == "RC-1")
        #expect(text(site.fields["labels"]) == "Recovery_Codes_\tRecovery Codes!\n")
        #expect(imported.warnings.contains { if case .fieldRenamed(_, "Recovery_Codes_", 1, "site", .cleaned) = $0 { return true } else { return false } })
    }

    @Test func test_bitwardenRead_keepsEveryURI() throws {
        let export = #"{"items":[{"type":1,"name":"s","login":{"password":"p","uris":[{"uri":"https://a.example"},{"uri":"https://b.example"}]}}]}"#
        let entry = try #require(found(try read(bytes(export), .bitwardenJSON), "s"))
        #expect(text(entry.fields["url"]) == "https://a.example" && text(entry.fields["url2"]) == "https://b.example")
    }

    @Test func test_bothReaders_readTheLandedFixturesByTheBuildersRules() throws {
        func fixture(_ file: String) throws -> [UInt8] { Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent(file))) }
        let bitwarden = try read(try fixture("interchange/bitwarden.json"), .bitwardenJSON)
        #expect(Set(bitwarden.names) == ["Work/Jira", "Work/Jira (2)", "Wifi", "Finance/Cards/Visa", "Me"])
        #expect(text(found(bitwarden, "Work/Jira")?.fields["username"]) == "alice")
        #expect(text(found(bitwarden, "Work/Jira (2)")?.fields["totp"]) == "otpauth://totp/alice-admin?secret=JBSWY3DPEHPK3PXP")
        #expect(text(found(bitwarden, "Work/Jira")?.fields["Recovery_code"]) == "RC-1234")
        #expect(text(found(bitwarden, "Work/Jira")?.fields["labels"]) == "Recovery_code\tRecovery code\n")
        let keepass = try read(try fixture("interchange/keepassxc.csv"), .keepassxcCSV)
        #expect(Set(keepass.names) == ["GitHub", "Work/Servers/db01", "Work/GitHub", "Work/GitHub (2)"])
        #expect(text(found(keepass, "Work/GitHub (2)")?.fields["username"]) == "work-octo-2")
        #expect(found(keepass, "GitHub")?.created == 1_673_769_600_000)
    }

    @Test func test_bitwardenRead_keepsPasswordHistoryAndFavouriteAndCountsARePrompt() throws {
        let export = #"{"items":[{"type":1,"name":"s","favorite":true,"reprompt":1,"login":{"password":"new"},"#
            + #""passwordHistory":[{"lastUsedDate":"2024-02-01T00:00:00.000Z","password":"second"},{"lastUsedDate":"2024-01-01T00:00:00.000Z","password":"first"}]}]}"#
        let kept = try Interchange.read(bytes(export), format: .bitwardenJSON, now: 1, options: ForeignBuildOptions(keepsHistory: true))
        let versions = try #require(kept.history?.first { $0.name == "s" }?.versions)
        #expect(versions.map { text($0.entry.value) } == ["second", "first"], "newest first")
        #expect(text(found(kept, "s")?.fields["favorite"]) == "yes")
        #expect(kept.warnings.contains(.notKept(what: "Bitwarden's master-password re-prompt", count: 1, reason: .noPlace)))
        let dropped = try read(bytes(export), .bitwardenJSON)
        #expect(dropped.warnings.contains(.historyNotKept(versions: 2, entries: 1)))
    }

    // MARK: - Failure

    @Test func test_keepassRead_refusesAHeaderWithoutTitleOrPassword() {
        #expect(throws: VaultError.malformedInput("line 1: not a KeePassXC CSV export (no Title and Password columns)")) {
            _ = try Interchange.read(Array("Group,Name\nRoot,x\n".utf8), format: .keepassxcCSV, now: 0)
        }
    }

    @Test func test_bitwardenRead_refusesAnUnknownItemType() {
        #expect(throws: VaultError.self) { _ = try Interchange.read(Array(#"{"items":[{"type":9,"name":"x"}]}"#.utf8), format: .bitwardenJSON, now: 0) }
    }

    // MARK: - Edge cases

    @Test func test_keepassRead_keepsTextThatIsNoSecretWithAWarning() throws {
        let imported = try read(keepass([("Root", "m", "u", "pw", "", "not a secret!")]), .keepassxcCSV)
        #expect(text(found(imported, "m")?.fields["totp"]) == "not a secret!")
        #expect(imported.warnings.contains { if case .totpUnusable(name: "m", _) = $0 { return true } else { return false } })
    }

    @Test func test_keepassRead_countsAnIconOtherThanTheDefaultAsNotKept() throws {
        let csv = Self.keepassHeader + "\"Root\",\"a\",\"\",\"p\",\"\",\"\",\"\",\"12\",\"\",\"\"\n\"Root\",\"b\",\"\",\"p\",\"\",\"\",\"\",\"0\",\"\",\"\"\n"
        #expect(try read(bytes(csv), .keepassxcCSV).warnings.contains(.notKept(what: "KeePassXC's entry icons", count: 1, reason: .noPlace)))
    }

    @Test func test_bothReaders_neverClashANumberedTitleWithALiteral() throws {
        let imported = try read(keepass([("Root", "t", "a", "p", "", ""), ("Root", "t (2)", "b", "p", "", ""), ("Root", "t", "c", "p", "", "")]), .keepassxcCSV)
        #expect(Set(imported.names) == ["t", "t (2)", "t (3)"])
        #expect(text(found(imported, "t (2)")?.fields["username"]) == "b")
    }
}
