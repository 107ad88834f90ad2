import Foundation
import TestSupport
import Testing
@testable import vaultfile

/// cold60 M2 and L6, through the built binary: `import --skip-existing` of a newer export says a
/// skipped item whose password or fields changed (never the value) and counts it; names the vault
/// entry each item was matched to; takes an item whose title is the vault's one entry of that name
/// as that entry (not "another account"); numbers a new account after the vault's entries of its
/// title, so that nothing is held back and a second run moves nothing; and `--json` gives the
/// names in a real import and the cause of a numbering.
@Suite struct ImportSkipChangesCLITests {
    private static let header = "name,url,username,password\n"

    private func get(_ cli: CLI, _ name: String, field: String? = nil) throws -> String {
        try cli.run(["get", name] + (field.map { ["--field", $0] } ?? []) + cli.unlock()).text
    }

    // MARK: - Changed items said; matched entry named; a new account numbered

    @Test func test_importSkipExisting_saysAChangedPasswordAndNumbersANewAccount() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("t1.csv", bytes(Self.header + "Twitter,https://t.example,tw_b,pb\nTwitter,https://t.example,tw_c,pc\n"))
        #expect(try cli.run(["import", cli.path("t1.csv")] + cli.unlock()).status == 0)
        // tw_b's password changed; tw_a is new, and numbering by username gives it 'Twitter'.
        try cli.write("t2.csv", bytes(Self.header + "Twitter,https://t.example,tw_a,pa\nTwitter,https://t.example,tw_b,pb-NEW\n"
                                      + "Twitter,https://t.example,tw_c,pc\n"))
        let dry = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("t2.csv")] + cli.unlock())
        #expect(dry.status == 0, "\(dry.stderr)")
        let lines = dry.text.split(separator: "\n").map(String.init)
        // The vault's entries the items were matched to, never 'Twitter (3)', which it has not.
        #expect(lines.contains("skip Twitter (the vault's entry holds this account; the file's password differs: not taken)"), "\(dry.text)")
        #expect(lines.contains("skip Twitter (2) (the vault's entry holds this account)"), "\(dry.text)")
        #expect(lines.contains("add Twitter (3)"), "\(dry.text)")
        #expect(dry.stderr.contains("would be renamed 'Twitter' to 'Twitter (3)' (user tw_a, t.example; the vault's entries of 'Twitter' hold other accounts: numbered after them)"),
                "\(dry.stderr)")
        #expect(dry.stderr.contains("(1 new, 0 replaced, 2 skipped (1 with changes)); nothing was changed"), "\(dry.stderr)")
        #expect(!dry.text.contains("pb-NEW") && !dry.stderr.contains("pb-NEW"), "a value is never printed")

        let result = try cli.run(["import", "--skip-existing", "--json", cli.path("t2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: skipped 'Twitter' (user tw_b, t.example; the vault's 'Twitter': the same account): the file's password differs, "
                                       + "and --skip-existing keeps the vault's entry: not taken"), "\(result.stderr)")
        #expect(result.stderr.contains("imported 1 entry from \(cli.path("t2.csv")) (1 new, 0 replaced, 2 skipped (1 with changes))"), "\(result.stderr)")
        #expect(!result.text.contains("pb-NEW") && !result.stderr.contains("pb-NEW"), "a value is never printed")
        let summary = try jsonObject(result.stdout)
        #expect(summary["imported"] as? Int == 1 && summary["added"] as? Int == 1 && summary["skipped"] as? Int == 2, "\(result.text)")
        #expect(summary["skipped_with_changes"] as? Int == 1 && summary["not_imported"] as? Int == 0, "\(result.text)")
        #expect(summary["skipped_names"] as? [String] == ["Twitter", "Twitter (2)"], "\(result.text)")
        #expect(summary["skipped_with_changes_names"] as? [String] == ["Twitter"], "\(result.text)")
        let renamed = summary["renamed"] as? [[String: Any]] ?? []
        #expect(renamed.count == 1 && renamed.first?["to"] as? String == "Twitter (3)", "\(result.text)")
        #expect(renamed.first?["reasons"] as? [String] == ["numbered", "vault_holds_another_account"], "\(result.text)")
        let kinds = (summary["warnings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds == ["change_not_taken"], "\(result.text)")

        // Nothing replaced or renumbered: each name keeps its account; tw_a added under a new number.
        #expect(try names(cli) == ["Twitter", "Twitter (2)", "Twitter (3)"])
        #expect(try get(cli, "Twitter") == "pb" && get(cli, "Twitter (2)") == "pc" && get(cli, "Twitter (3)") == "pa")
        #expect(try get(cli, "Twitter (3)", field: "username") == "tw_a")
        // A second run finds every account: nothing moves.
        let again = try cli.run(["import", "--skip-existing", cli.path("t2.csv")] + cli.unlock())
        #expect(again.status == 0 && again.stderr.contains("imported 0 entries") && again.stderr.contains("3 skipped (1 with changes)"), "\(again.stderr)")
        #expect(!again.stderr.contains("renamed"), "\(again.stderr)")
        #expect(try names(cli) == ["Twitter", "Twitter (2)", "Twitter (3)"])
    }

    // MARK: - The same entry edited is skipped by name, its change said

    @Test func test_importSkipExisting_takesTheOneEntryOfATitleByName() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("r1.csv", bytes(Self.header + "Router,,admin,pw\n"))
        #expect(try cli.run(["import", cli.path("r1.csv")] + cli.unlock()).status == 0)
        // The same row with a URL added: the same entry, not another account.
        try cli.write("r2.csv", bytes(Self.header + "Router,http://192.168.1.1:8080/,admin,pw\n"))
        let result = try cli.run(["import", "--skip-existing", cli.path("r2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("another account"), "\(result.stderr)")
        #expect(result.stderr.contains("warning: skipped 'Router': the file's field 'url' differs, and --skip-existing keeps the vault's entry: not taken — use --overwrite"),
                "\(result.stderr)")
        #expect(result.stderr.contains("(0 new, 0 replaced, 1 skipped (1 with changes))"), "\(result.stderr)")
        // A password-only item whose password changed: the same entry too.
        try cli.write("p1.csv", bytes(Self.header + "db,,,old\n"))
        try cli.write("p2.csv", bytes(Self.header + "db,,,new\n"))
        #expect(try cli.run(["import", cli.path("p1.csv")] + cli.unlock()).status == 0)
        let pin = try cli.run(["import", "--skip-existing", "--dry-run", cli.path("p2.csv")] + cli.unlock())
        #expect(pin.text == "skip db (already in the vault; the file's password differs: not taken)\n", "\(pin.text)")
        #expect(try names(cli) == ["Router", "db"] && get(cli, "db") == "old")
    }

    @Test func test_importSkipExisting_ownFormatSaysAChangedValue() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("1")), ("b", bytes("old"))]); defer { cli.directory.remove() }
        let result = try cli.run(["import", "--format", "dotenv", "--skip-existing", "--json"] + cli.unlock(), stdin: bytes("a=1\nb=2\nc=3\n"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: skipped 'b': the file's value differs"), "\(result.stderr)")
        #expect(!result.stderr.contains("skipped 'a'"), "an unchanged entry is skipped without a word: \(result.stderr)")
        #expect(result.stderr.contains("(1 new, 0 replaced, 2 skipped (1 with changes))"), "\(result.stderr)")
        let summary = try jsonObject(result.stdout)
        #expect(summary["skipped_names"] as? [String] == ["a", "b"] && summary["skipped_with_changes_names"] as? [String] == ["b"], "\(result.text)")
        #expect(try get(cli, "b") == "old")
    }

    // MARK: - --json: the exact title's cause named

    @Test func test_importJSON_namesTheExactTitleAsTheCauseOfANumbering() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("l.csv", bytes(Self.header + "db,,alice,a\n\"db \",,aaron,b\n"))
        let result = try cli.run(["import", "--json", cli.path("l.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let renamed = try jsonObject(result.stdout)["renamed"] as? [[String: Any]] ?? []
        let reasons = renamed.first { $0["to"] as? String == "db (2)" }?["reasons"] as? [String] ?? []
        // `numbered` stays, the cause follows it.
        #expect(reasons.contains("numbered") && reasons.contains("yields_to_exact_title"), "\(result.text)")
        #expect(reasons.firstIndex(of: "numbered").map { reasons[$0 + 1] } == "yields_to_exact_title", "\(reasons)")
    }

    // MARK: - att62: a Prepend letter before the number; replaced accounts; folders that met

    /// att62 F4: a title ending in a Prepend letter (U+0D4E joins the space after it in one
    /// grapheme): the vault's `Bankൎ (2)` is still read as `Bankൎ` numbered, so a new account is
    /// numbered after the vault's and no old one comes in twice.
    @Test func test_importSkipExisting_readsTheNumberAfterAPrependLetter() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let title = "Bank\u{0D4E}"
        try cli.write("one.csv", bytes(Self.header + "\(title),,bob,BOB\n\(title),,carol,CAROL\n"))
        try cli.write("two.csv", bytes(Self.header + "\(title),,bob,BOB\n\(title),,carol,CAROL\n\(title),,alice,ALICE\n"))
        #expect(try cli.run(["import", cli.path("one.csv")] + cli.unlock()).status == 0)
        let result = try cli.run(["import", "--skip-existing", cli.path("two.csv")] + cli.unlock())
        #expect(result.status == 0 && result.stderr.contains("(1 new, 0 replaced, 2 skipped)"), "\(result.stderr)")
        #expect(try get(cli, title) == "BOB" && get(cli, title + " (2)") == "CAROL" && get(cli, title + " (3)") == "ALICE")
        #expect(AccountSkips.title(of: title + " (2)") == title && AccountSkips.number(of: title + " (12)") == 12)
        #expect(AccountSkips.title(of: "a ()") == "a ()" && AccountSkips.number(of: "a (x)") == nil && AccountSkips.number(of: "a") == nil)
    }

    /// att62 F7: `--overwrite` still replaces by name, but an entry that held another account than
    /// its replacement is said (`replaced_other_account`), with `--dry-run` too; never a value.
    @Test func test_importOverwrite_warnsWhenAReplacedEntryHeldAnotherAccount() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        try cli.write("c1.csv", bytes(Self.header + "Bank,,bob,BOB\nBank,,carol,CAROL\n"))
        try cli.write("c2.csv", bytes(Self.header + "Bank,,bob,BOB\nBank,,carol,CAROL\nBank,,alice,ALICE\n"))
        #expect(try cli.run(["import", cli.path("c1.csv")] + cli.unlock()).status == 0)
        let line = "warning: 'Bank' held another account (user bob) than the file's item that replaces it (user alice): --overwrite replaces by name, not by account"
        let dry = try cli.run(["import", "--overwrite", "--dry-run", cli.path("c2.csv")] + cli.unlock())
        #expect(dry.status == 0 && dry.stderr.contains(line), "\(dry.stderr)")
        let result = try cli.run(["import", "--overwrite", "--json", cli.path("c2.csv")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let kinds = (try jsonObject(result.stdout)["warnings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds == ["replaced_other_account", "replaced_other_account"], "\(result.text)")
        #expect(!result.text.contains("BOB") && !result.text.contains("ALICE") && !dry.text.contains("ALICE"), "never a value")
        #expect(try get(cli, "Bank") == "ALICE", "by name, as documented")
        // The same accounts again: nothing to say.
        let again = try cli.run(["import", "--overwrite", cli.path("c2.csv")] + cli.unlock())
        #expect(again.status == 0 && !again.stderr.contains("another account"), "\(again.stderr)")
    }

    /// att62 F2: a KeePass group `Email-Web` keeps `Email-Web/db` from the group `Email/Web`
    /// (cleaned to it), as documented; the renaming says that exact folders decided, not usernames.
    @Test func test_importKeePass_saysExactFoldersDecided() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        func group(_ name: String, _ value: String) -> String {
            "<Group><Name>\(name)</Name><Entry><String><Key>Title</Key><Value>db</Value></String><String><Key>Password</Key><Value>\(value)</Value></String></Entry></Group>"
        }
        try cli.write("g.xml", bytes("<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Root><Group><Name>Root</Name>"
                                      + group("Email/Web", "REAL") + group("Email-Web", "OTHER") + "</Group></Root></KeePassFile>"))
        let result = try cli.run(["import", "--format", "keepass-xml", "--json", cli.path("g.xml")] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("renamed 'Email/Web/db' to 'Email-Web/db (2)' (no username or URL; characters a name cannot hold were replaced; "
                                       + "another item in 'Email-Web' has its folders exactly as its source named them: it keeps that name; "
                                       + "this item's folders were cleaned to the same text (two different source folders met on one name)"), "\(result.stderr)")
        #expect(!result.stderr.contains("usernames, then URLs"), "\(result.stderr)")
        let renamed = try jsonObject(result.stdout)["renamed"] as? [[String: Any]] ?? []
        let reasons = renamed.first?["reasons"] as? [String] ?? []
        #expect(reasons.firstIndex(of: "numbered").map { reasons[$0 + 1] } == "yields_to_exact_folders", "\(reasons)")
        #expect(try get(cli, "Email-Web/db (2)") == "REAL")
    }
}
