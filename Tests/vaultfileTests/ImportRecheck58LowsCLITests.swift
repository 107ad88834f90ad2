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
}
