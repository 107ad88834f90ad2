import Foundation
import TestSupport
import Testing

/// What users type and import, through the binary (issue 25, items 10, 13, 14, 16).
@Suite struct InputHardeningCLITests {
    /// A vault with the given entries (set with --allow-format-characters, so any name goes).
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name, "--allow-format-characters"] + cli.unlock(), stdin: Array(value.utf8))
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    private func names(_ cli: CLI) throws -> [String] {
        try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
    }

    private let reversed = "db/\u{202E}drowssap"  // shows as "db/password" on a terminal

    // MARK: - Arguments

    @Test func test_arguments_thatAreNotUTF8AreRefusedBeforeParsing() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        // Both used to become U+FFFD U+FFFD: one entry under two different byte strings.
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        let set = try cli.shell("printf v | \"$VF\" set \"$(printf '\\377\\376')\" \(unlock)")
        #expect(set.status == 64, "\(set.stderr)")
        #expect(set.stderr.contains("argument 2 is not valid UTF-8 (\\xFF\\xFE)"), "\(set.stderr)")
        #expect(!set.stderr.contains("\u{FFFD}"), "the raw bytes are never printed")
        let path = try cli.shell("\"$VF\" list --vault \"$(printf '/tmp/\\351t\\351')\"")
        #expect(path.status == 64 && path.stderr.contains("argument 3") && path.stderr.contains("/tmp/\\xE9t\\xE9"), "\(path.stderr)")
        #expect(try names(cli).isEmpty)
    }

    // MARK: - New names

    @Test func test_set_refusesAFormatCharacterInANewNameUnlessAllowed() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let refused = try cli.run(["set", reversed] + cli.unlock(), stdin: Array("v".utf8))
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("db/\\u{202E}drowssap") && refused.stderr.contains("U+202E RIGHT-TO-LEFT OVERRIDE"), "\(refused.stderr)")
        #expect(refused.stderr.contains("hint: pass --allow-format-characters") && !refused.stderr.contains("\u{202E}"))
        for name in ["a\u{200B}b", "soft\u{00AD}hyphen", "bom\u{FEFF}", "iso\u{2066}late"] {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: [0x76]).status == 2, "\(name.unicodeScalars.map(\.value))")
        }
        #expect(try names(cli).isEmpty)
        #expect(try cli.run(["set", reversed, "--allow-format-characters"] + cli.unlock(), stdin: Array("v".utf8)).status == 0)
        #expect(try names(cli) == [reversed])
    }

    @Test func test_namesAlreadyInTheVault_stayReachableByGetSetRmAndMv() throws {
        let cli = try vaultWith([reversed: "secret", "z\u{200B}": "other"]); defer { cli.directory.remove() }
        #expect(try cli.run(["get", reversed] + cli.unlock()).text == "secret")
        #expect(try cli.run(["set", reversed] + cli.unlock(), stdin: Array("changed".utf8)).status == 0, "not a new name")
        #expect(try cli.run(["set", reversed, "--field", "user"] + cli.unlock(), stdin: Array("u".utf8)).status == 0)
        #expect(try cli.run(["mv", reversed, "db/plain"] + cli.unlock()).status == 0, "a source may hold them")
        #expect(try cli.run(["get", "db/plain"] + cli.unlock()).text == "changed")
        #expect(try cli.run(["mv", "db/plain", "z\u{200B}", "--force"] + cli.unlock()).status == 0, "replacing an existing name")
        #expect(try cli.run(["rm", "z\u{200B}"] + cli.unlock()).status == 0)
        #expect(try names(cli).isEmpty)
    }

    @Test func test_mv_refusesAFormatCharacterInTheNewName() throws {
        let cli = try vaultWith(["db/password": "v"]); defer { cli.directory.remove() }
        let refused = try cli.run(["mv", "db/password", reversed] + cli.unlock())
        #expect(refused.status == 2 && refused.stderr.contains("--allow-format-characters"), "\(refused.stderr)")
        #expect(try names(cli) == ["db/password"])
        #expect(try cli.run(["mv", "db/password", reversed, "--allow-format-characters"] + cli.unlock()).status == 0)
        #expect(try names(cli) == [reversed])
    }

    @Test func test_import_refusesNewFormatCharacterNamesButNotExistingOnes() throws {
        let cli = try vaultWith(["kept\u{2066}": "old"]); defer { cli.directory.remove() }
        func json(_ name: String) -> [UInt8] {
            Array(#"{"vaultfile_export": 1, "entries": [{"name": "plain", "value": "p"}, {"name": "\#(name)", "value": "v"}]}"#.utf8)
        }
        let refused = try cli.run(["import", "--format", "json"] + cli.unlock(), stdin: json("new\\u200b"))
        #expect(refused.status == 2 && refused.stderr.contains("new\\u{200B}") && refused.stderr.contains("--allow-format-characters"),
                "\(refused.stderr)")
        #expect(try names(cli) == ["kept\u{2066}"], "all or nothing")
        #expect(try cli.run(["import", "--format", "json", "--overwrite"] + cli.unlock(), stdin: json("kept\\u2066")).status == 0)
        #expect(try cli.run(["get", "kept\u{2066}"] + cli.unlock()).text == "v")
        #expect(try cli.run(["import", "--format", "json", "--overwrite", "--allow-format-characters"] + cli.unlock(),
                            stdin: json("new\\u200b")).status == 0)
    }

    @Test func test_batch_refusesAFormatCharacterInANewName() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let refused = try cli.run(["batch"] + cli.unlock(), stdin: Array("set plain --value 1\nset 'x\u{202E}y' --value 2\n".utf8))
        #expect(refused.status == 2 && refused.stderr.contains("line 2") && refused.stderr.contains("x\\u{202E}y"), "\(refused.stderr)")
        #expect(try names(cli).isEmpty, "nothing was changed")
        let moved = try cli.run(["batch"] + cli.unlock(), stdin: Array("set plain --value 1\nmv plain 'x\u{200B}'\n".utf8))
        #expect(moved.status == 2 && moved.stderr.contains("x\\u{200B}"), "\(moved.stderr)")
        let allowed = "set plain --value 1\nmv plain 'x\u{200B}' --allow-format-characters\nset 'y\u{202E}' --value 2 --allow-format-characters\n"
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array(allowed.utf8)).status == 0)
        #expect(try names(cli) == ["x\u{200B}", "y\u{202E}"])
    }

    @Test func test_gitMerge_keepsNamesThatExistInAnInput() throws {
        // A name new to OURS but present in THEIRS was not typed here: the merge keeps it.
        var cli = try vaultWith(["shared": "s"]); defer { cli.directory.remove() }
        // Plain copies stand in for git branches here; outside a work tree they would be older copies.
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "off"
        try FileManager.default.copyItem(atPath: cli.path("t.vault"), toPath: cli.path("base.vault"))
        try FileManager.default.copyItem(atPath: cli.path("t.vault"), toPath: cli.path("theirs.vault"))
        #expect(try cli.run(["set", reversed, "--allow-format-characters"] + cli.unlock("theirs.vault"), stdin: [0x74]).status == 0)
        #expect(try cli.run(["set", "ours"] + cli.unlock(), stdin: [0x6F]).status == 0)
        let merged = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("t.vault"), cli.path("theirs.vault"),
                                  "--password-file", cli.path("pw")])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try names(cli) == [reversed, "ours", "shared"])
    }

    // MARK: - Listing on a terminal

    @Test func test_listAndSearch_escapeFormatCharactersOnATerminalOnly() throws {
        let cli = try vaultWith([reversed: "v", "plain": "p"]); defer { cli.directory.remove() }
        let piped = try cli.run(["list"] + cli.unlock())
        #expect(piped.stdout == Array("\(reversed)\nplain\n".utf8), "data for scripts: the bytes as they are")
        let screen = try cli.interactive(["list"] + cli.unlock(), answers: [])
        #expect(screen.status == 0 && screen.screen.contains("db/\\u{202E}drowssap") && !screen.screen.contains("\u{202E}"), "\(screen.screen)")
        let found = try cli.interactive(["search", "db/"] + cli.unlock(), answers: [])
        #expect(found.screen.contains("db/\\u{202E}drowssap") && !found.screen.contains("\u{202E}"), "\(found.screen)")
        #expect(try cli.run(["search", "db/"] + cli.unlock()).stdout == Array("\(reversed)\n".utf8))
    }

    // MARK: - Import

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

    // MARK: - search

    @Test func test_search_readsThePatternFromAFileOrStdin() throws {
        let cli = try vaultWith(["prod/db": "the-needle-value", "dev/db": "hay"]); defer { cli.directory.remove() }
        try cli.write("pattern", Array("needle\n".utf8))
        let fromFile = try cli.run(["search", "--values", "--pattern-file", cli.path("pattern")] + cli.unlock())
        #expect(fromFile.status == 0 && fromFile.text == "prod/db\n", "\(fromFile.stderr)")
        let fromStdin = try cli.run(["search", "--values", "--regex", "--pattern-file", "-"] + cli.unlock(), stdin: Array("n[e]+dle\n".utf8))
        #expect(fromStdin.status == 0 && fromStdin.text == "prod/db\n", "\(fromStdin.stderr)")
        try cli.write("secret", Array("hunter2-part\n".utf8))
        let missing = try cli.run(["search", "--values", "--pattern-file", cli.path("secret")] + cli.unlock())
        #expect(missing.status == 1 && missing.stderr.contains("the pattern in") && !missing.stderr.contains("hunter2"), "\(missing.stderr)")
        try cli.write("bad", Array("(hunter2\n".utf8))
        let bad = try cli.run(["search", "--regex", "--pattern-file", cli.path("bad")] + cli.unlock())
        #expect(bad.status == 64 && !bad.stderr.contains("hunter2"), "\(bad.stderr)")
        #expect(try cli.run(["search", "x", "--pattern-file", cli.path("pattern")] + cli.unlock()).status == 64)
        #expect(try cli.run(["search"] + cli.unlock()).status == 64)
    }

    @Test func test_search_catastrophicRegexFinishesInLinearTime() throws {
        // Swift's backtracking Regex ran past 10 s on this (2^40 ways to split the run of a's).
        let cli = try vaultWith(["entry": String(repeating: "a", count: 40) + "!"]); defer { cli.directory.remove() }
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        let result = try cli.shell("timeout 60 \"$VF\" search --values --regex '^(a+)+$' \(unlock)")
        #expect(result.status == 1, "no match, found quickly (124 = killed after 60 s): \(result.stderr)")
        let refused = try cli.run(["search", "--regex", "(a)\\1"] + cli.unlock())
        #expect(refused.status == 64 && refused.stderr.contains("backreferences are not supported"), "\(refused.stderr)")
    }
}
