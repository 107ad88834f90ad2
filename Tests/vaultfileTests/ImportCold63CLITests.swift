import Foundation
import Testing

/// The findings of cold63 on `import` (issue 44), through the built binary: an export whose
/// renamed fields come in another order is no change (F2); an item of more fields than an entry
/// holds keeps the same ones in any order, and no notes line carries a kept field's name (F4);
/// 1pux fields of one name in sections of different titles are told apart by their labels (F6);
/// a wrong-format hint names a file that starts with `-` so that it pastes and runs (F7); `--json`
/// gives an item without a title the reason `untitled` (F11); `--skip-existing` warns of renamed
/// fields and fields in notes only for the items it imports (F10).
@Suite struct ImportCold63CLITests {
    // MARK: - F2: `labels` in an order of its own

    /// One Bitwarden item of renamed fields (`API Key` twice beside `API_Key`, a custom
    /// `username`, `Пин`), listed in `order`.
    private static func bitwarden(_ order: [Int]) -> [UInt8] {
        let fields = [#"{"name": "API Key", "value": "abc", "type": 1}"#, #"{"name": "API_Key", "value": "zzz", "type": 1}"#,
                      #"{"name": "API Key", "value": "xyz", "type": 1}"#, #"{"name": "username", "value": "custom", "type": 0}"#,
                      #"{"name": "Пин", "value": "1234", "type": 1}"#]
        return bytes(#"{"encrypted": false, "folders": [], "items": [{"id": "1", "type": 1, "name": "db01", "login": {"username": "u", "#
                     + #""password": "pw"}, "fields": ["# + order.map { fields[$0] }.joined(separator: ", ") + "]}]}")
    }

    @Test func test_import_anExportOfRenamedFieldsInAnotherOrderIsNoChange() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("a.json", Self.bitwarden([0, 1, 2, 3, 4]))
        // Another order of the fields of other labels; the two `API Key` fields keep theirs (fields of
        // one label and section are numbered in the file's order: att63 F2).
        try cli.write("b.json", Self.bitwarden([4, 3, 0, 1, 2]))
        #expect(try cli.run(["import", cli.path("a.json")] + cli.unlock()).status == 0)
        let labels = try cli.run(["get", "db01", "--field", "labels"] + cli.unlock())
        #expect(labels.text == "API_Key_2\tAPI Key\nAPI_Key_3\tAPI Key\nusername_2\tusername\nxn--r0a4cp\tПин\n", "\(labels.text)")
        let skipped = try cli.run(["import", "--skip-existing", cli.path("b.json")] + cli.unlock())
        #expect(skipped.status == 0 && skipped.stderr.contains("(0 new, 0 replaced, 1 skipped)") && !skipped.stderr.contains("differs"),
                "\(skipped.stderr)")
        let overwritten = try cli.run(["import", "--overwrite", cli.path("b.json")] + cli.unlock())
        #expect(overwritten.status == 0, "\(overwritten.stderr)")
        let history = try cli.run(["history", "db01"] + cli.unlock())
        #expect(!history.text.contains("changed: labels"), "\(history.text)")
    }

    // MARK: - F4: more fields than an entry holds

