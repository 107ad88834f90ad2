import Foundation
import TestSupport
import Testing

/// `vaultfile list` and `ls`: prefixes are whole path segments; a name that is nothing says so.
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

    @Test func test_ls_aNameThatIsNeitherEntryNorFolderSaysSo() throws {
        let cli = try CLI.withVault(["prod/db": "d"]); defer { cli.directory.remove() }
        for name in ["nosuch", "nosuch/"] {
            let result = try cli.run(["ls", name] + cli.unlock())
            #expect(result.status == 1 && result.stdout.isEmpty)
            #expect(result.stderr.contains("no entry or folder named 'nosuch'"), "\(result.stderr)")
        }
    }
}
