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

    // MARK: - Issue 47: binary values in dotenv, `--out -`

    /// A dotenv export of a vault holding binary values writes every text entry, leaves the binary
    /// ones out, warns naming each of them, and exits 0; `--json` lists them; json still carries them.
    @Test func test_exportDotenv_leavesBinaryValuesOutAndNamesThem() throws {
        let cli = try CLI.withEntriesSet([("app/url", bytes("https://x")), ("certs/p12", [0x30, 0x82, 0xFF, 0x00]),
                                          ("nul", bytes("a") + [0] + bytes("b")), ("token", bytes("t"))])
        defer { cli.directory.remove() }
        let dotenv = try cli.run(["export", "--format", "dotenv"] + cli.unlock())
        #expect(dotenv.status == 0, "\(dotenv.stderr)")
        #expect(dotenv.text == "APP_URL=\"https://x\"\nTOKEN=\"t\"\n")
        #expect(dotenv.stderr.contains("warning: left out 2 entries holding binary data") && dotenv.stderr.contains("'certs/p12', 'nul'"),
                "\(dotenv.stderr)")
        #expect(dotenv.stderr.contains("--format json"), "the warning says what carries them")
        let summary = try cli.run(["export", "--format", "dotenv", "--out", cli.path("out.env"), "--json"] + cli.unlock())
        #expect(summary.status == 0, "\(summary.stderr)")
        let object = try jsonObject(summary.stdout)
        #expect(object["skipped"] as? [String] == ["certs/p12", "nul"] && object["exported"] as? Int == 2)
        #expect(try cli.read("out.env") == dotenv.stdout)
        // A vault of binary values only: an empty export, still a warning, still exit 0.
        let prefixed = try cli.run(["export", "--format", "dotenv", "--prefix", "certs/"] + cli.unlock())
        #expect(prefixed.status == 0 && prefixed.stdout.isEmpty && prefixed.stderr.contains("'certs/p12'"))
        // Nothing left out: no warning; json carries the binary values and says nothing skipped.
        let text = try cli.run(["export", "--format", "dotenv", "--prefix", "app/"] + cli.unlock())
        #expect(text.status == 0 && !text.stderr.contains("warning"), "\(text.stderr)")
        let json = try cli.run(["export", "--format", "json", "--out", cli.path("all.json"), "--json"] + cli.unlock())
        #expect(try jsonObject(json.stdout)["skipped"] as? [String] == [] && (try jsonObject(json.stdout)["exported"] as? Int) == 4)
        // csv still refuses binary values (a cell could hold them only encoded).
        #expect(try cli.run(["export", "--format", "csv"] + cli.unlock()).status != 0)
    }

    /// `--out -` is standard output: the export printed, no file named `-` made, and `--json`
    /// refused with it as without `--out`; `--out ./-` still writes a file of that name.
    @Test func test_exportOut_dashIsStandardOutput() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let plain = try cli.run(["export", "--format", "dotenv"] + cli.unlock())
        let dash = try cli.run(["export", "--format", "dotenv", "--out", "-"] + cli.unlock())
        #expect(dash.status == 0 && dash.stdout == plain.stdout && dash.text == "A=\"x\"\n", "\(dash.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("-")), "no file named -")
        #expect(try cli.run(["export", "--format", "json", "--out", "-", "--json"] + cli.unlock()).status == 64)
        let file = try cli.run(["export", "--format", "dotenv", "--out", "./-"] + cli.unlock())
        #expect(file.status == 0 && file.stdout.isEmpty && (try? cli.read("-")) == plain.stdout, "\(file.stderr)")
    }

    // MARK: - The attack review: what sh does with the file

    /// Values with every character `sh` treats specially inside double quotes, and the escapes.
    private static let special: [(String, String)] = [
        ("BACKTICK", "a`touch PWNED`b"), ("DOLLAR", "$HOME and $(touch PWNED) and ${X:-y}"), ("BACKSLASH", "c:\\dir\\ end\\"),
        ("QUOTE", "say \"hi\" 'there'"), ("MIXED", "\\`\\$\\\"!#;|&<> *?~"), ("BANG", "!!"),
    ]

    @Test func test_exportDotenv_sourcedBySHExpandsAndRunsNothing() throws {
        let cli = try CLI.withEntriesSet(Self.special.map { ($0.0, bytes($0.1)) }); defer { cli.directory.remove() }
        let export = try cli.run(["export", "--format", "dotenv", "--out", cli.path("x.env")] + cli.unlock())
        #expect(export.status == 0, "\(export.stderr)")
        for (name, value) in Self.special {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "set -a; . ./x.env; printf %s \"$\(name)\""]
            process.currentDirectoryURL = cli.directory.url
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0 && String(decoding: data, as: UTF8.self) == value, "\(name): \(String(decoding: data, as: UTF8.self))")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.path("PWNED")), "sourcing the file ran a command")
    }

    @Test func test_exportDotenv_importReadsBackEverySpecialCharacter() throws {
        let values = Self.special + [("LINES", "one\ntwo\r\nthree\tfour"), ("ENDS", "\\n is not a line end\\")]
        let cli = try CLI.withEntriesSet(values.map { ($0.0, bytes($0.1)) }); defer { cli.directory.remove() }
        let export = try cli.run(["export", "--format", "dotenv"] + cli.unlock())
        #expect(export.status == 0, "\(export.stderr)")
        let other = try CLI.withEntriesSet([]); defer { other.directory.remove() }
        let imported = try other.run(["import", "--format", "dotenv"] + other.unlock(), stdin: export.stdout)
        #expect(imported.status == 0, "\(imported.stderr)")
        for (name, value) in values { #expect(try other.run(["get", name] + other.unlock()).stdout == bytes(value), "\(name)") }
    }
}