    @Test func test_import_fieldsPastTheLimitAreChosenByLabelAndTheirLinesNameNoKeptField() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let fillers = (0..<60).map { #"{"name": "A\#($0 < 10 ? "0" : "")\#($0)", "value": "f\#($0)", "type": 0}"# }
        let named = [#"{"name": "API Key", "value": "k1", "type": 1}"#, #"{"name": "API_Key", "value": "k2", "type": 1}"#,
                     #"{"name": "username", "value": "custom", "type": 0}"#]
        func export(_ fields: [String]) -> [UInt8] {
            bytes(#"{"encrypted": false, "folders": [], "items": [{"id": "1", "type": 1, "name": "db01", "login": {"username": "u", "#
                  + #""password": "pw"}, "fields": ["# + fields.joined(separator: ", ") + "]}]}")
        }
        try cli.write("a.json", export(fillers + named))
        try cli.write("b.json", export(named.reversed() + fillers.reversed()))
        let imported = try cli.run(["import", cli.path("a.json")] + cli.unlock())
        #expect(imported.status == 0 && imported.stderr.contains("2 fields beyond the 64"), "\(imported.stderr)")
        #expect(try cli.run(["get", "db01", "--field", "API_Key"] + cli.unlock()).text == "k1")
        let notes = try cli.run(["get", "db01", "--field", "notes"] + cli.unlock()).text
        #expect(notes == "API_Key (not kept as a field): k2\nusername (not kept as a field): custom\n", "\(notes)")
        // The same item in the other order: the same fields, so nothing to take.
        let skipped = try cli.run(["import", "--skip-existing", cli.path("b.json")] + cli.unlock())
        #expect(skipped.status == 0 && skipped.stderr.contains("(0 new, 0 replaced, 1 skipped)") && !skipped.stderr.contains("differs"),
                "\(skipped.stderr)")
    }

    // MARK: - F6: 1pux section titles

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed: skipped"))
    func test_import_1puxFieldsOfOneNameKeepTheirSectionTitlesInTheirLabels() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let item = """
            {"uuid": "S1", "createdAt": 1600000000, "updatedAt": 1600000000, "state": "active", "categoryUuid": "001", \
            "overview": {"title": "Svc"}, "details": {"loginFields": [], "password": "pw", "sections": [\
            {"title": "Prod", "fields": [{"title": "API_Key", "value": {"concealed": "abc"}}]}, \
            {"title": "Dev", "fields": [{"title": "API_Key", "value": {"concealed": "xyz"}}]}, \
            {"title": "Misc", "fields": [{"title": "Note", "value": {"string": "n"}}]}]}}
            """
        try ImportLows60CLITests().writeOnePUX(cli, "s.1pux", export: ImportLows60CLITests.export([item]))
        let imported = try cli.run(["import", cli.path("s.1pux")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        // Three titled sections of one item: one item.
        #expect(imported.stderr.contains("not kept: 1Password's section titles (the fields under them are kept; a title only where it tells apart "
                                         + "fields of one name, in their labels in the field 'labels'), in 1 item"), "\(imported.stderr)")
        #expect(try cli.run(["get", "Svc", "--field", "Prod / API_Key"] + cli.unlock()).text == "abc")
        #expect(try cli.run(["get", "Svc", "--field", "Dev / API_Key"] + cli.unlock()).text == "xyz")
        #expect(try cli.run(["get", "Svc", "--field", "API_Key"] + cli.unlock()).text == "xyz")
        // An export to another manager gives each field its section with its label.
        let exported = try cli.run(["export", "--format", "bitwarden-json", "--out", "-", "--force"] + cli.unlock())
        #expect(exported.text.contains("\"Prod / API_Key\"") && exported.text.contains("\"Dev / API_Key\""), "\(exported.text)")
    }

    // MARK: - F7: a hint's file that starts with `-`

