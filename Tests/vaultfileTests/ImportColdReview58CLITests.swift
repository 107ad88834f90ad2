import Foundation
import TestSupport
import Testing

/// Cold review 58's findings on moving in (issue 44), through the built binary: Bitwarden
/// passkeys kept and exported back, unknown keys named; earlier passwords that keep the item's
/// fields and their own dates (`history`, `restore`, the export's `lastUsedDate`); Dashlane's
/// secure notes and other files; refusals that name the file, the line and the right command; an
/// item without a title listed with the renamed ones.
@Suite struct ImportColdReview58CLITests {
    private func field(_ cli: CLI, _ name: String, _ field: String, revision: Int? = nil) throws -> String {
        try cli.run(["get", name, "--field", field] + (revision.map { ["--revision", String($0)] } ?? []) + cli.unlock()).text
    }

    /// The items of a Bitwarden JSON export on stdout.
    private func exportedItems(_ cli: CLI) throws -> [[String: Any]] {
        let written = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        #expect(written.status == 0, "\(written.stderr)")
        return try jsonObject(written.stdout)["items"] as? [[String: Any]] ?? []
    }

    private static let github = """
        {"encrypted": false, "folders": [], "items": [{"id": "i1", "type": 1, "name": "GitHub", "newThing": "x", \
        "notes": "n", "fields": [{"name": "Recovery", "value": "r1", "type": 1, "linkedId": null}], \
        "login": {"username": "alice", "password": "now-pw", "totp": "JBSWY3DPEHPK3PXP", "passwordRevisionDate": "2024-05-01T00:00:00.000Z", \
        "uris": [{"uri": "https://github.com", "match": null}], \
        "fido2Credentials": [{"credentialId": "cid-1", "keyType": "public-key", "keyAlgorithm": "ECDSA", "keyCurve": "P-256", \
        "keyValue": "SECRET-PASSKEY-PRIVATE", "rpId": "github.com", "userHandle": "uh", "userName": "alice", "counter": "3", \
        "rpName": "GitHub", "userDisplayName": "Alice", "discoverable": "true", "creationDate": "2024-02-01T00:00:00.000Z"}]}, \
        "passwordHistory": [{"password": "newer-old", "lastUsedDate": "2024-03-01T00:00:00.000Z"}, \
        {"password": "oldest", "lastUsedDate": "2023-06-01T00:00:00.000Z"}], \
        "revisionDate": "2024-05-01T00:00:00.000Z", "creationDate": "2023-01-01T00:00:00.000Z"}]}
        """

    // MARK: - Bitwarden: passkeys and unknown keys (H1, L2)

