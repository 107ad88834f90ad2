import Foundation
import TestSupport
import Testing

/// The scripting verbs through the binary: generate, search, exec, inject, import/export, batch, edit.
@Suite struct ScriptingCLITests {
    // MARK: - generate

    @Test func test_generate_defaultsAndOptions() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let symbols = Set("!#$%&()*+,-./:;<=>?@[]^_{|}~")
        var seen = Set<String>()
        for _ in 0..<20 {
            let password = try cli.run(["generate"]).text
            #expect(password.count == 24)
            #expect(password.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || symbols.contains($0)) })
            seen.insert(String(password))
        }
        #expect(seen.count == 20)
        let hex = try cli.run(["generate", "--length", "40", "--charset", "hex"]).text
        #expect(hex.count == 40 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        let literal = try cli.run(["generate", "--length", "30", "--charset", "chars:xy"]).text
        #expect(literal.allSatisfy { $0 == "x" || $0 == "y" })
        let words = try String(contentsOf: ProjectPaths.root.appendingPathComponent("data/eff_large_wordlist.txt"), encoding: .utf8)
        let list = Set(words.split(separator: "\n").map(String.init))
        #expect(list.count == 7_776)
        let phrase = try cli.run(["generate", "--words", "6", "--separator", " "]).text.split(separator: " ")
        #expect(phrase.count == 6 && phrase.allSatisfy { list.contains(String($0)) })
        let nonsense = try cli.run(["generate", "--charset", "nonsense"])
        #expect(nonsense.status == 64 && nonsense.stderr.contains("--charset: unknown character class 'nonsense'"), "\(nonsense.stderr)")
        #expect(!nonsense.stderr.contains("invalid name"), "the spec names no entry: \(nonsense.stderr)")
        #expect(try cli.run(["generate", "--charset", "chars:a"]).stderr.contains("--charset: a character set needs at least two"))
        #expect(try cli.run(["generate", "--length", "0"]).status == 64)
    }

    @Test func test_generate_everyCharacterOfTheSetAppears() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let output = try cli.run(["generate", "--length", "4000", "--charset", "digits"]).text
        var counts: [Character: Int] = [:]
        for char in output { counts[char, default: 0] += 1 }
        #expect(counts.count == 10)
        // 400 expected per digit; a biased generator drifts far outside this band.
        #expect(counts.values.allSatisfy { (280...520).contains($0) }, "\(counts)")
    }

    @Test func test_setGenerate_storesQuietlyAndPrintsOnRequest() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let quiet = try cli.run(["set", "svc/token", "--generate", "--length", "32"] + cli.unlock())
        #expect(quiet.status == 0 && quiet.stdout.isEmpty)
        #expect(try cli.run(["get", "svc/token"] + cli.unlock()).stdout.count == 32)
        let loud = try cli.run(["set", "svc/phrase", "--generate", "--words", "5", "--print"] + cli.unlock())
        #expect(loud.text == (try cli.run(["get", "svc/phrase"] + cli.unlock())).text, "piped: the value alone, as generate prints it")
    }

    // MARK: - search

    @Test func test_search_namesRegexAndValuesPrintOnlyNames() throws {
        let cli = try CLI.withVault(["prod/db": "needle-in-value", "prod/api": "x", "dev/db": "y"]); defer { cli.directory.remove() }
        #expect(try cli.run(["search", "db"] + cli.unlock()).text == "dev/db\nprod/db\n")
        #expect(try cli.run(["search", "--regex", "^prod/(api|db)$"] + cli.unlock()).text == "prod/api\nprod/db\n")
        #expect(try cli.run(["search", "DB", "--ignore-case"] + cli.unlock()).text == "dev/db\nprod/db\n")
        let values = try cli.run(["search", "needle", "--values"] + cli.unlock())
        #expect(values.text == "prod/db\n", "names only, never the value")
        #expect(try cli.run(["search", "needle"] + cli.unlock()).status == 1)
        #expect(try cli.run(["search", "--regex", "("] + cli.unlock()).status == 64)
    }

    // MARK: - exec

    @Test func test_exec_mapsNamesAndPassesTheExitStatusThrough() throws {
        let cli = try CLI.withVault(["app/db/password": "pw1", "app/api-key": "k2", "other/x": "o"]); defer { cli.directory.remove() }
        let all = try cli.run(["exec"] + cli.unlock() + ["--", "sh", "-c", "echo $APP_DB_PASSWORD $APP_API_KEY $OTHER_X"])
        #expect(all.text == "pw1 k2 o\n")
        let prefixed = try cli.run(["exec", "--prefix", "app/"] + cli.unlock() + ["--", "sh", "-c", "echo $DB_PASSWORD $API_KEY ${OTHER_X:-unset}"])
        #expect(prefixed.text == "pw1 k2 unset\n")
        let only = try cli.run(["exec", "--only", "other/x"] + cli.unlock() + ["--", "sh", "-c", "echo ${APP_API_KEY:-unset} $OTHER_X"])
        #expect(only.text == "unset o\n")
        #expect(try cli.run(["exec"] + cli.unlock() + ["--", "sh", "-c", "exit 42"]).status == 42)
        #expect(try cli.run(["exec", "--only", "missing"] + cli.unlock() + ["--", "true"]).status == 1)
        #expect(try cli.run(["exec"] + cli.unlock()).status == 64)
    }

    @Test func test_exec_refusesCollidingNamesNamingBoth() throws {
        let cli = try CLI.withVault(["db/password": "a", "db-password": "b"]); defer { cli.directory.remove() }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "true"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("'db-password'") && result.stderr.contains("'db/password'") && result.stderr.contains("DB_PASSWORD"))
    }

    // MARK: - inject

    @Test func test_inject_rendersReferencesAndLeavesOtherBracesAlone() throws {
        let cli = try CLI.withVault(["db/password": "s3cret"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "db/password", "--field", "user"] + cli.unlock(), stdin: Array("admin".utf8)).status == 0)
        let template = "user={{vf://db/password#user}}\npass={{ vf://db/password }}\nkeep={{ .Values.x }}\n"
        let rendered = try cli.run(["inject"] + cli.unlock(), stdin: Array(template.utf8))
        #expect(rendered.text == "user=admin\npass=s3cret\nkeep={{ .Values.x }}\n")
        try cli.write("config.tmpl", Array(template.utf8))
        let toFile = try cli.run(["inject", "--in", cli.path("config.tmpl"), "--out", cli.path("config.out")] + cli.unlock())
        #expect(toFile.status == 0 && toFile.stdout.isEmpty)
        #expect(String(decoding: try cli.read("config.out"), as: UTF8.self) == rendered.text)
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("config.out"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func test_inject_missingFieldIsNotCalledAMissingEntry() throws {
        let cli = try CLI.withVault(["db/password": "s3cret"]); defer { cli.directory.remove() }
        let field = try cli.run(["inject"] + cli.unlock(), stdin: Array("{{ vf://db/password#nofield }}\n".utf8))
        #expect(field.status == 1 && field.stdout.isEmpty)
        #expect(field.stderr.contains("refers to 'db/password#nofield' on line 1, and the vault has no such entry or field"), "\(field.stderr)")
        let entry = try cli.run(["inject"] + cli.unlock(), stdin: Array("{{ vf://nope }}\n".utf8))
        #expect(entry.status == 1 && entry.stderr.contains("refers to 'nope' on line 1, and the vault has no such entry\n"), "\(entry.stderr)")
    }

    @Test func test_inject_missingReferenceNamesItsLineAndWritesNothing() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.directory.remove() }
        try cli.write("t.tmpl", Array("{{ vf://a }}\nsecond\nthird {{ vf://missing/one }}\n".utf8))
        let result = try cli.run(["inject", "--in", cli.path("t.tmpl"), "--out", cli.path("out")] + cli.unlock())
        #expect(result.status == 1)
        #expect(result.stderr.contains("'missing/one' on line 3"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("out")))
        let field = try cli.run(["inject"] + cli.unlock(), stdin: Array("{{ vf://a#nofield }}".utf8))
        #expect(field.status == 1 && field.stdout.isEmpty)
    }

    // MARK: - import / export

    @Test func test_exportImport_jsonRoundTripIsLossless() throws {
        let cli = try CLI.withVault(["text": "plain", "unicode/名前": "värde"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "bin"] + cli.unlock(), stdin: Array(0...255)).status == 0)
        #expect(try cli.run(["set", "text", "--field", "blob"] + cli.unlock(), stdin: [0, 255, 10]).status == 0)
        let exported = try cli.run(["export", "--format", "json", "--out", cli.path("all.json")] + cli.unlock())
        #expect(exported.status == 0, "\(exported.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("all.json"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try cli.initVault("second.vault")
        let imported = try cli.run(["import", "--format", "json", cli.path("all.json")] + cli.unlock("second.vault"))
        #expect(imported.status == 0)
        #expect(imported.stderr.contains("imported 3 entries"))
        let again = try cli.run(["export", "--format", "json"] + cli.unlock("second.vault"))
        #expect(again.stdout == (try cli.read("all.json")), "every entry, field and time reproduced")
        #expect(try cli.run(["get", "bin"] + cli.unlock("second.vault")).stdout == Array(0...255))
    }

    @Test func test_import_refusesToOverwriteAndIsAllOrNothing() throws {
        let cli = try CLI.withVault(["API_KEY": "old"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let sample = ProjectPaths.fixtures.appendingPathComponent("interchange/sample.env").path
        let refused = try cli.run(["import", "--format", "dotenv", sample] + cli.unlock())
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("'API_KEY'") && refused.stderr.contains("--overwrite"))
        #expect(try cli.read("t.vault") == before, "nothing imported")
        let overwritten = try cli.run(["import", "--format", "dotenv", "--overwrite", sample] + cli.unlock())
        #expect(overwritten.stderr.contains("8 new, 1 replaced"))
        #expect(try cli.run(["get", "API_KEY"] + cli.unlock()).text == "abc123")
        #expect(try cli.run(["get", "DOUBLE"] + cli.unlock()).text == "line one\nline two \"quoted\" $HOME")
        #expect(try cli.run(["get", "SINGLE"] + cli.unlock()).text == "literal $HOME and \\n stay")
        #expect(try cli.run(["get", "MULTILINE"] + cli.unlock()).text == "first\nsecond")
        #expect(try cli.run(["get", "SPACED"] + cli.unlock()).text == "value with spaces")
        #expect(try cli.run(["get", "EQUALS"] + cli.unlock()).text == "a=b=c")
    }

    @Test func test_import_readsEveryRealWorldSample() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("interchange")
        let expectations: [(format: String, file: String, count: Int, name: String, value: String, field: (String, String)?)] = [
            ("csv", "sample.csv", 3, "prod/db", "p@ss,word", ("username", "admin")),
            ("keepassxc-csv", "keepassxc.csv", 4, "Work/Servers/db01", "Tr0ub4dor&3", ("notes", "Rotated \"quarterly\"\nSecond line of notes")),
            ("bitwarden-json", "bitwarden.json", 5, "Work/Jira", "j1ra-pass", ("Recovery_code", "RC-1234")),
        ]
        for item in expectations {
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            let result = try cli.run(["import", "--format", item.format, folder.appendingPathComponent(item.file).path] + cli.unlock())
            #expect(result.status == 0, "\(item.file): \(result.stderr)")
            #expect(result.stderr.contains("imported \(item.count) entries"), "\(item.file): \(result.stderr)")
            #expect(try cli.run(["get", item.name] + cli.unlock()).text == item.value, "\(item.file)")
            if let (field, value) = item.field {
                #expect(try cli.run(["get", item.name, "--field", field] + cli.unlock()).text == value, "\(item.file)")
            }
        }
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        _ = try cli.run(["import", "--format", "keepassxc-csv", folder.appendingPathComponent("keepassxc.csv").path] + cli.unlock())
        #expect(try cli.run(["list", "Work/"] + cli.unlock()).text == "Work/GitHub\nWork/GitHub (2)\nWork/Servers/db01\n", "duplicate titles are kept apart")
        let json = try cli.run(["list", "--json", "GitHub"] + cli.unlock())
        #expect(json.text.contains("\"created\":\"2023-01-15T08:00:00.000Z\""), "times come along: \(json.text)")
    }

    @Test func test_import_malformedInputNamesTheLine() throws {
        let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
        let dotenv = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: Array("A=1\nB=\"open\nC=3\n".utf8))
        #expect(dotenv.status == 2 && dotenv.stderr.contains("line 2"), "\(dotenv.stderr)")
        let noEquals = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: Array("A=1\n\njust text\n".utf8))
        #expect(noEquals.stderr.contains("line 3"))
        let csv = try cli.run(["import", "--format", "csv"] + cli.unlock(), stdin: Array("name,value\na,1\nb,2,3\n".utf8))
        #expect(csv.status == 2 && csv.stderr.contains("line 3"))
        let duplicate = try cli.run(["import", "--format", "csv"] + cli.unlock(), stdin: Array("name,value\na,1\na,2\n".utf8))
        #expect(duplicate.stderr.contains("'a' appears twice"))
        let encrypted = try cli.run(["import", "--format", "bitwarden-json"] + cli.unlock(), stdin: Array("{\"encrypted\": true, \"items\": []}".utf8))
        #expect(encrypted.stderr.contains("encrypted"))
        #expect(try cli.run(["list"] + cli.unlock()).text.isEmpty, "nothing was imported")
    }

    @Test func test_export_dotenvAndCsvRefuseBinaryAndTheTerminal() throws {
        let cli = try CLI.withVault(["app/url": "https://x", "note": "a \"quoted\" $value"]); defer { cli.directory.remove() }
        let dotenv = try cli.run(["export", "--format", "dotenv"] + cli.unlock())
        #expect(dotenv.text == "APP_URL=\"https://x\"\nNOTE=\"a \\\"quoted\\\" \\$value\"\n")
        let csv = try cli.run(["export", "--format", "csv"] + cli.unlock())
        #expect(csv.text == "name,value\r\napp/url,https://x\r\nnote,\"a \"\"quoted\"\" $value\"\r\n")
        #expect(try cli.run(["set", "bin"] + cli.unlock(), stdin: [0, 1]).status == 0)
        #expect(try cli.run(["export", "--format", "dotenv"] + cli.unlock()).stderr.contains("binary"))
        #expect(try cli.run(["export", "--format", "keepassxc-csv"] + cli.unlock()).status == 64)
        if CLI.hasScript {
            let session = try cli.interactive(["export", "--format", "json"] + cli.unlock(), answers: [])
            #expect(session.status == 2 && session.screen.contains("--force"))
        }
    }

    // MARK: - batch

    @Test func test_batch_appliesAllLinesWithOneSeal() throws {
        let cli = try CLI.withVault(["old": "o"]); defer { cli.directory.remove() }
        let script = """
            # a comment
            set a --value 'first value'
            set a --field user --value "al \\"ice\\""
            set gen --generate --length 12
            mv old renamed
            get a
            get a --field user
            list
            """
        // Two get lines need a framing (-z or --json) since issue 47.
        let result = try cli.run(["batch", "-z"] + cli.unlock(), stdin: Array(script.utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "first value\0al \"ice\"\0a\ngen\nrenamed\n\0")
        #expect(try cli.run(["get", "gen"] + cli.unlock()).stdout.count == 12)
        let info = try cli.run(["info", "--json", "--vault", cli.path("t.vault")]).text
        #expect(info.contains("\"generation\":3"), "one seal for the whole script: \(info)")
    }

    @Test func test_batch_failureChangesNothingAndNamesTheLine() throws {
        let cli = try CLI.withVault(["keep": "k"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("set new --value x\nget new\nrm missing\n".utf8))
        #expect(result.status == 1)
        #expect(result.stderr.contains("line 3") && result.stderr.contains("nothing was changed"))
        #expect(result.stdout.isEmpty, "no output unless every line succeeds")
        #expect(try cli.read("t.vault") == before)
        try cli.write("script", Array("frobnicate x\n".utf8))
        let unknown = try cli.run(["batch", "--script", cli.path("script")] + cli.unlock())
        #expect(unknown.status == 64 && unknown.stderr.contains("line 1"))
    }

    // MARK: - edit

    @Test func test_edit_usesAPrivateTmpfsFileAndRemovesIt() throws {
        let cli = try CLI.withVault(["svc/key": "before"]); defer { cli.directory.remove() }
        let editor = cli.path("editor.sh")
        try cli.write("editor.sh", Array("""
            #!/bin/sh
            echo "$1" > "\(cli.path("where"))"
            stat -c '%a %T' "$1" > "\(cli.path("mode"))"
            stat -f -c '%T' "$1" >> "\(cli.path("mode"))"
            stat -c '%a' "$(dirname "$1")" >> "\(cli.path("mode"))"
            printf 'after' > "$1"

            """.utf8), mode: 0o700)
        let result = try cli.run(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": editor, "XDG_RUNTIME_DIR": "/dev/shm"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "after")
        let path = String(decoding: try cli.read("where"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(path.hasPrefix("/dev/shm/vaultfile-edit-"))
        let mode = String(decoding: try cli.read("mode"), as: UTF8.self).split(separator: "\n")
        #expect(mode.first?.hasPrefix("600") == true && mode.dropFirst().first == "tmpfs" && mode.last == "700", "\(mode)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
    }

    @Test func test_edit_unchangedOrFailedEditLeavesTheVault() throws {
        let cli = try CLI.withVault(["k": "v"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        #expect(try cli.run(["edit", "k"] + cli.unlock(), extra: ["EDITOR": "true"]).status == 0)
        #expect(try cli.read("t.vault") == before, "an unchanged value does not rewrite the vault")
        try cli.write("bad.sh", Array("#!/bin/sh\nprintf changed > \"$1\"\nexit 3\n".utf8), mode: 0o700)
        let failed = try cli.run(["edit", "k"] + cli.unlock(), extra: ["EDITOR": cli.path("bad.sh")])
        #expect(failed.status == 2 && failed.stderr.contains("status 3"))
        #expect(try cli.read("t.vault") == before)
    }

    @Test func test_edit_givesVimPrivacyOptions() throws {
        let cli = try CLI.withVault(["k": "v"]); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try cli.write("bin/vim", Array("#!/bin/sh\nprintf '%s ' \"$@\" > \"\(cli.path("args"))\"\n".utf8), mode: 0o700)
        #expect(try cli.run(["edit", "k"] + cli.unlock(), extra: ["EDITOR": "vim", "PATH": cli.path("bin") + ":/usr/bin:/bin"]).status == 0)
        let args = String(decoding: try cli.read("args"), as: UTF8.self)
        #expect(args.contains("-n") && args.contains("-i NONE") && args.contains("noundofile"), "\(args)")
    }
}
