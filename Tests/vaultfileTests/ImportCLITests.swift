import Foundation
import TestSupport
import Testing

/// `vaultfile import`: renamings, counts, `--help`, variables that take over programs, and a JSON
/// key given twice. (Formats and all-or-nothing are in ScriptingCLITests.)
@Suite struct ImportCLITests {

    // MARK: - What it reports

    @Test func test_import_printsEveryRenaming() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let csv = """
            "Group","Title","Username","Password","URL","Notes"
            "Root/Work","Café / Bar","u","p1","",""
            "Root/Work","db01","u","p2","",""
            "Root/Work","db01","u","p3","",""

            """
        let result = try cli.run(["import", "--format", "keepassxc-csv", "--json"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("renamed 'Work/Café / Bar' to 'Work/Café - Bar'"), "\(result.stderr)")
        #expect(result.stderr.contains("renamed 'Work/db01' to 'Work/db01 (2)' (user u; other items have that name: numbered in the order of their usernames, "
                                       + "then URLs, then values; the original title is kept in the field 'title')"), "\(result.stderr)")
        let summary = try jsonObject(result.stdout)
        #expect(summary["imported"] as? Int == 3 && summary["added"] as? Int == 3 && summary["replaced"] as? Int == 0)
        let renamed = try #require(summary["renamed"] as? [[String: Any]])
        #expect(renamed.map { $0["to"] as? String } == ["Work/Café - Bar", "Work/db01 (2)"])
        #expect(renamed.first?["from"] as? String == "Work/Café / Bar" && renamed.first?["reasons"] as? [String] == ["cleaned", "title_kept"])
        #expect(renamed.last?["reasons"] as? [String] == ["numbered", "title_kept"] && renamed.last?["account"] as? String == "user u")
    }

    @Test func test_import_countsOneEntryInTheSingular() throws {
        let cli = try CLI.withEntriesSet([("b", bytes("old"))]); defer { cli.directory.remove() }
        let exported = try cli.run(["export", "--format", "json", "--out", cli.path("b.json")] + cli.unlock())
        #expect(exported.status == 0 && exported.stderr.contains("exported 1 entry to "), "\(exported.stderr)")
        let imported = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes("a=1\n"))
        #expect(imported.status == 0 && imported.stderr.contains("imported 1 entry from stdin (1 new, 0 replaced)"), "\(imported.stderr)")
        let clash = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes("b=2\n"))
        #expect(clash.status == 2 && clash.stderr.contains("1 entry exists already ('b'); nothing was imported"), "\(clash.stderr)")
        #expect(clash.stderr.contains("pass --overwrite to replace it (or --skip-existing to keep it)\n"), "\(clash.stderr)")
    }

    @Test func test_importHelp_namesEachFormatAndWhatHappensOnAClash() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let help = try cli.run(["import", "--help"]).text
        for format in ["json ", "dotenv ", "csv ", "keepassxc-csv ", "bitwarden-json "] {
            #expect(help.contains("\n  " + format), "the format \(format) has its own line")
        }
        let words = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")  // as wrapped to any width
        #expect(words.contains("Clashes: when a name in the file is already an entry of the vault, nothing is imported"), "\(help)")
        #expect(words.contains("with --overwrite each such entry is replaced whole"))
    }

    // MARK: - Hostile input

    @Test func test_import_warnsAboutVariablesThatTakeOverPrograms() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        let text = "LD_PRELOAD=/tmp/evil.so\nDB_PASSWORD=hunter2\nPATH=/tmp/bin\nPYTHONPATH=/tmp/py\n"
        let result = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: Array(text.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("vaultfile: warning: entry ") }
        #expect(warnings.count == 3, "\(result.stderr)")
        for name in ["LD_PRELOAD", "PATH", "PYTHONPATH"] { #expect(warnings.contains { $0.contains("'\(name)'") }, "\(name)") }
        #expect(!result.stderr.contains("/tmp/evil.so") && !result.stderr.contains("hunter2"), "never a value")
        #expect(try names(cli).count == 4)
    }

    @Test func test_import_refusesAJSONKeyGivenTwice() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        let text = "{\"vaultfile_export\": 1,\n \"entries\": [{\"name\": \"a\", \"value\": \"shown\", \"value\": \"hidden\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: Array(text.utf8))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'value' appears twice") && result.stderr.contains("line 2") && result.stderr.contains("entries[0]"),
                "\(result.stderr)")
        #expect(try names(cli).isEmpty)
    }
}
