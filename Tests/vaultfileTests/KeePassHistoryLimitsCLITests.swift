import Foundation
import TestSupport
import Testing

/// KeePass history past the vault's history limits (issue 45's attacker review): the versions an
/// import cannot keep (past the count per entry, or from a version past the byte budget on) are
/// named in a warning with their count, as history a vault keeps none of is, by `--dry-run` too.
@Suite struct KeePassHistoryLimitsCLITests {
    /// KeePass 2 XML: `Busy` with `busy` earlier versions, `Heavy` with one of 2 MiB (past the
    /// standard 1 MiB budget), `Fine` with two, all with distinct times.
    static func xml(busy: Int) -> [UInt8] {
        func time(_ minute: Int) -> String {
            let date = Date(timeIntervalSince1970: 1_600_000_000 + Double(minute) * 60)
            return ISO8601DateFormatter().string(from: date)
        }
        func entry(_ title: String, _ password: String, minute: Int, notes: String = "", history: String = "") -> String {
            "<Entry><Times><LastModificationTime>\(time(minute))</LastModificationTime></Times>"
                + "<String><Key>Title</Key><Value>\(title)</Value></String>"
                + "<String><Key>Password</Key><Value>\(password)</Value></String>"
                + (notes.isEmpty ? "" : "<String><Key>Notes</Key><Value>\(notes)</Value></String>")
                + (history.isEmpty ? "" : "<History>\(history)</History>") + "</Entry>"
        }
        let busyHistory = (0..<busy).map { entry("Busy", "busy-\($0)", minute: $0) }.joined()
        let heavyHistory = entry("Heavy", "heavy-old", minute: 1, notes: String(repeating: "n", count: 2 << 20))
        let fineHistory = entry("Fine", "fine-0", minute: 1) + entry("Fine", "fine-1", minute: 2)
        return Array(("<?xml version=\"1.0\" encoding=\"utf-8\"?><KeePassFile><Meta><Generator>KeePass</Generator></Meta><Root><Group><Name>Root</Name>"
            + entry("Busy", "busy-now", minute: busy + 1, history: busyHistory)
            + entry("Heavy", "heavy-now", minute: 2, history: heavyHistory)
            + entry("Fine", "fine-now", minute: 3, history: fineHistory)
            + "</Group></Root></KeePassFile>").utf8)
    }

    /// The number of revisions `get NAME --revision N` finds.
    private func revisions(_ cli: CLI, _ name: String, vault: String = "t.vault") throws -> Int {
        var count = 0
        while try cli.run(["get", name, "--revision", "\(count + 1)"] + cli.unlock(vault)).status == 0 { count += 1 }
        return count
    }

    @Test func test_importKeePassXML_historyPastTheVaultsLimitsIsNamedByDryRunAndImport() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable"] + cli.unlock()).status == 0, "standard limits: 10 versions, 1 MiB per entry")
        try cli.write("kp.xml", Self.xml(busy: 300))
        let warning = "not kept: 291 earlier versions of 2 entries ('Busy', 'Heavy'), past the vault's history limits (10 versions and 1048576 bytes per entry"

        let dry = try cli.run(["import", "--format", "keepass-xml", "--dry-run"] + cli.unlock() + [cli.path("kp.xml")])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stderr.contains(warning), "\(dry.stderr)")
        #expect(dry.text.contains("history Busy (300 earlier versions merged, 290 past the vault's history limits not kept)"), "\(dry.text)")
        #expect(dry.text.contains("history Heavy (1 earlier version merged, 1 past the vault's history limits not kept)"), "\(dry.text)")
        #expect(dry.text.contains("history Fine (2 earlier versions merged)\n"), "\(dry.text)")
        #expect(try names(cli).isEmpty, "a dry run changes nothing")

        let json = try cli.run(["import", "--format", "keepass-xml", "--dry-run", "--json"] + cli.unlock() + [cli.path("kp.xml")])
        let object = try jsonObject(json.stdout)
        let kinds = (object["warnings"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.contains("history_trimmed"), "\(kinds)")
        let dropped = (object["history"] as? [[String: Any]] ?? []).reduce(into: [String: Int]()) { $0[$1["name"] as? String ?? ""] = $1["dropped"] as? Int }
        #expect(dropped == ["Busy": 290, "Heavy": 1, "Fine": 0], "\(dropped)")

        let result = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("kp.xml")])
        #expect(result.status == 0 && result.stderr.contains(warning), "\(result.stderr)")
        #expect(try revisions(cli, "Busy") == 10 && revisions(cli, "Heavy") == 0 && revisions(cli, "Fine") == 2)
        // The newest are the ones kept.
        #expect(try cli.run(["get", "Busy", "--revision", "1"] + cli.unlock()).text == "busy-299")
        #expect(try cli.run(["get", "Busy", "--revision", "10"] + cli.unlock()).text == "busy-290")
    }

    /// The same through a KDBX: a vault keeping 255 versions (8 MiB) exports 255 of `Busy`; a vault
    /// keeping 10 (1 MiB) imports them with the warning.
    @Test func test_importKDBX_historyPastTheVaultsLimitsIsNamed() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        #expect(try cli.run(["history", "--enable", "--keep-history", "255", "--history-bytes", "8M"] + cli.unlock()).status == 0)
        try cli.write("kp.xml", Self.xml(busy: 300))
        let wide = try cli.run(["import", "--format", "keepass-xml"] + cli.unlock() + [cli.path("kp.xml")])
        #expect(wide.status == 0 && wide.stderr.contains("not kept: 45 earlier versions of 1 entry ('Busy')"), "\(wide.stderr)")
        try cli.write("fpw", Array("kp-pw".utf8))
        let exported = try cli.run(["export", "--format", "kdbx", "--out", cli.path("kp.kdbx"), "--new-password-file", cli.path("fpw")]
                                   + ExternalTools.KDBXExportCLITests.tiny + cli.unlock())
        #expect(exported.status == 0, "\(exported.stderr)")
        try cli.initVault("narrow.vault")
        #expect(try cli.run(["history", "--enable"] + cli.unlock("narrow.vault")).status == 0)
        let result = try cli.run(["import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw")] + cli.unlock("narrow.vault") + [cli.path("kp.kdbx")])
        #expect(result.status == 0, "\(result.stderr)")
        // Heavy's 2 MiB version, kept under 8 MiB, passes the 1 MiB budget of the second vault.
        #expect(result.stderr.contains("not kept: 246 earlier versions of 2 entries ('Busy', 'Heavy'), past the vault's history limits (10 versions"),
                "\(result.stderr)")
        #expect(try revisions(cli, "Busy", vault: "narrow.vault") == 10)
    }
}
