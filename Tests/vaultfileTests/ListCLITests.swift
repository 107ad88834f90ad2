import Foundation
import TestSupport
import Testing

/// `vaultfile list` and `ls`: prefixes are whole path segments; a name that is nothing says so;
/// times print in the second they fall in.
@Suite struct ListCLITests {

    @Test func test_list_prefixMatchesWholePathSegments() throws {
        let cli = try CLI.withEntriesSet(["prod": "a", "prod/db": "b", "production/db": "c", "prod (2)": "d", "prodx/y": "e"])
        defer { cli.directory.remove() }
        #expect(try cli.run(["list", "prod"] + cli.unlock()).text == "prod\nprod/db\n")
        #expect(try cli.run(["list", "prod/"] + cli.unlock()).text == "prod/db\n")
        #expect(try cli.run(["list", "prod/db"] + cli.unlock()).text == "prod/db\n")
        let json = try cli.run(["list", "--json", "prod"] + cli.unlock())
        #expect(json.text.contains("\"prod/db\"") && !json.text.contains("production"), "\(json.text)")
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("list prod\n".utf8)).text == "prod\nprod/db\n")
    }

    /// Issue 39, item 10: −5 ms was printed one second late (`1970-01-01T00:00:00.995Z`) while
    /// `export` had it right. Every printed time now reads back (import) as the milliseconds export writes.
    @Test func test_listJSON_negativeTimesReadBackAsTheMillisecondsExportWrites() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let times: [(created: Int64, modified: Int64)] = [(-5, -1_005), (-86_400_001, -1), (-62_167_219_200_001, 1_700_000_000_123)]
        let items = times.enumerated().map { "{\"name\":\"e\($0.offset)\",\"value\":\"x\",\"created\":\($0.element.created),\"modified\":\($0.element.modified)}" }
        try cli.write("in.json", Array("{\"vaultfile_export\":1,\"entries\":[\(items.joined(separator: ","))]}".utf8))
        #expect(try cli.run(["import", cli.path("in.json"), "--format", "json"] + cli.unlock()).status == 0)
        let listed = try cli.run(["list", "--json"] + cli.unlock())
        #expect(listed.text.contains("\"created\":\"1969-12-31T23:59:59.995Z\",\"modified\":\"1969-12-31T23:59:58.995Z\""), "\(listed.text)")
        #expect(listed.text.contains("\"created\":\"1969-12-30T23:59:59.999Z\",\"modified\":\"1969-12-31T23:59:59.999Z\""), "\(listed.text)")
        #expect(listed.text.contains("\"created\":\"-0001-12-31T23:59:59.999Z\""), "\(listed.text)")
        let got = try cli.run(["get", "e0", "--json"] + cli.unlock())
        #expect(got.text.contains("\"created\":\"1969-12-31T23:59:59.995Z\""), "\(got.text)")
        // The text list --json prints, imported into another vault, is the milliseconds export writes.
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [[String: Any]])
        let fromList = rows.map { "{\"name\":\"\($0["name"]!)\",\"value\":\"x\",\"created\":\"\($0["created"]!)\",\"modified\":\"\($0["modified"]!)\"}" }
        try cli.write("listed.json", Array("{\"vaultfile_export\":1,\"entries\":[\(fromList.joined(separator: ","))]}".utf8))
        try cli.initVault("copy.vault")
        #expect(try cli.run(["import", cli.path("listed.json"), "--format", "json"] + cli.unlock("copy.vault")).status == 0)
        let exported = try cli.run(["export", "--format", "json"] + cli.unlock("copy.vault"))
        for (created, modified) in times {
            #expect(exported.text.contains("\"created\" : \(created),\n      \"modified\" : \(modified),"), "\(exported.text)")
        }
    }

    @Test func test_ls_aNameThatIsNeitherEntryNorFolderSaysSo() throws {
        let cli = try CLI.withVault(["prod/db": "d"]); defer { cli.directory.remove() }
        for name in ["nosuch", "nosuch/"] {
            let result = try cli.run(["ls", name] + cli.unlock())
            #expect(result.status == 1 && result.stdout.isEmpty)
            #expect(result.stderr.contains("no entry or folder named 'nosuch'"), "\(result.stderr)")
        }
    }
}
