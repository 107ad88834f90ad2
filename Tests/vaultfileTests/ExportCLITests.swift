import Foundation
import TestSupport
import Testing

/// `vaultfile export --format json`: its times and its summary. (The round trip and the other
/// formats are in ScriptingCLITests; `--out` in OutputFileCLITests.)
@Suite struct ExportCLITests {

    @Test func test_exportJson_keepsEpochMillisecondsAndImportReadsBothForms() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let exported = try jsonObject(try cli.run(["export", "--format", "json"] + cli.unlock()).stdout)
        let entry = try #require((exported["entries"] as? [[String: Any]])?.first)
        #expect(exported["vaultfile_export"] as? Int == 1)
        #expect(entry["created"] is NSNumber && entry["modified"] is NSNumber, "version 1 writes epoch milliseconds")
        let other = try CLI.withEntriesSet([]); defer { other.directory.remove() }
        let file = """
            {"vaultfile_export": 1, "entries": [
              {"name": "ms", "value": "1", "created": 1700000000123, "modified": 1700000000456},
              {"name": "text", "value": "2", "created": "2023-11-14T22:13:20.123Z", "modified": "2023-11-15T00:13:20.456+02:00"}]}
            """
        let imported = try other.run(["import", "--format", "json"] + other.unlock(), stdin: bytes(file))
        #expect(imported.status == 0, "\(imported.stderr)")
        let listed = try JSONSerialization.jsonObject(with: Data(try other.run(["list", "--json"] + other.unlock()).stdout)) as? [[String: Any]]
        #expect(listed?.map { $0["created"] as? String } == ["2023-11-14T22:13:20.123Z", "2023-11-14T22:13:20.123Z"])
        #expect(listed?.map { $0["modified"] as? String } == ["2023-11-14T22:13:20.456Z", "2023-11-14T22:13:20.456Z"])
        let bad = file.replacingOccurrences(of: "2023-11-14T22:13:20.123Z", with: "yesterday")
        #expect(try other.run(["import", "--format", "json", "--overwrite"] + other.unlock(), stdin: bytes(bad)).status == 2)
    }

    @Test func test_exportJson_summaryOnlyWithOut() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x")), ("b", bytes("y"))]); defer { cli.directory.remove() }
        let result = try cli.run(["export", "--format", "json", "--out", cli.path("out.json"), "--json"] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try jsonObject(result.stdout)
        #expect(summary["exported"] as? Int == 2 && summary["format"] as? String == "json" && summary["path"] as? String == cli.path("out.json"))
        #expect(try cli.run(["export", "--format", "json", "--json"] + cli.unlock()).status == 64)
    }
}
