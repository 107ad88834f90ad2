import Foundation
import TestSupport
import Testing

/// `vaultfile batch`: output framing (back to back, `--json`, `-z`), the verbs it runs, and the
/// README's and the manual's examples as written.
@Suite struct BatchCLITests {
    /// The environment a README reader has: `vaultfile` on PATH, the vault and its password set once.
    private func readerEnvironment(_ cli: CLI) -> [String: String] {
        ["PATH": URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
         "VAULTFILE_PATH": cli.path("t.vault"), "VAULTFILE_PASSWORD_FILE": cli.path("pw")]
    }

    // MARK: - Output

    @Test func test_batch_defaultOutputStaysBackToBack() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x")), ("Work/GitHub", bytes("g"))]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: bytes("get a\n"))
        #expect(result.text == "x", "scripts such as x=$(echo 'get a' | vaultfile batch) keep working")
        // A get beside a list ran into its names ("xWork/GitHub"): refused now (DailyUseCLITests).
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: bytes("get a\nlist Work\n")).status == 64)
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: bytes("list Work\n")).text == "Work/GitHub\n")
    }

    @Test func test_batch_jsonPrintsOneObjectPerLine() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x")), ("bin", [0xFF, 0x00]), ("Work/GitHub", bytes("g"))]); defer { cli.directory.remove() }
        let script = "get a\nlist Work\n# a comment\nset new --value v\nget bin\n"
        let result = try cli.run(["batch", "--json"] + cli.unlock(), stdin: bytes(script))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try jsonLines(result.stdout)
        try #require(lines.count == 4)
        #expect(lines[0]["line"] as? Int == 1 && lines[0]["verb"] as? String == "get" && lines[0]["ok"] as? Bool == true)
        #expect(lines[0]["value"] as? String == "x" && lines[0]["encoding"] as? String == "utf-8")
        #expect(lines[1]["verb"] as? String == "list" && lines[1]["names"] as? [String] == ["Work/GitHub"])
        #expect(lines[2]["line"] as? Int == 4 && lines[2]["verb"] as? String == "set" && lines[2]["value"] == nil)
        #expect(lines[3]["value"] as? String == "/wA=" && lines[3]["encoding"] as? String == "base64")
    }

    @Test func test_batch_jsonFailureNamesTheLineAndChangesNothing() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let result = try cli.run(["batch", "--json"] + cli.unlock(), stdin: bytes("set b --value y\nget a\nrm missing\n"))
        #expect(result.status == 1)
        let lines = try jsonLines(result.stdout)
        #expect(lines.count == 1, "only the failing line: nothing else happened")
        #expect(lines.first?["line"] as? Int == 3 && lines.first?["ok"] as? Bool == false && lines.first?["status"] as? Int == 1)
        #expect((lines.first?["error"] as? String)?.contains("missing") == true)
        #expect(try cli.run(["get", "b"] + cli.unlock()).status == 1)
    }

    @Test func test_batch_zEndsEachResultWithNULAndRefusesANULInside() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x")), ("Work/GitHub", bytes("g")), ("nul", [0x61, 0x00, 0x62])]); defer { cli.directory.remove() }
        let framed = try cli.run(["batch", "-z"] + cli.unlock(), stdin: bytes("get a\nset n --value v\nlist Work\n"))
        #expect(framed.stdout == bytes("x\u{0}Work/GitHub\n\u{0}"), "\(framed.stderr)")
        let refused = try cli.run(["batch", "-z"] + cli.unlock(), stdin: bytes("get a\nget nul\n"))
        #expect(refused.status == 2 && refused.stdout.isEmpty)
        #expect(refused.stderr.contains("line 2:") && refused.stderr.contains("--json"), "\(refused.stderr)")
        #expect(try cli.run(["batch", "-z", "--json"] + cli.unlock(), stdin: bytes("get a\n")).status == 64)
    }

    // MARK: - The verbs of batch

    @Test func test_batch_anUnsupportedVerbListsTheVerbsBatchRuns() throws {
        let cli = try CLI.withVault(["a": "x"]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("get a\nedit a\n".utf8))
        #expect(result.status == 64 && result.stdout.isEmpty)
        #expect(result.stderr.contains("line 2: 'edit' is not a batch command; batch runs set, get, rm, mv, cp and list"), "\(result.stderr)")
    }

    // MARK: - The examples, verbatim

    @Test func test_readme_batchExamplesRunAsWritten() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let readme = try String(contentsOf: ProjectPaths.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n").map(String.init).filter { $0.hasPrefix("printf ") && $0.contains("| vaultfile batch") }
        #expect(lines.count == 2, "\(lines)")
        var outputs: [String] = []
        for line in lines {
            let result = try cli.shell(line, extra: readerEnvironment(cli))
            #expect(result.status == 0, "\(line): \(result.stderr)")
            outputs.append(result.text)
        }
        #expect(outputs.first == "x")
        #expect(outputs.last?.split(separator: "\n").count == 2 && outputs.last?.contains(#""names":["b"]"#) == true, "\(outputs)")
    }

    @Test func test_manPage_batchExampleRunsAsWritten() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let man = try String(contentsOf: ProjectPaths.root.appendingPathComponent("man/vaultfile.1"), encoding: .utf8)
        let lines = man.split(separator: "\n").filter { $0.hasPrefix("printf ") && $0.contains("| vaultfile batch") }
        #expect(lines.count == 1)
        for line in lines {
            // The groff escapes of the page, as man shows them.
            let shown = line.replacingOccurrences(of: "\\(aq", with: "'").replacingOccurrences(of: "\\-", with: "-")
                .replacingOccurrences(of: "\\e", with: "\\")
            let result = try cli.shell(shown, extra: readerEnvironment(cli))
            #expect(result.status == 0, "\(shown): \(result.stderr)")
        }
        #expect(try cli.run(["list"] + cli.unlock()).text == "b\n")
    }
}
