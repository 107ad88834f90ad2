import Foundation
import TestSupport
import Testing

/// The import naming against a hostile review (att57), through the built binary: a KeePass
/// string key with a newline and a tab makes `get --field MISSING` no other field (M3); an empty
/// `--field` is a usage error (L7); a KeePass round trip after a username changed keeps each
/// account under the name it had (M5).
@Suite struct ImportNamingReviewCLITests {
    private static func keepass(_ entries: String) -> [UInt8] {
        Array(("<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Passwords</Name>"
               + entries + "</Group></Root></KeePassFile>").utf8)
    }

    private static func entry(_ strings: [(String, String)]) -> String {
        "<Entry>" + strings.map { "<String><Key>\($0.0)</Key><Value>\($0.1)</Value></String>" }.joined() + "</Entry>"
    }

    @Test func test_get_aLabelWithNewlineAndTabNamesNoOtherField() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("k.xml", Self.keepass(Self.entry([("Title", "site"), ("UserName", "alice"), ("Password", "REALPASSWORD"),
                                                          ("a&#10;username&#9;api_key", "a")])))
        let imported = try cli.run(["import", "--format", "keepass-xml", cli.path("k.xml")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        let labels = try cli.run(["get", "site", "--field", "labels"] + cli.unlock()).text
        #expect(labels == "a_username_api_key\ta username api_key\n", "\(labels)")
        let missing = try cli.run(["get", "site", "--field", "api_key"] + cli.unlock())
        #expect(missing.status == 1 && missing.text.isEmpty, "\(missing.status) \(missing.stderr)")
        let read = try cli.run(["read", "vf://site#api_key"] + cli.unlock())
        #expect(read.status == 1, "get and read agree")
        #expect(try cli.run(["get", "site", "--field", "a_username_api_key"] + cli.unlock()).text == "a")
    }

    @Test func test_get_anEmptyFieldIsAUsageError() throws {
        let cli = try CLI.withVault(["plain": "v"]); defer { cli.directory.remove() }
        for field in ["", "   "] {
            let got = try cli.run(["get", "plain", "--field", field] + cli.unlock())
            #expect(got.status == 64 && got.stderr.contains("--field is empty"), "\(got.status) \(got.stderr)")
            let shared = try cli.run(["share", "plain", "--field", field, "--passphrase", "--out", cli.path("x.age")] + cli.unlock())
            #expect(shared.status == 64 && shared.stderr.contains("--field is empty"), "\(shared.status) \(shared.stderr)")
        }
    }

    @Test func test_export_keepassRoundTripAfterAUsernameChangeKeepsEachAccountsName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("two.xml", Self.keepass(Self.entry([("Title", "GitHub"), ("UserName", "alice"), ("Password", "ALICEPW")])
                                               + Self.entry([("Title", "GitHub"), ("UserName", "bob"), ("Password", "BOBPW")])))
        #expect(try cli.run(["import", "--format", "keepass-xml", cli.path("two.xml")] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "GitHub"] + cli.unlock()).text == "ALICEPW")
        #expect(try cli.run(["set", "GitHub", "--field", "username"] + cli.unlock(), stdin: Array("zoe".utf8)).status == 0)
        let out = try cli.run(["export", "--format", "keepass-xml", "--out", cli.path("rt.xml")] + cli.unlock())
        #expect(out.status == 0, "\(out.stderr)")
        try cli.initVault("v2.vault")
        let again = try cli.run(["import", "--format", "keepass-xml", cli.path("rt.xml")] + cli.unlock("v2.vault"))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try cli.run(["get", "GitHub"] + cli.unlock("v2.vault")).text == "ALICEPW")
        #expect(try cli.run(["get", "GitHub (2)"] + cli.unlock("v2.vault")).text == "BOBPW")
    }
}
