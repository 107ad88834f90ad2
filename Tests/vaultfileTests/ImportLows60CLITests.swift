import Foundation
import TestSupport
import Testing

/// The low findings of att60, recheck60 and cold60 on names, dates and messages of `import`
/// (issue 44), through the built binary: names too long shortened (att60 F6); 1pux references
/// counted as references, odd dates kept as written and said (att60 F8, recheck60 R10); a passkey
/// member named `…_N` kept a member (recheck60 R8); a URL without a scheme named in rename lines
/// (cold60 L9); `get --field` of a name that is also another field's label (cold60 L2); a 1pux
/// whose export.data lies past the first 64 KiB recognised (the central directory).
@Suite struct ImportLows60CLITests {
    private static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
        try cli.run(["get", name, "--field", field] + cli.unlock())
    }

    /// A 1pux of `export` (export.data's text), written by Python's zipfile; `before`: bytes of a
    /// file stored ahead of export.data (random: not compressed away).
    func writeOnePUX(_ cli: CLI, _ name: String, export: String, before: Int = 0) throws {
        try cli.write("export.data", bytes(export))
        let made = try cli.shell("python3 -c 'import os, sys, zipfile; z = zipfile.ZipFile(sys.argv[1], \"w\", zipfile.ZIP_DEFLATED); "
                                 + "n = int(sys.argv[3]); n and z.writestr(\"files/pad__pad.bin\", os.urandom(n)); "
                                 + "z.write(sys.argv[2], \"export.data\"); z.close()' \(name) export.data \(before)")
        #expect(made.status == 0, "\(made.stderr)")
    }

    static func item(_ uuid: String, _ title: String, _ fields: [String] = []) -> String {
        """
        {"uuid": "\(uuid)", "createdAt": 1600000000, "updatedAt": 1600000000, "state": "active", "categoryUuid": "001", \
        "overview": {"title": "\(title)"}, "details": {"loginFields": [], "password": "pw-\(uuid)", \
        "sections": [{"title": "", "fields": [\(fields.joined(separator: ", "))]}]}}
        """
    }

    static func export(_ items: [String]) -> String {
        #"{"accounts": [{"attrs": {"accountName": "me"}, "vaults": [{"attrs": {"name": "Personal"}, "items": ["#
            + items.joined(separator: ", ") + "]}]}]}"
    }

    // MARK: - att60 F6: names too long

    @Test func test_import_longTitlesAreShortenedNotRefused() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let long = String(repeating: "L", count: 1100), twin = String(repeating: "T", count: 1022)
        let folder = String(repeating: "F", count: 600), title = String(repeating: "G", count: 500)
        try cli.write("long.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,a,,,0,,,pw-a,
            ,,login,\(long),,,0,,,pw-long,
            ,,login,b,,,0,,,pw-b,
            \(folder),,login,\(title),,,0,,,pw-folder,
            ,,login,\(twin),,,0,,amy,pw-twin1,
            ,,login,\(twin),,,0,,zed,pw-twin2,

            """))
        let imported = try cli.run(["import", "--json", "--format", "bitwarden-csv", cli.path("long.csv")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        let all = try names(cli)
        #expect(all.count == 6 && all.allSatisfy { $0.utf8.count <= 1024 }, "\(all.map(\.utf8.count))")
        // Cut to the name limit; a numbered name only as far as its number needs (att62 F8).
        let cut = String(repeating: "L", count: 1024)
        #expect(try cli.run(["get", cut] + cli.unlock()).text == "pw-long")
        #expect(try field(cli, cut, "title").text == long, "the title stays in the field 'title'")
        #expect(try cli.run(["get", twin] + cli.unlock()).text == "pw-twin1", "1,022 bytes fit: not cut")
        #expect(try cli.run(["get", String(repeating: "T", count: 1020) + " (2)"] + cli.unlock()).text == "pw-twin2")
        #expect(all.contains { $0.hasPrefix(folder + "/GGG") })
        let json = try jsonObject(imported.stdout)
        let renamed = json["renamed"] as? [[String: Any]] ?? []
        #expect(renamed.filter { ($0["reasons"] as? [String] ?? []).contains("shortened") }.count == 3, "\(renamed.map { $0["reasons"] ?? "" })")
        #expect(imported.stderr.contains("too long for a name: cut short"), "\(imported.stderr)")
        // Exported again, the whole title comes back.
        let written = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        let items = try jsonObject(written.stdout)["items"] as? [[String: Any]] ?? []
        #expect(items.contains { $0["name"] as? String == long }, "the exported title is the whole one")
    }

    @Test func test_import_nativeNameTooLongIsBadInputNamingTheLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let long = String(repeating: "n", count: 1100)
        try cli.write("long.csv", bytes("name,value\nok,1\n\(long),2\n"))
        try cli.write("long.json", bytes(#"{"vaultfile_export": 1, "entries": [{"name": "ok", "value": "1"}, {"name": ""# + long + #"", "value": "2"}]}"#))
        for (file, format) in [("long.csv", "csv"), ("long.json", "json")] {
            let result = try cli.run(["import", "--format", format, cli.path(file)] + cli.unlock())
            #expect(result.status == 2, "\(file): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("1100"), "\(file): \(result.stderr)")
            #expect(result.stderr.contains("line ") || result.stderr.contains("entry "), "\(file): \(result.stderr)")
        }
        #expect(try names(cli).isEmpty)
    }

    // MARK: - att60 F8, recheck60 R10: 1pux references and dates

    @Test(.enabled(if: python, "python3 is not installed: skipped"))
    func test_import_1puxCountsReferencesAndKeepsOddDatesAsWritten() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let a = Self.item("A1", "A", [#"{"title": "r1", "id": "x", "value": {"reference": "GONE1"}}"#,
                                      #"{"title": "r2", "id": "y", "value": {"reference": "GONE2"}}"#,
                                      #"{"title": "half", "id": "h", "value": {"date": 1.5}}"#,
                                      #"{"title": "huge", "id": "u", "value": {"date": 1e20}}"#])
        let b = Self.item("B1", "B", [#"{"title": "y10k", "id": "k", "value": {"date": 253402300800}}"#,
                                      #"{"title": "month", "id": "m", "value": {"monthYear": 203013}}"#,
                                      #"{"title": "fine", "id": "f", "value": {"date": 946684800}}"#])
        try writeOnePUX(cli, "odd.1pux", export: Self.export([a, b]))
        let imported = try cli.run(["import", "--json", cli.path("odd.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("the export does not hold (the item's id kept as the value), 2 references in 1 item ('A')"), "\(imported.stderr)")
        #expect(try field(cli, "A", "half").text == "1.5" && field(cli, "A", "huge").text == "1e20")
        #expect(try field(cli, "B", "y10k").text == "253402300800" && field(cli, "B", "month").text == "203013" && field(cli, "B", "fine").text == "2000-01-01")
        #expect(imported.stderr.contains("4 dates of 1Password are no date it shows"), "\(imported.stderr)")
        #expect(imported.stderr.contains("kept as written, in 2 items ('A', 'B')"), "\(imported.stderr)")
        let kinds = (try jsonObject(imported.stdout)["warnings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.contains("kept_as_written"), "\(kinds)")
    }

    @Test func test_import_numberedByAccountSaysValuesDecideLast() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("same.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,S,,,0,,,pw-1,
            ,,login,S,,,0,,,pw-2,

            """))
        let imported = try cli.run(["import", "--format", "bitwarden-csv", cli.path("same.csv")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("numbered in the order of their usernames, then URLs, then values"), "\(imported.stderr)")
    }

    // MARK: - recheck60 R8: a passkey member named like a renamed field

    @Test func test_exportBitwardenJSON_keepsAPasskeyMemberEndingInANumberAMember() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("bw.json", bytes("""
            {"encrypted": false, "folders": [], "items": [{"id": "i1", "type": 1, "name": "GitHub", "notes": null, \
            "fields": [{"name": "passkey.rpId", "value": "custom", "type": 0, "linkedId": null}], \
            "login": {"username": "alice", "password": "pw", "totp": null, "uris": [], \
            "fido2Credentials": [{"credentialId": "cid-1", "keyValue": "PRIVATE", "rpId": "github.com", "ext_2": "E2"}]}}]}
            """))
        #expect(try cli.run(["import", cli.path("bw.json")] + cli.unlock()).status == 0)
        #expect(try field(cli, "GitHub", "passkey.ext_2").text == "E2" && field(cli, "GitHub", "passkey.rpId_2").text == "custom")
        let written = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        let item = try #require((try jsonObject(written.stdout)["items"] as? [[String: Any]])?.first)
        let passkeys = try #require((item["login"] as? [String: Any])?["fido2Credentials"] as? [[String: String]])
        #expect(passkeys.count == 1 && passkeys[0]["ext_2"] == "E2" && passkeys[0]["rpId"] == "github.com", "\(passkeys)")
        let custom = (item["fields"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(custom == ["passkey.rpId"], "the renamed custom field stays a custom field: \(custom)")
    }

    // MARK: - cold60 L9: a site without a scheme in rename lines

    @Test func test_import_renameLinesNameASiteWrittenWithoutAScheme() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("db.csv", bytes("""
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,db,,,0,db.example,zed,pw-z,
            ,,login,db,,,0,db.example,amy,pw-a,

            """))
        let imported = try cli.run(["import", "--format", "bitwarden-csv", cli.path("db.csv")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("to 'db (2)' (user zed, db.example; "), "\(imported.stderr)")
    }

    // MARK: - cold60 L2: a stored name that is also another field's label

    @Test(.enabled(if: python, "python3 is not installed: skipped"))
    func test_getField_notesTheOtherFieldOfTheSameLabel() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let p = Self.item("P1", "P Site", [#"{"title": "Extra", "id": "e1", "value": {"string": "dup-a"}}"#,
                                           #"{"title": "Extra", "id": "e2", "value": {"string": "dup-b"}}"#])
        try writeOnePUX(cli, "p.1pux", export: Self.export([p]))
        #expect(try cli.run(["import", cli.path("p.1pux")] + cli.unlock()).status == 0)
        let got = try field(cli, "P Site", "Extra")
        #expect(got.status == 0 && got.text == "dup-a", "\(got.stderr)")
        #expect(got.stderr.contains("vaultfile: note: ") && got.stderr.contains("'Extra_2'"), "\(got.stderr)")
        let other = try field(cli, "P Site", "Extra_2")
        #expect(other.text == "dup-b" && !other.stderr.contains("note:"), "\(other.stderr)")
    }

    // MARK: - A 1pux whose export.data lies past the first 64 KiB

    @Test(.enabled(if: python, "python3 is not installed: skipped"))
    func test_import_recognisesA1puxByItsCentralDirectory() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try writeOnePUX(cli, "late.1pux", export: Self.export([Self.item("L1", "Late")]), before: 100_000)
        let imported = try cli.run(["import", cli.path("late.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run(["get", "Late"] + cli.unlock()).text == "pw-L1")
        // A ZIP without export.data is still said as such.
        let other = try cli.shell("python3 -c 'import zipfile; z = zipfile.ZipFile(\"other.zip\", \"w\"); z.writestr(\"readme.txt\", \"hi\"); z.close()'")
        #expect(other.status == 0)
        let refused = try cli.run(["import", "--dry-run", cli.path("other.zip")] + cli.unlock())
        #expect(refused.status != 0 && refused.stderr.contains("holds no export.data"), "\(refused.stderr)")
    }
}