    @Test func test_import_bitwardenPasskeysAreKeptAndExportedBackAndUnknownKeysNamed() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes(Self.github))
        let result = try cli.run(["import", cli.path("bw.json")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try field(cli, "GitHub", "passkey.rpId") == "github.com" && field(cli, "GitHub", "passkey.keyValue") == "SECRET-PASSKEY-PRIVATE")
        #expect(!result.stderr.contains("SECRET-PASSKEY"), "the private key is never printed")
        #expect(result.stderr.contains("not kept: unknown key 'newThing' of Bitwarden items, in 1 item"), "\(result.stderr)")
        #expect(result.stderr.contains("unknown key 'login.passwordRevisionDate' of Bitwarden items"), "\(result.stderr)")
        let items = try exportedItems(cli)
        let login = try #require(items.first?["login"] as? [String: Any])
        let passkeys = try #require(login["fido2Credentials"] as? [[String: String]])
        #expect(passkeys.count == 1 && passkeys[0]["keyValue"] == "SECRET-PASSKEY-PRIVATE" && passkeys[0]["rpId"] == "github.com")
        #expect(passkeys[0].count == 13 && passkeys[0]["counter"] == "3", "\(passkeys)")
        let custom = (items.first?["fields"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(!custom.contains { $0.hasPrefix("passkey") }, "\(custom)")
    }

    // MARK: - Earlier passwords (M1, L1)

    @Test func test_import_bitwardenHistoryKeepsTheItemsFieldsAndTheirOwnDates() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        try cli.write("bw.json", bytes(Self.github))
        #expect(try cli.run(["import", cli.path("bw.json")] + cli.unlock()).status == 0)
        let history = try cli.run(["history", "GitHub"] + cli.unlock())
        #expect(history.status == 0, "\(history.stderr)")
        let lines = history.text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("1 ") && $0.contains("replaced 2024-03-01") }, "\(history.text)")
        #expect(lines.contains { $0.hasPrefix("2 ") && $0.contains("replaced 2023-06-01") }, "\(history.text)")
        #expect(!history.text.contains("(added)"), "the other fields were there all along: \(history.text)")
        #expect(try field(cli, "GitHub", "username", revision: 1) == "alice" && field(cli, "GitHub", "url", revision: 2) == "https://github.com")
        // The export gives each earlier password its own date back (INTERCHANGE.md's table).
        let versions = try #require(try exportedItems(cli).first?["passwordHistory"] as? [[String: Any]])
        #expect(versions.compactMap { $0["password"] as? String } == ["newer-old", "oldest"])
        #expect(versions.compactMap { $0["lastUsedDate"] as? String } == ["2024-03-01T00:00:00.000Z", "2023-06-01T00:00:00.000Z"], "\(versions)")
        // Restoring an earlier password keeps the other fields.
        #expect(try cli.run(["restore", "GitHub", "--revision", "1"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "GitHub"] + cli.unlock()).text == "newer-old")
        #expect(try field(cli, "GitHub", "username") == "alice" && field(cli, "GitHub", "notes") == "n" && field(cli, "GitHub", "passkey.rpId") == "github.com")
    }

    // MARK: - Dashlane's files (M4)

    @Test func test_import_dashlaneSecureNotesAndPaymentsAreReadByTheirHeaders() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("securenotes.csv", bytes("title,note\nWifi,the wifi password is x\n"))
        for format in [[], ["--format", "dashlane-csv"]] {
            let result = try cli.run(["import", "--overwrite"] + format + [cli.path("securenotes.csv")] + cli.unlock())
            #expect(result.status == 0, "\(format): \(result.stderr)")
            #expect(try names(cli) == ["Wifi"], "the header is no entry")
            #expect(try field(cli, "Wifi", "notes") == "the wifi password is x")
            #expect(try cli.run(["get", "Wifi", "--field", "url"] + cli.unlock()).status != 0, "the note is no URL")
        }
        try cli.write("payments.csv", bytes("type,account_name,account_holder,cc_number,code,expiration_month,expiration_year\n"
                                            + "payment_card,My Visa,Jo,4111111111111111,123,12,2030\n"))
        #expect(try cli.run(["import", cli.path("payments.csv")] + cli.unlock()).status == 0)
        #expect(try field(cli, "My Visa", "cc_number") == "4111111111111111" && field(cli, "My Visa", "expiration_year") == "2030")
    }

    // MARK: - Refusals that say where and what to do (L3)

    @Test func test_import_refusalsNameTheFileTheLineAndTheWayOut() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("enc.json", bytes("{\"encrypted\": true, \"passwordProtected\": true, \"salt\": \"s\", \"kdfType\": 0, \"kdfIterations\": 600000, \"data\": \"2.abc\"}"))
        let encrypted = try cli.run(["import", cli.path("enc.json")] + cli.unlock())
        #expect(encrypted.status != 0 && encrypted.stderr.contains("encrypted") && encrypted.stderr.contains("unencrypted JSON"), "\(encrypted.stderr)")
        // Latin-1: the file, the line, nothing imported, and the conversion.
        try cli.write("latin.csv", bytes("name,url,username,password\nok,https://a.example,u,p\n") + Array("caf".utf8) + [0xE9] + bytes(",https://b.example,u,p\n"))
        let latin = try cli.run(["import", "--format", "chrome-csv", cli.path("latin.csv")] + cli.unlock())
        #expect(latin.status != 0 && latin.stderr.contains(cli.path("latin.csv")) && latin.stderr.contains("line 3"), "\(latin.stderr)")
        #expect(latin.stderr.contains("nothing was imported") && latin.stderr.contains("iconv -f WINDOWS-1252 -t UTF-8"), "\(latin.stderr)")
        try cli.write("open.csv", bytes("name,url,username,password\n\"never closed,u,p\n"))
        let open = try cli.run(["import", "--format", "chrome-csv", cli.path("open.csv")] + cli.unlock())
        #expect(open.stderr.contains(cli.path("open.csv")) && open.stderr.contains("line 2") && open.stderr.contains("nothing was imported"), "\(open.stderr)")
        // Dashlane's headerless form given as Chrome's: the right format is named.
        try cli.write("dl.csv", bytes("Wifi,https://w.example,me,pw,note\n"))
        let dashlane = try cli.run(["import", "--format", "chrome-csv", cli.path("dl.csv")] + cli.unlock())
        #expect(dashlane.status != 0 && dashlane.stderr.contains("--format dashlane-csv"), "\(dashlane.stderr)")
        #expect(try names(cli).isEmpty)
    }

    // MARK: - An item named after its site is listed (L8)

    @Test func test_import_aChromeRowWithoutANameIsListedAsNamedAfterItsSite() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password\n,https://noname.example,u,p\nPlain,https://p.example,v,q\n"))
        let result = try cli.run(["import", "--format", "chrome-csv", cli.path("c.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("named an item without a title 'noname.example' after its site noname.example\n"), "\(result.stderr)")
        #expect(!result.stderr.contains("Plain"), "\(result.stderr)")
    }
}