    @Test func test_import_aWrongFormatHintForAFileNamedWithADashPastesAndRuns() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("-x.csv", bytes("name,url,username,password,note\nSite,https://s.example,u,p,\n"))
        let refused = try cli.run(["import", "--dry-run", "--format", "firefox-csv"] + cli.unlock() + ["--", "-x.csv"])
        #expect(refused.status != 0, "\(refused.stderr)")
        let marker = "hint: import it with: "
        let line = try #require(refused.stderr.split(separator: "\n").first { $0.contains(marker) }, "\(refused.stderr)")
        let command = String(line[line.range(of: marker)!.upperBound...])
        #expect(command == "vaultfile import --format chrome-csv ./-x.csv", "\(command)")
        // Pasted as it is (the binary in place of `vaultfile`), in the folder the name was given in.
        let pasted = try cli.shell("\"$VF\"" + command.dropFirst("vaultfile".count) + " " + cli.unlock().joined(separator: " "))
        #expect(pasted.status == 0 && pasted.stderr.contains("imported 1 entry"), "\(pasted.stderr)")
    }

    // MARK: - F11: an item without a title in --json

    @Test func test_importJSON_anItemWithoutATitleHasTheReasonUntitled() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c.csv", bytes("name,url,username,password,note\n,https://github.com/login,u,p,\nSite,https://s.example,v,q,\n"))
        for prefix in [[], ["--prefix", "imp"]] {
            let result = try cli.run(["import", "--dry-run", "--json", "--format", "chrome-csv"] + prefix + [cli.path("c.csv")] + cli.unlock())
            #expect(result.status == 0, "\(result.stderr)")
            let renamed = try jsonObject(result.stdout)["renamed"] as? [[String: Any]] ?? []
            #expect(renamed.count == 1, "\(result.text)")
            #expect(renamed.first?["reasons"] as? [String] == ["untitled"] && renamed.first?["named_after"] as? String == "its site github.com/login",
                    "\(result.text)")
            #expect(renamed.first?["from"] as? String == (prefix.isEmpty ? "" : "imp/"), "as docs/JSON.md says: \(result.text)")
        }
    }

    // MARK: - F10: warnings of skipped items

    @Test func test_skipExisting_warnsOfFieldsOnlyForTheItemsItImports() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        func item(_ id: String, _ name: String, _ fields: [(String, String)]) -> String {
            let list = fields.map { #"{"name": "\#($0.0)", "value": "\#($0.1)", "type": 0}"# }.joined(separator: ", ")
            return #"{"id": "\#(id)", "type": 1, "name": "\#(name)", "login": {"username": "u\#(id)", "password": "pw"}, "fields": [\#(list)]}"#
        }
        func export(_ items: [String]) -> [UInt8] {
            bytes(#"{"encrypted": false, "folders": [], "items": ["# + items.joined(separator: ", ") + "]}")
        }
        // Skipme: a cleaned label of its own, one it shares with Newone, and more fields than an entry holds.
        let skipme = item("1", "Skipme", [("a b", "1"), ("x y", "2")] + (0..<66).map { ("k\($0)", "v") })
        let newone = item("2", "Newone", [("c d", "3"), ("x y", "4")])
        try cli.write("a.json", export([skipme]))
        try cli.write("b.json", export([skipme, newone]))
        let first = try cli.run(["import", cli.path("a.json")] + cli.unlock())
        #expect(first.status == 0 && first.stderr.contains("'a b'") && first.stderr.contains("fields beyond the 64"), "\(first.stderr)")
        for dryRun in [["--dry-run"], []] {
            let skipped = try cli.run(["import", "--skip-existing", "--json"] + dryRun + [cli.path("b.json")] + cli.unlock())
            #expect(skipped.status == 0 && skipped.stderr.contains("(1 new, 0 replaced, 1 skipped)"), "\(skipped.stderr)")
            #expect(!skipped.stderr.contains("'a b'") && !skipped.stderr.contains("fields beyond the 64") && !skipped.stderr.contains("Skipme'"),
                    "only Newone's: \(skipped.stderr)")
            #expect(skipped.stderr.contains("field 'c d' stored as 'c_d' in entry 'Newone'"), "\(skipped.stderr)")
            #expect(skipped.stderr.contains("field 'x y' stored as 'x_y' in entry 'Newone'"), "one entry, Newone: \(skipped.stderr)")
            let warnings = try jsonObject(skipped.stdout)["warnings"] as? [[String: Any]] ?? []
            let kinds = warnings.compactMap { $0["kind"] as? String }
            #expect(kinds.filter { $0 == "field_renamed" }.count == 2 && !kinds.contains("fields_in_notes"), "\(kinds)")
        }
    }
}
