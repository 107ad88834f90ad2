import Foundation
import TestSupport
import Testing

/// `vaultfile import --format keepass-xml` of what the real keepassxc-cli writes: a database made
/// with `keepassxc-cli` (groups, an entry with username, URL, notes, an attachment and an edited
/// password), exported with `keepassxc-cli export --format xml`, imported in one command.
/// Skipped (and says so) when keepassxc-cli is not installed (`apt-get install keepassxc`).
@Suite struct KeePassXMLImportCLITests {
    static let keepassxcCLI = ["/usr/bin/keepassxc-cli", "/usr/local/bin/keepassxc-cli"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Makes `kp.xml` in the test's folder with keepassxc-cli; the script's result.
    static func makeExport(_ cli: CLI, tool: String) throws -> CLI.Result {
        try cli.shell("""
            set -e
            cd "\(cli.directory.url.path)"
            KP="\(tool)"
            printf 'pw\\npw\\n' | "$KP" db-create -q -p kp.kdbx
            echo pw | "$KP" mkdir -q kp.kdbx Email
            echo pw | "$KP" mkdir -q kp.kdbx Email/Work
            printf 'pw\\nfirst <secret> & "more"\\n' | "$KP" add -q -u alice --url https://mail.example.com --notes 'line one
            line two' -p kp.kdbx Email/Work/Mail
            printf 'hello attachment\\n' > a.txt
            echo pw | "$KP" attachment-import -q kp.kdbx Email/Work/Mail a.txt a.txt
            printf 'pw\\nsecond secret\\n' | "$KP" edit -q -p kp.kdbx Email/Work/Mail
            printf 'pw\\nhn\\n' | "$KP" add -q -u bob -p kp.kdbx Web
            echo pw | "$KP" export -q -f xml kp.kdbx > kp.xml
            """, extra: ["HOME": cli.directory.url.path, "QT_QPA_PLATFORM": "offscreen"])
    }

    @Test func test_import_keepassXMLOfKeePassXCExport() throws {
        guard let tool = Self.keepassxcCLI else { print("skipped: needs keepassxc-cli (apt-get install keepassxc)"); return }
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let made = try Self.makeExport(cli, tool: tool)
        #expect(made.status == 0, "\(made.stderr)")
        // The harness's vault keeps no history until asked (as a vault of format 1.1).
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        let result = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("kp.xml")])
        #expect(result.status == 0, "\(result.stderr)")
        let listed = try names(cli)
        #expect(listed.contains("Email/Work/Mail") && listed.contains("Web"), "\(listed)")
        #expect(try cli.run(["get", "Email/Work/Mail"] + cli.unlock()).stdout == Array("second secret".utf8))
        #expect(try cli.run(["get", "Email/Work/Mail", "--field", "username"] + cli.unlock()).text == "alice")
        #expect(try cli.run(["get", "Email/Work/Mail", "--field", "url"] + cli.unlock()).text == "https://mail.example.com")
        #expect(try cli.run(["get", "Email/Work/Mail", "--field", "notes"] + cli.unlock()).text == "line one\nline two")
        // The entry's own history (the password before `keepassxc-cli edit`) joins the vault's.
        #expect(try cli.run(["get", "Email/Work/Mail", "--revision", "1"] + cli.unlock()).stdout == Array("first <secret> & \"more\"".utf8))
    }

    /// `--prefix` and the history of a keepass-xml import go through the import's options (the
    /// readers' formats were first read with the builder's defaults: no history, no prefix).
    @Test func test_import_keepassXMLTakesThePrefixAndKeepsHistory() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/import/keepass2.xml").path
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0)
        let result = try cli.run(["import", "--format", "keepass-xml", "--prefix", "kp"] + cli.unlock() + [fixture])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stderr.contains("earlier versions"), "history kept, not reported lost: \(result.stderr)")
        let listed = try names(cli)
        #expect(!listed.isEmpty && listed.allSatisfy { $0.hasPrefix("kp/") }, "\(listed)")
        let revisions = try listed.filter { try cli.run(["get", $0, "--revision", "1"] + cli.unlock()).status == 0 }
        #expect(!revisions.isEmpty, "a history version of keepass2.xml is in the vault")
    }

    @Test func test_import_keepassXMLLeavesTheRecycleBinOut() throws {
        guard let tool = Self.keepassxcCLI else { print("skipped: needs keepassxc-cli (apt-get install keepassxc)"); return }
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        // keepassxc-cli rm and rmdir move an entry and a group (with its entry) into the recycle bin.
        let made = try cli.shell("""
            set -e
            cd "\(cli.directory.url.path)"
            KP="\(tool)"
            printf 'pw\\npw\\n' | "$KP" db-create -q -p kp.kdbx
            printf 'pw\\nkept-pw\\n' | "$KP" add -q -u a -p kp.kdbx Keep
            printf 'pw\\ngone-pw\\n' | "$KP" add -q -u b -p kp.kdbx Gone
            echo pw | "$KP" mkdir -q kp.kdbx Old
            printf 'pw\\nold-pw\\n' | "$KP" add -q -p kp.kdbx Old/Forum
            echo pw | "$KP" rm -q kp.kdbx Gone
            echo pw | "$KP" rmdir -q kp.kdbx Old
            echo pw | "$KP" export -q -f xml kp.kdbx > kp.xml
            """, extra: ["HOME": cli.directory.url.path, "QT_QPA_PLATFORM": "offscreen"])
        #expect(made.status == 0, "\(made.stderr)")
        let xml = String(decoding: try cli.read("kp.xml"), as: UTF8.self)
        #expect(xml.contains("<Name>Recycle Bin</Name>") && xml.contains("gone-pw"), "the export holds the bin")
        let result = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("kp.xml")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try names(cli) == ["Keep"])
        #expect(result.stderr.contains("not kept: entries in KeePass's recycle bin, in 2 items"), "\(result.stderr)")
        let json = try cli.run(["import", "--format", "keepass-xml", "--dry-run", "--overwrite", "--json"] + cli.unlock() + [cli.path("kp.xml")])
        let warnings = (try jsonObject(json.stdout)["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(warnings.contains { $0.contains("entries in KeePass's recycle bin, in 2 items") }, "\(warnings)")
    }

    @Test func test_import_keepassXMLRefusesAKDBXAndHostileXML() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("laughs.xml", Array("<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaa\">]><KeePassFile>&a;</KeePassFile>".utf8))
        let laughs = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("laughs.xml")])
        #expect(laughs.status != 0 && laughs.stderr.contains("document type declaration"), "\(laughs.stderr)")
        try cli.write("bad.xml", [0x3C, 0x4B, 0xFF, 0x3E])
        let bad = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("bad.xml")])
        #expect(bad.status != 0 && bad.stderr.contains("not UTF-8"), "\(bad.stderr)")
        #expect(try names(cli).isEmpty, "nothing imported")
    }
}
