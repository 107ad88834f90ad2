import Foundation
import TestSupport
import Testing

/// The low findings of reviews 58 on moving in (issue 44), through the built binary: a custom
/// field named like a passkey member goes back to Bitwarden as a custom field (recheck58 N7);
/// 1pux and Enpass dates, months and references converted (cold58 L9); KeePass's protected
/// strings kept as protected (cold58 L10).
@Suite struct ImportRecheck58LowsCLITests {
    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> String {
        try cli.run(["get", name, "--field", field] + cli.unlock()).text
    }

    /// The items of a Bitwarden JSON export, by name, and the export's bytes.
    private func exported(_ cli: CLI) throws -> (items: [String: [String: Any]], bytes: [UInt8]) {
        let written = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        #expect(written.status == 0, "\(written.stderr)")
        let items = try jsonObject(written.stdout)["items"] as? [[String: Any]] ?? []
        return (Dictionary(items.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }, written.stdout)
    }

    /// An item's custom fields as name → value.
    private func customFields(_ item: [String: Any]?) -> [String: String] {
        let list = item?["fields"] as? [[String: Any]] ?? []
        return Dictionary(list.compactMap { field in (field["name"] as? String).map { ($0, field["value"] as? String ?? "") } }) { first, _ in first }
    }

    // MARK: - Custom fields named like passkey members (recheck58 N7)

    @Test func test_exportBitwardenJSON_givesCustomFieldsNamedLikePasskeyMembersBackAsCustomFields() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,X,,"passkey.rpId: evil.example
            passkey.keyValue: K
            passkey2.credentialId: c",0,https://x.example,amy,pw-x,

