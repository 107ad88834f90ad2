import Foundation
import TestSupport
import Testing

/// Names with Unicode format characters (U+202E and the like, which make a name show as another):
/// refused in a new name unless allowed, kept where they exist already, escaped on a terminal.
@Suite struct FormatCharacterNamesCLITests {
    /// A vault with the given entries (set with --allow-format-characters, so any name goes).
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        try CLI.withEntriesSet(entries, options: ["--allow-format-characters"])
    }

    private let reversed = "db/\u{202E}drowssap"  // shows as "db/password" on a terminal

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

    // MARK: - Names already in a vault

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
}
