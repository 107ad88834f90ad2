import Foundation
import TestSupport
import Testing

/// What users type and import, through the binary (issue 25, items 10, 13, 14, 16).
@Suite struct InputHardeningCLITests {
    /// A vault with the given entries.
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: Array(value.utf8))
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    private func names(_ cli: CLI) throws -> [String] {
        try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
    }

    private let reversed = "db/\u{202E}drowssap"  // shows as "db/password" on a terminal

    @Test func test_import_warnsAboutVariablesThatTakeOverPrograms() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
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
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let text = "{\"vaultfile_export\": 1,\n \"entries\": [{\"name\": \"a\", \"value\": \"shown\", \"value\": \"hidden\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: Array(text.utf8))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'value' appears twice") && result.stderr.contains("line 2") && result.stderr.contains("entries[0]"),
                "\(result.stderr)")
        #expect(try names(cli).isEmpty)
    }
}
