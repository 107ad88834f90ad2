import Foundation
import TestSupport
import Testing

/// Low findings left open on `import` (issue 44), through the built binary: names cut only as far
/// as the limit needs and cut folders kept (att62 F8, cold62 L1), more URLs than an entry holds
/// (recheck62 N1's rule), one line for an item's many field renamings, skip warnings naming the
/// item by title and account (recheck62 N3), and a pass file matched by its path (recheck62 N6).
@Suite struct ImportLowsFollowUpCLITests {
    private func field(_ cli: CLI, _ name: String, _ field: String) throws -> CLI.Result {
        try cli.run(["get", name, "--field", field] + cli.unlock())
    }

    // MARK: - att62 F8, cold62 L1: cut only as far as needed; cut folders kept

    @Test func test_import_namesThatFitAreNotCutAndCutFoldersAreKept() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let fits = String(repeating: "A", count: 1015), twin = String(repeating: "T", count: 1022)
        let folder = String(repeating: "F", count: 600) + "/" + String(repeating: "G", count: 500), title = String(repeating: "H", count: 60)
        let header = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        try cli.write("long.csv", bytes(header + """
            ,,login,\(fits),,,0,,,pw-fits,
            \(folder),,login,\(title),,,0,,,pw-folder,
            ,,login,\(twin),,,0,,amy,pw-twin1,
            ,,login,\(twin),,,0,,zed,pw-twin2,

            """))
        let imported = try cli.run(["import", "--format", "bitwarden-csv", cli.path("long.csv")] + cli.unlock())
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try cli.run(["get", fits] + cli.unlock()).text == "pw-fits", "1,015 bytes fit: not cut")
        #expect(try cli.run(["get", twin] + cli.unlock()).text == "pw-twin1")
        #expect(try cli.run(["get", String(repeating: "T", count: 1020) + " (2)"] + cli.unlock()).text == "pw-twin2", "cut only for its number")
        let renames = imported.stderr.split(separator: "\n").filter { $0.contains("renamed '") }
        #expect(renames.count == 2 && !imported.stderr.contains("renamed '\(fits)'"), "\(renames.map { $0.prefix(60) })")
        // The item whose folders were cut keeps the source's folders in `folder`.
        let all = try names(cli)
        let cut = try #require(all.first { $0.hasSuffix("/" + title) })
        #expect(cut.utf8.count <= 1024 && !cut.hasPrefix(folder))
        #expect(try field(cli, cut, "folder").text == folder)
        #expect(imported.stderr.contains("its folders are kept in the field 'folder'"))
        // Imported again with --skip-existing: every item found, nothing renamed or added.
        let again = try cli.run(["import", "--skip-existing", "--dry-run", "--format", "bitwarden-csv", cli.path("long.csv")] + cli.unlock())
        #expect(again.status == 0 && again.stderr.contains("(0 new, 0 replaced, 4 skipped)"), "\(again.stderr.suffix(300))")
        #expect(!again.stderr.contains("renamed"))
    }

    // MARK: - More URLs than an entry holds; many field renamings of one item

    @Test func test_importPass_manyURLsAreKeptInTheNotesAndManyRenamingsAreOneLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        let urls = (1...80).map { "url: https://u\($0).example\n" }.joined()
        let odd = (1...10).map { "a b\($0): v\($0)\n" }.joined()
        try passStore(cli, "st", ["many": "pw\n" + urls, "odd": "pw2\n" + odd, "fine": "ok\n"])
        let result = try cli.run(["import", "--json", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["fine", "many", "odd"])
        let notes = try field(cli, "many", "notes").text
        #expect(notes.contains("url80: https://u80.example") && !notes.contains("u1.example"), "\(notes)")
        #expect(try field(cli, "many", "url").text == "https://u1.example")
        #expect(result.stderr.contains("fields beyond the 64 an entry holds are kept as 'label: value' lines of the entry's notes, in 1 entry ('many')"),
                "\(result.stderr)")
        // Ten renamings of one item: one line of text, each in --json.
        let lines = result.stderr.split(separator: "\n").filter { $0.contains("stored as") || $0.contains("stored under") }
        #expect(lines.count == 1 && lines[0].hasPrefix("vaultfile: warning: entry 'odd': 10 custom fields stored under other names"), "\(lines)")
        let warnings = try jsonObject(result.stdout)["warnings"] as? [[String: Any]] ?? []
        #expect(warnings.filter { $0["kind"] as? String == "field_renamed" }.count == 10, "\(warnings)")
    }

    // MARK: - recheck62 N6: a pass file is its path's entry

    @Test func test_importPassSkipExisting_aChangedFileBesideALookAlikeIsHeldBackByItsPath() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        try passStore(cli, "st", ["db": "REAL\n", "db ": "other\n"])
        #expect(try cli.run(["import", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path).status == 0)
        try passStore(cli, "st2", ["db": "REAL-NEW\n", "db ": "other\n"])
        for _ in 0..<2 {
            let again = try cli.run(["import", "--skip-existing", "--format", "pass", cli.path("st2")] + cli.unlock(), extra: path)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("warning: skipped 'db': the file's password differs, and --skip-existing keeps the vault's entry: not taken"),
                    "\(again.stderr)")
            #expect(again.stderr.contains("(0 new, 0 replaced, 2 skipped (1 with changes))") && !again.stderr.contains("db (3)"), "\(again.stderr)")
        }
        #expect(try names(cli) == ["db", "db (2)"])
        #expect(try cli.run(["get", "db"] + cli.unlock()).text == "REAL")
    }
}
