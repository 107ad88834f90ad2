import Foundation
import TestSupport
import Testing

/// att63's naming findings on `import`, through the built binary: `--skip-existing` takes two
/// items for one title only when their whole titles are equal, never by the first bytes a cut
/// name keeps (F1); a pass look-alike is matched to its own entry, not to the name it cleans to
/// (F3); and the text slips of F7 (a reason said twice, a cut stem named as the vault's, an empty
/// collapsed line of field renamings).
@Suite struct ImportLows63CLITests {
    private static let header = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"

    /// A Bitwarden CSV of `rows` (title, username, password), each with the URI https://x.example.
    private func csv(_ cli: CLI, _ file: String, _ rows: [(String, String, String)]) throws {
        try cli.write(file, bytes(Self.header + rows.map { ",,login,\($0.0),,,0,https://x.example,\($0.1),\($0.2),\n" }.joined()))
    }

    private func importing(_ cli: CLI, _ file: String, _ options: [String] = []) throws -> CLI.Result {
        try cli.run(["import", "--format", "bitwarden-csv"] + options + [cli.path(file)] + cli.unlock())
    }

    private func get(_ cli: CLI, _ name: String, field: String? = nil) throws -> String {
        try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock()).text
    }

    // MARK: - F1: titles that share their first 1,011 bytes are other titles

    @Test func test_importSkipExisting_aTitleSharingALongPrefixIsANewTitle() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let b = String(repeating: "B", count: 1011)
        try csv(cli, "first.csv", [(b + "X", "u1", "px"), (b + "Y", "u1", "py")])
        #expect(try importing(cli, "first.csv").status == 0)
        // Two new titles, one with another password, one with the same as B…X's: both added.
        try csv(cli, "new.csv", [(b + "Z", "u1", "pz"), (b + "W", "u1", "px")])
        let result = try importing(cli, "new.csv", ["--skip-existing"])
        #expect(result.status == 0, "\(result.stderr.suffix(400))")
        #expect(result.stderr.contains("(2 new, 0 replaced)") && !result.stderr.contains("skipped"), "\(result.stderr.suffix(400))")
        #expect(try get(cli, b + "Z") == "pz" && get(cli, b + "W") == "px" && get(cli, b + "X") == "px")
        #expect(try names(cli).count == 4)
        // Imported again: each is its own entry.
        let again = try importing(cli, "new.csv", ["--skip-existing"])
        #expect(again.status == 0 && again.stderr.contains("(0 new, 0 replaced, 2 skipped)") && !again.stderr.contains("warning"),
                "\(again.stderr.suffix(400))")
    }

    @Test func test_importSkipExisting_aCutNumberedNameIsMatchedByItsOwnTitle() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let a = String(repeating: "A", count: 1023), stem = String(repeating: "A", count: 1020)
        try csv(cli, "first.csv", [(a + "1", "u1", "p1"), (a + "2", "u1", "p2a"), (a + "2", "u2", "p2b")])
        #expect(try importing(cli, "first.csv").status == 0)
        #expect(try get(cli, stem + " (2)") == "p2b" && get(cli, stem + " (2)", field: "title") == a + "2")
        // A new account of A…1, which the file numbers `A… (2)`: A…2's entry of that name is another title.
        try csv(cli, "second.csv", [(a + "1", "u1", "p1"), (a + "1", "u2", "NEWACCOUNT")])
        let result = try importing(cli, "second.csv", ["--skip-existing", "--json"])
        #expect(result.status == 0, "\(result.stderr.suffix(400))")
        #expect(result.stderr.contains("(1 new, 0 replaced, 1 skipped)") && !result.stderr.contains("warning: skipped"), "\(result.stderr.suffix(400))")
        #expect(try get(cli, stem + " (2)") == "p2b", "A…2's entry is kept")
        #expect(try get(cli, stem + " (3)") == "NEWACCOUNT" && get(cli, stem + " (3)", field: "title") == a + "1")
        // Its numbering names the title, not the cut stem, which is no entry (F7), and says `numbered` once.
        #expect(result.stderr.contains("the vault's entries of the title '\(a)1' hold other accounts") && !result.stderr.contains("entries of '\(stem)'"),
                "\(result.stderr.suffix(600))")
        let renamed = try jsonObject(result.stdout)["renamed"] as? [[String: Any]] ?? []
        let reasons = renamed.first { $0["to"] as? String == stem + " (3)" }?["reasons"] as? [String] ?? []
        #expect(reasons == ["numbered", "shortened", "title_kept", "vault_holds_another_account"], "\(reasons)")
        // Again: each item is its own title's entry; nothing said, nothing added.
        let again = try importing(cli, "second.csv", ["--skip-existing"])
        #expect(again.status == 0 && again.stderr.contains("(0 new, 0 replaced, 2 skipped)") && !again.stderr.contains("warning"),
                "\(again.stderr.suffix(400))")
        // Its password changed: the skip names it by its whole title, not the cut stem (F7).
        try csv(cli, "changed.csv", [(a + "1", "u1", "p1"), (a + "1", "u2", "CHANGED")])
        let changed = try importing(cli, "changed.csv", ["--skip-existing"])
        #expect(changed.status == 0 && changed.stderr.contains("warning: skipped '\(a)1' (user u2, x.example; the vault's '\(stem) (3)': the same account)"),
                "\(changed.stderr.suffix(600))")
        // --overwrite replaces by name: the entry of another title is said with both titles.
        let overwrite = try importing(cli, "second.csv", ["--overwrite"])
        #expect(overwrite.status == 0, "\(overwrite.stderr.suffix(400))")
        #expect(overwrite.stderr.contains("' held another account (title '\(a)2', user u2, x.example) than the file's item that replaces it (title '\(a)1', user u2, x.example)"),
                "\(overwrite.stderr.suffix(600))")
    }

    @Test func test_importSkipExisting_aNewAccountCutByItsNumberKeepsItsTitle() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let a = String(repeating: "A", count: 1023), stem = String(repeating: "A", count: 1020)
        try csv(cli, "first.csv", [(a + "1", "u2", "p2"), (a + "1", "u3", "p3")])
        #expect(try importing(cli, "first.csv").status == 0)
        // u1 comes first by username: the file names it `A…1`, which the vault holds for u2; its
        // number cuts the name, which keeps the title in `title`.
        try csv(cli, "second.csv", [(a + "1", "u1", "NEW")])
        let result = try importing(cli, "second.csv", ["--skip-existing"])
        #expect(result.status == 0 && result.stderr.contains("(1 new, 0 replaced)"), "\(result.stderr.suffix(400))")
        #expect(try get(cli, stem + " (3)") == "NEW" && get(cli, stem + " (3)", field: "title") == a + "1")
        let again = try importing(cli, "second.csv", ["--skip-existing"])
        #expect(again.status == 0 && again.stderr.contains("(0 new, 0 replaced, 1 skipped)") && !again.stderr.contains("warning"),
                "\(again.stderr.suffix(400))")
        #expect(try Set(names(cli)) == [a + "1", stem + " (2)", stem + " (3)"])
    }

    // MARK: - F3: a pass look-alike is its own entry

    @Test func test_importPassSkipExisting_aLookAlikeIsItsOwnEntryOnceTheExactFileIsGone() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let path = try fakeGPG(cli)
        try passStore(cli, "st", ["db": "pw1\nuser: alice\n", "db ": "pw2\nuser: alice\n"])
        #expect(try cli.run(["import", "--format", "pass", cli.path("st")] + cli.unlock(), extra: path).status == 0)
        #expect(try names(cli) == ["db", "db (2)"])
        // db.gpg removed, `db .gpg` unchanged: it is the vault's `db (2)`, nothing differs.
        try passStore(cli, "st2", ["db ": "pw2\nuser: alice\n"])
        let same = try cli.run(["import", "--skip-existing", "--format", "pass", cli.path("st2")] + cli.unlock(), extra: path)
        #expect(same.status == 0 && same.stderr.contains("(0 new, 0 replaced, 1 skipped)") && !same.stderr.contains("warning: skipped"), "\(same.stderr)")
        // Changed: said against its own entry, never as a change of `db`'s password.
        try passStore(cli, "st3", ["db ": "pw3\nuser: alice\n"])
        let changed = try cli.run(["import", "--skip-existing", "--format", "pass", cli.path("st3")] + cli.unlock(), extra: path)
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed.stderr.contains("warning: skipped 'db' (user alice; the vault's 'db (2)': the same account): the file's password differs"),
                "\(changed.stderr)")
        // --overwrite replaces by name: that `db` held another title is said.
        let overwrite = try cli.run(["import", "--overwrite", "--dry-run", "--format", "pass", cli.path("st2")] + cli.unlock(), extra: path)
        #expect(overwrite.status == 0 && overwrite.stderr.contains("'db' held another account (title 'db', user alice) than the file's item that replaces it (title 'db ', user alice)"),
                "\(overwrite.stderr)")
        #expect(try get(cli, "db") == "pw1" && get(cli, "db (2)") == "pw2")
    }

    // MARK: - F7: text slips

    @Test func test_importSkipExisting_jsonSaysNumberedOnce() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("t1.csv", bytes(Self.header + "Work,,login,Twitter,,,0,https://t.example,a,pa,\nWork,,login,Twitter,,,0,https://t.example,b,pb,\n"))
        #expect(try importing(cli, "t1.csv").status == 0)
        try cli.write("t2.csv", bytes(Self.header + "Work,,login,Twitter,,,0,https://t.example,a,pa,\nWork,,login,Twitter,,,0,https://t.example,c,pc,\n"))
        let result = try importing(cli, "t2.csv", ["--skip-existing", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let renamed = try jsonObject(result.stdout)["renamed"] as? [[String: Any]] ?? []
        #expect(renamed.count == 1 && renamed.first?["to"] as? String == "Work/Twitter (3)", "\(renamed)")
        #expect(renamed.first?["reasons"] as? [String] == ["numbered", "title_kept", "vault_holds_another_account"], "\(renamed)")
    }

    @Test func test_import_aLongFirstLabelIsListedCut() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let long = String(repeating: "x", count: 700)
        let fields = (0..<5).map { "L\($0) \(long): v\($0)" }.joined(separator: "\n")
        try cli.write("ll.csv", bytes(Self.header + ",,login,longlabels,,\"\(fields)\",0,,,pw,\n"))
        let result = try importing(cli, "ll.csv")
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains("custom fields stored under other names") })
        #expect(line.contains("(the labels are kept in the field 'labels'): 'L0 xxx") && line.contains("…' as '"), "\(line.prefix(200))")
        #expect(line.hasSuffix(", and 4 more (each in --json)") && !line.contains("): , and"), "\(line.suffix(200))")
        #expect(line.utf8.count < 900, "cut to the bound: \(line.utf8.count) bytes")
    }
}
