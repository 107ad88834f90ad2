import Foundation
import TestSupport
import Testing

/// Issue 26 through the binary: batch framing, import renamings, times and --json schemas (docs/JSON.md).
@Suite struct DailyUseOutputCLITests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func vaultWith(_ entries: [(String, [UInt8])]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: value)
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    private func objects(_ output: [UInt8]) throws -> [[String: Any]] {
        try String(decoding: output, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    private func object(_ output: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any])
    }

    // MARK: - batch

    @Test func test_batch_defaultOutputStaysBackToBack() throws {
        let cli = try vaultWith([("a", bytes("x")), ("Work/GitHub", bytes("g"))]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: bytes("get a\nlist Work\n"))
        #expect(result.text == "xWork/GitHub\n", "scripts such as x=$(echo 'get a' | vaultfile batch) keep working")
    }

    @Test func test_batch_jsonPrintsOneObjectPerLine() throws {
        let cli = try vaultWith([("a", bytes("x")), ("bin", [0xFF, 0x00]), ("Work/GitHub", bytes("g"))]); defer { cli.directory.remove() }
        let script = "get a\nlist Work\n# a comment\nset new --value v\nget bin\n"
        let result = try cli.run(["batch", "--json"] + cli.unlock(), stdin: bytes(script))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try objects(result.stdout)
        try #require(lines.count == 4)
        #expect(lines[0]["line"] as? Int == 1 && lines[0]["verb"] as? String == "get" && lines[0]["ok"] as? Bool == true)
        #expect(lines[0]["value"] as? String == "x" && lines[0]["encoding"] as? String == "utf-8")
        #expect(lines[1]["verb"] as? String == "list" && lines[1]["names"] as? [String] == ["Work/GitHub"])
        #expect(lines[2]["line"] as? Int == 4 && lines[2]["verb"] as? String == "set" && lines[2]["value"] == nil)
        #expect(lines[3]["value"] as? String == "/wA=" && lines[3]["encoding"] as? String == "base64")
    }

    @Test func test_batch_jsonFailureNamesTheLineAndChangesNothing() throws {
        let cli = try vaultWith([("a", bytes("x"))]); defer { cli.directory.remove() }
        let result = try cli.run(["batch", "--json"] + cli.unlock(), stdin: bytes("set b --value y\nget a\nrm missing\n"))
        #expect(result.status == 1)
        let lines = try objects(result.stdout)
        #expect(lines.count == 1, "only the failing line: nothing else happened")
        #expect(lines.first?["line"] as? Int == 3 && lines.first?["ok"] as? Bool == false && lines.first?["status"] as? Int == 1)
        #expect((lines.first?["error"] as? String)?.contains("missing") == true)
        #expect(try cli.run(["get", "b"] + cli.unlock()).status == 1)
    }

    @Test func test_batch_zEndsEachResultWithNULAndRefusesANULInside() throws {
        let cli = try vaultWith([("a", bytes("x")), ("Work/GitHub", bytes("g")), ("nul", [0x61, 0x00, 0x62])]); defer { cli.directory.remove() }
        let framed = try cli.run(["batch", "-z"] + cli.unlock(), stdin: bytes("get a\nset n --value v\nlist Work\n"))
        #expect(framed.stdout == bytes("x\u{0}Work/GitHub\n\u{0}"), "\(framed.stderr)")
        let refused = try cli.run(["batch", "-z"] + cli.unlock(), stdin: bytes("get a\nget nul\n"))
        #expect(refused.status == 2 && refused.stdout.isEmpty)
        #expect(refused.stderr.contains("line 2:") && refused.stderr.contains("--json"), "\(refused.stderr)")
        #expect(try cli.run(["batch", "-z", "--json"] + cli.unlock(), stdin: bytes("get a\n")).status == 64)
    }

    // MARK: - import: renamings

    @Test func test_import_printsEveryRenaming() throws {
        let cli = try vaultWith([]); defer { cli.directory.remove() }
        let csv = """
            "Group","Title","Username","Password","URL","Notes"
            "Root/Work","Café / Bar","u","p1","",""
            "Root/Work","db01","u","p2","",""
            "Root/Work","db01","u","p3","",""

            """
        let result = try cli.run(["import", "--format", "keepassxc-csv", "--json"] + cli.unlock(), stdin: bytes(csv))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("renamed 'Work/Café / Bar' to 'Work/Café - Bar'"), "\(result.stderr)")
        #expect(result.stderr.contains("renamed 'Work/db01' to 'Work/db01 (2)' (an earlier item has that name)"), "\(result.stderr)")
        let summary = try object(result.stdout)
        #expect(summary["imported"] as? Int == 3 && summary["added"] as? Int == 3 && summary["replaced"] as? Int == 0)
        let renamed = try #require(summary["renamed"] as? [[String: Any]])
        #expect(renamed.map { $0["to"] as? String } == ["Work/Café - Bar", "Work/db01 (2)"])
        #expect(renamed.first?["from"] as? String == "Work/Café / Bar" && renamed.first?["reasons"] as? [String] == ["cleaned"])
        #expect(renamed.last?["reasons"] as? [String] == ["numbered"])
    }

    @Test func test_import_countsOneEntryInTheSingular() throws {
        let cli = try vaultWith([("b", bytes("old"))]); defer { cli.directory.remove() }
        let exported = try cli.run(["export", "--format", "json", "--out", cli.path("b.json")] + cli.unlock())
        #expect(exported.status == 0 && exported.stderr.contains("exported 1 entry to "), "\(exported.stderr)")
        let imported = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes("a=1\n"))
        #expect(imported.status == 0 && imported.stderr.contains("imported 1 entry from stdin (1 new, 0 replaced)"), "\(imported.stderr)")
        let clash = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: bytes("b=2\n"))
        #expect(clash.status == 2 && clash.stderr.contains("1 entry exists already ('b'); nothing was imported"), "\(clash.stderr)")
        #expect(clash.stderr.contains("pass --overwrite to replace it\n"), "\(clash.stderr)")
    }

    @Test func test_import_aDecomposedNameIsStoredComposedAndSaysSo() throws {
        let cli = try vaultWith([]); defer { cli.directory.remove() }
        let json = "{\"vaultfile_export\":1,\"entries\":[{\"name\":\"cafe\u{301}\",\"value\":\"v\"}]}"
        let result = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: bytes(json))
        #expect(result.status == 0 && result.stderr.contains("put in Unicode NFC"), "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).stdout == bytes("caf\u{E9}\n"))
    }

    // MARK: - times

    @Test func test_exportJson_keepsEpochMillisecondsAndImportReadsBothForms() throws {
        let cli = try vaultWith([("a", bytes("x"))]); defer { cli.directory.remove() }
        let exported = try object(try cli.run(["export", "--format", "json"] + cli.unlock()).stdout)
        let entry = try #require((exported["entries"] as? [[String: Any]])?.first)
        #expect(exported["vaultfile_export"] as? Int == 1)
        #expect(entry["created"] is NSNumber && entry["modified"] is NSNumber, "version 1 writes epoch milliseconds")
        let other = try vaultWith([]); defer { other.directory.remove() }
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

    // MARK: - --json of each verb

    @Test func test_getJson_printsValueFieldsAndTimes() throws {
        let cli = try vaultWith([("db", bytes("s3cret")), ("bin", [0x00, 0xFF])]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "db", "--field", "user"] + cli.unlock(), stdin: bytes("admin")).status == 0)
        let whole = try object(try cli.run(["get", "db", "--json"] + cli.unlock()).stdout)
        #expect(whole["name"] as? String == "db" && whole["value"] as? String == "s3cret" && whole["encoding"] as? String == "utf-8")
        let fields = try #require(whole["fields"] as? [String: [String: String]])
        #expect(fields == ["user": ["value": "admin", "encoding": "utf-8"]])
        #expect((whole["created"] as? String)?.hasSuffix("Z") == true && (whole["modified"] as? String)?.count == 24)
        let field = try object(try cli.run(["get", "db", "--field", "user", "--json"] + cli.unlock()).stdout)
        #expect(field["field"] as? String == "user" && field["value"] as? String == "admin")
        let binary = try object(try cli.run(["get", "bin", "--json"] + cli.unlock()).stdout)
        #expect(binary["value"] as? String == "AP8=" && binary["encoding"] as? String == "base64")
        #expect(try cli.run(["get", "missing", "--json"] + cli.unlock()).status == 1)
    }

    @Test func test_searchJson_listsMatchesWithoutValues() throws {
        let cli = try vaultWith([("Work/GitHub", bytes("tok")), ("home/wifi", bytes("w"))]); defer { cli.directory.remove() }
        let result = try cli.run(["search", "Git", "--json"] + cli.unlock())
        let matches = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]])
        #expect(matches.map { $0["name"] as? String } == ["Work/GitHub"])
        #expect(matches.first?["modified"] is String && !result.text.contains("tok"))
    }

    @Test func test_exportJson_summaryOnlyWithOut() throws {
        let cli = try vaultWith([("a", bytes("x")), ("b", bytes("y"))]); defer { cli.directory.remove() }
        let result = try cli.run(["export", "--format", "json", "--out", cli.path("out.json"), "--json"] + cli.unlock())
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try object(result.stdout)
        #expect(summary["exported"] as? Int == 2 && summary["format"] as? String == "json" && summary["path"] as? String == cli.path("out.json"))
        #expect(try cli.run(["export", "--format", "json", "--json"] + cli.unlock()).status == 64)
    }
}