            """))
        let imported = try cli.run(["import", cli.path("bw.csv")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try field(cli, "X", "passkey.rpId_2") == "evil.example" && field(cli, "X", "passkey2.credentialId_2") == "c")
        let (items, first) = try exported(cli)
        let login = try #require(items["X"]?["login"] as? [String: Any])
        #expect((login["fido2Credentials"] as? [Any])?.isEmpty == true, "no passkey made of custom fields: \(login)")
        #expect(customFields(items["X"]) == ["passkey.rpId": "evil.example", "passkey.keyValue": "K", "passkey2.credentialId": "c"],
                "\(customFields(items["X"]))")
        // Bitwarden JSON → vaultfile → Bitwarden JSON: the same fields under the same names.
        try cli.write("again.json", first)
        let again = try CLI.withVault([:]); defer { again.directory.remove() }
        #expect(try again.run(["import", cli.path("again.json")] + again.unlock()).status == 0)
        #expect(try field(again, "X", "passkey.keyValue_2") == "K")
        #expect(customFields(try exported(again).items["X"]) == customFields(items["X"]))
    }

    @Test func test_exportBitwardenJSON_keepsARealPasskeyBesideACustomFieldOfAMembersName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes("""
            {"encrypted": false, "folders": [], "items": [{"id": "i1", "type": 1, "name": "GitHub", "notes": null, \
            "fields": [{"name": "passkey.rpId", "value": "custom", "type": 0, "linkedId": null}], \
            "login": {"username": "alice", "password": "pw", "totp": null, "uris": [], \
            "fido2Credentials": [{"credentialId": "cid-1", "keyType": "public-key", "keyAlgorithm": "ECDSA", "keyCurve": "P-256", \
            "keyValue": "PRIVATE", "rpId": "github.com", "userHandle": "uh", "userName": "alice", "counter": "0", \
            "rpName": "GitHub", "userDisplayName": "Alice", "discoverable": "true", "creationDate": "2024-02-01T00:00:00.000Z"}]}}]}
            """))
        #expect(try cli.run(["import", cli.path("bw.json")] + cli.unlock()).status == 0)
        #expect(try field(cli, "GitHub", "passkey.rpId") == "github.com" && field(cli, "GitHub", "passkey.rpId_2") == "custom")
        let github = try exported(cli).items["GitHub"]
        let passkeys = try #require((github?["login"] as? [String: Any])?["fido2Credentials"] as? [[String: String]])
        #expect(passkeys.count == 1 && passkeys[0]["rpId"] == "github.com" && passkeys[0].count == 13, "\(passkeys)")
        #expect(customFields(github) == ["passkey.rpId": "custom"], "\(customFields(github))")
    }

    // MARK: - 1pux values (cold58 L9)

    /// A 1pux of `export` (the text of export.data), written by Python's zipfile (apart from vaultfile's reader).
    private func writeOnePUX(_ cli: CLI, _ name: String, export: String) throws {
        try cli.write("export.data", bytes(export))
        let made = try cli.shell("python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], \"w\", zipfile.ZIP_DEFLATED); "
                                 + "z.write(sys.argv[2], \"export.data\"); z.close()' \(name) export.data")
        #expect(made.status == 0, "\(made.stderr)")
    }

    /// An item of a 1pux's vault: its uuid, title, password and section fields (`{"title", "value": {KIND: …}}` each).
    private static func item(_ uuid: String, _ title: String, _ fields: [String] = []) -> String {
        """
        {"uuid": "\(uuid)", "createdAt": 1600000000, "updatedAt": 1600000000, "state": "active", "categoryUuid": "001", \
        "overview": {"title": "\(title)"}, "details": {"loginFields": [], "password": "pw-\(uuid)", \
        "sections": [{"title": "", "fields": [\(fields.joined(separator: ", "))]}]}}
        """
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed: skipped"))
    func test_import_1puxDatesMonthsAndReferencesAreConverted() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        // The card names the bank login after it (read whole: the reference is to an item still to
        // come), and an item the export does not hold.
        let card = Self.item("C1", "Card", [
            #"{"title": "issued", "id": "i", "value": {"date": 946684800}}"#,
            #"{"title": "expiry", "id": "e", "value": {"monthYear": 203012}}"#,
            #"{"title": "login", "id": "l", "value": {"reference": "B1"}}"#,
            #"{"title": "gone", "id": "g", "value": {"reference": "NOPE"}}"#,
            #"{"title": "odd", "id": "o", "value": {"monthYear": 203013}}"#,
        ])
        try writeOnePUX(cli, "one.1pux", export: """
            {"accounts": [{"attrs": {"accountName": "me"}, "vaults": [{"attrs": {"name": "Personal"}, "items": [\(card), \(Self.item("B1", "Bank / Login"))]}]}]}
            """)
        let imported = try cli.run(["import", "--prefix", "moved", cli.path("one.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try field(cli, "moved/Card", "issued") == "2000-01-01" && field(cli, "moved/Card", "expiry") == "2030-12")
        // The entry's name, as the import made it (cleaned, under the prefix).
        #expect(try field(cli, "moved/Card", "login") == "moved/Bank - Login")
        #expect(try field(cli, "moved/Card", "gone") == "NOPE" && field(cli, "moved/Card", "odd") == "203013")
        #expect(imported.stderr.contains("not kept: 1Password references to items the export does not hold (the item's id kept as the value), 1 reference in 1 item"),
                "\(imported.stderr)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed: skipped"))
    func test_import_1puxHistoryKeepsEachPasswordsOwnDateAndUnknownKeysAreNamed() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        // Replaced on 2023-06-01 (oldest) and 2024-03-01; a passkey under a key this reader does not know.
        let item = """
            {"uuid": "G1", "createdAt": 1672531200, "updatedAt": 1714521600, "state": "active", "categoryUuid": "001", "newThing": 1, \
            "overview": {"title": "GitHub"}, "details": {"loginFields": [], "password": "now-pw", "passkey": {"rpId": "github.com"}, \
            "passwordHistory": [{"value": "newer-old", "time": 1709251200}, {"value": "oldest", "time": 1685577600}]}}
            """
        try writeOnePUX(cli, "h.1pux", export: #"{"accounts": [{"attrs": {}, "vaults": [{"attrs": {"name": "V"}, "items": ["# + item + "]}]}]}")
        let imported = try cli.run(["import", cli.path("h.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("not kept: unknown key 'newThing' of 1Password items, in 1 item"), "\(imported.stderr)")
        #expect(imported.stderr.contains("not kept: unknown key 'details.passkey' of 1Password items, in 1 item"), "\(imported.stderr)")
        let history = try cli.run(["history", "GitHub"] + cli.unlock())
        let lines = history.text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("1 ") && $0.contains("replaced 2024-03-01") }, "\(history.text)")
        #expect(lines.contains { $0.hasPrefix("2 ") && $0.contains("replaced 2023-06-01") }, "\(history.text)")
        #expect(try cli.run(["get", "GitHub", "--revision", "2"] + cli.unlock()).text == "oldest")
    }

    @Test func test_import_enpassUnknownItemKeysAreNamed() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("e.json", bytes("""
            {"folders": [], "items": [{"uuid": "u1", "title": "Mail", "note": "", "createdAt": 1600000000, "updated_at": 1600000000, \
            "trashed": 0, "archived": 0, "favorite": 0, "category": "login", "icon": {}, "some_new_key": true, \
            "fields": [{"type": "password", "label": "Password", "value": "pw", "sensitive": 1, "deleted": 0}]}]}
            """))
        let imported = try cli.run(["import", "--format", "enpass-json", cli.path("e.json")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("not kept: unknown key 'some_new_key' of Enpass items, in 1 item"), "\(imported.stderr)")
        #expect(!imported.stderr.contains("'icon'") && !imported.stderr.contains("'uuid'"), "\(imported.stderr)")
    }

    // MARK: - KeePass's protected strings (cold58 L10)

    private static let keepassXML = """
        <?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>test</Generator></Meta><Root><Group><Name>Root</Name>
        <Entry><String><Key>Title</Key><Value>Router</Value></String><String><Key>Password</Key><Value ProtectInMemory="True">pw</Value></String>
        <String><Key>PIN</Key><Value ProtectInMemory="True">1234</Value></String><String><Key>Port</Key><Value>8443</Value></String></Entry>
        <Entry><String><Key>Title</Key><Value>Safe</Value></String><String><Key>PIN</Key><Value ProtectInMemory="True">9</Value></String></Entry>
        </Group></Root></KeePassFile>
        """

    @Test func test_import_keepassXMLNamesTheUnprotectedMarkOfCustomStrings() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("kp.xml", bytes(Self.keepassXML))
        let imported = try cli.run(["import", cli.path("kp.xml")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("not kept: KeePass's unprotected mark of custom strings (the kdbx and keepass-xml exports protect every custom string), in 1 item"),
                "\(imported.stderr)")
        #expect(try field(cli, "Router", "Port") == "8443" && field(cli, "Router", "PIN") == "1234")
    }

    @Test func test_import_kdbxMadeByKeePassXCNamesTheUnprotectedMarkOfCustomStrings() throws {
        guard let tool = ExternalTools.KDBXImportCLITests.keepassxc else { print(ExternalTools.KDBXImportCLITests.skipped); return }
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("seed.xml", bytes(Self.keepassXML))
        try cli.write("kpw", bytes("pw"))
        let made = try ExternalTools.KDBXImportCLITests.keepass(cli, tool, "printf 'pw\\npw\\n' | $KP import -q -p -t 100 seed.xml kp.kdbx")
        #expect(made.status == 0, "\(made.stderr)")
        let imported = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("kpw"), cli.path("kp.kdbx")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("not kept: KeePass's unprotected mark of custom strings"), "\(imported.stderr)")
        #expect(imported.stderr.contains("in 1 item"), "only Router has one: \(imported.stderr)")
    }
}
