import Foundation
import TestSupport
import Testing

/// `--NAME=` with nothing after the `=` is a usage error before swift-argument-parser reads the
/// line: its 1.8 releases take the next argument as the value (cold63 F1: `import --prefix=
/// export.csv` imported stdin under `export.csv/`).
@Suite struct EmptyInlineValueCLITests {
    // MARK: - Failure

    @Test func test_import_emptyInlinePrefixIsAUsageErrorAndImportsNothing() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.write("in.csv", Array("name,value\na,1\n".utf8))
        let stdin = Array(#"{"version":1,"entries":[{"name":"from-stdin","value":"x"}]}"#.utf8)
        let result = try cli.run(["import", "--prefix=", cli.path("in.csv")] + cli.unlock(), stdin: stdin)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--prefix= has no value after the '='"), "\(result.stderr)")
        let list = try cli.run(["list"] + cli.unlock())
        #expect(list.status == 0 && list.text.isEmpty, "nothing imported: \(list.text)")
    }

    @Test func test_verbs_emptyInlineValueOfAnyOptionIsAUsageError() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for line in [["get", "--vault=", "k"], ["import", "--format=", "x.csv"], ["export", "--format=", "--vault", cli.path("t.vault")],
                     ["exec", "--prefix=", "--", "true"], ["list", "--json="]] {
            let result = try cli.run(line)
            #expect(result.status == 64, "\(line): \(result.stderr)")
            #expect(result.stderr.contains("\(line[1]) has no value after the '='"), "\(line): \(result.stderr)")
        }
    }

    @Test func test_batch_emptyInlineValueInALineIsRefusedWithItsLineNumber() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("set a --value-file= b\n".utf8))
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("line 1: --value-file= has no value"), "\(result.stderr)")
    }

    // MARK: - Edge cases

    @Test func test_exec_anEmptyInlineValueAfterTheTerminatorIsTheCommandsOwn() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        try cli.setEntries(["app/A": "1"])
        let result = try cli.run(["exec", "--prefix", "app/"] + cli.unlock() + ["--", "/bin/echo", "--flag="])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "--flag=\n")
    }
}
