import Foundation
import TestSupport
import Testing

/// What a new user meets first (issue 26): the README's first steps, pipes between verbs, search,
/// merges with a wrong password, passwd, missing fields, `-` for stdin, binary values on a
/// terminal, empty values, list prefixes, and `vaultfile` with no verb or a misspelt one.
@Suite struct DailyUseCLITests {
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: Array(value.utf8))
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    /// Runs `vaultfile arguments…` on a pseudo-terminal with nothing typed, killed after
    /// `seconds`: a command that waits at a prompt ends with status 124 instead of hanging the test.
    /// (`--foreground` keeps it in the terminal's foreground group, where a prompt is not stopped.)
    private func onTerminal(_ cli: CLI, _ arguments: [String], seconds: Int = 20) throws -> CLI.Result {
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = (["timeout", "--foreground", "-k", "5", String(seconds), CLI.binary] + arguments).map(quoted).joined(separator: " ")
        return try cli.shell("script -q -e -c \(quoted(command)) /dev/null </dev/null")
    }

    private func mode(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    // MARK: - init

    @Test func test_init_createsMissingFoldersPrivatelyAndSaysSo() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let vault = cli.path("secrets/team/team.vault")
        let created = try cli.run(["init", "--password-file", cli.path("pw")] + CLI.fastKDF, extra: ["VAULTFILE_PATH": vault])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(try mode(cli.path("secrets")) == 0o700 && mode(cli.path("secrets/team")) == 0o700)
        #expect(created.stderr.contains("created the folder \(cli.path("secrets")) (mode 0700)"), "\(created.stderr)")
        #expect(created.stderr.contains("created the folder \(cli.path("secrets/team")) (mode 0700)"))
        #expect(try cli.run(["list", "--password-file", cli.path("pw")], extra: ["VAULTFILE_PATH": vault]).status == 0)
    }

    @Test func test_init_checksTheFolderBeforeAskingForThePassword() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        try cli.write("afile", Array("not a folder".utf8))
        let result = try cli.run(["init", "--vault", cli.path("afile/sub/team.vault"), "--password-command", "touch asked; cat pw"] + CLI.fastKDF)
        #expect(result.status == 2)
        #expect(result.stderr.contains(cli.path("afile")) && result.stderr.contains("Not a directory"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("asked")), "the password was asked for before the folder was checked")
    }

    @Test func test_vaultMissing_hintGivesACommandThatCreatesIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let missing = try cli.run(["get", "x", "--vault", "sub/dir/t.vault", "--password-file", "pw"])
        #expect(missing.status == 2 && missing.stderr.contains("no vault at sub/dir/t.vault"))
        let hint = try #require(missing.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") })
        let command = try #require(hint.split(separator: "'").dropFirst().first, "\(hint)")
        #expect(command == "vaultfile init --vault sub/dir/t.vault", "\(hint)")
        let words = command.split(separator: " ").dropFirst().map(String.init)
        let created = try cli.run(words + ["--password-file", "pw"] + CLI.fastKDF)
        #expect(created.status == 0, "the hint's command works: \(created.stderr)")
    }

    // MARK: - generate

    @Test func test_generate_pipedIntoSetStoresExactlyThePassword() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let piped = try cli.shell("\"$VF\" generate | \"$VF\" set x --vault t.vault --password-file pw && \"$VF\" get x --vault t.vault --password-file pw | wc -c")
        #expect(piped.text.trimmingCharacters(in: .whitespacesAndNewlines) == "24", "\(piped.text) \(piped.stderr)")
        let alone = try cli.run(["generate", "--length", "10"])
        #expect(alone.stdout.count == 10 && !alone.stdout.contains(0x0A), "nothing but the password when piped")
        let newline = try cli.run(["generate", "--length", "10", "--newline"])
        #expect(newline.stdout.count == 11 && newline.stdout.last == 0x0A)
        let printed = try cli.run(["set", "y", "--generate", "--print"] + cli.unlock())
        #expect(printed.stdout == (try cli.run(["get", "y"] + cli.unlock())).stdout, "set --generate --print prints the stored bytes")
    }

    @Test func test_generate_endsWithANewlineOnATerminal() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let session = try cli.interactive(["generate", "--length", "12", "--charset", "chars:qz"], answers: [])
        #expect(session.status == 0, "\(session.screen)")
        #expect(session.screen.contains(/(^|\n)[qz]{12}\r\n/), "\(session.screen)")
    }

    // MARK: - search

    @Test func test_search_smartCaseAndTheCaseFlags() throws {
        let cli = try vaultWith(["Work/GitHub": "x", "home/gitea": "y"]); defer { cli.directory.remove() }
        func search(_ arguments: [String]) throws -> CLI.Result { try cli.run(["search"] + arguments + cli.unlock()) }
        #expect(try search(["git"]).text == "Work/GitHub\nhome/gitea\n", "lower case ignores case")
        #expect(try search(["Git"]).text == "Work/GitHub\n", "an upper-case letter matches case")
        #expect(try search(["GIT"]).status == 1)
        #expect(try search(["GIT", "-i"]).text == "Work/GitHub\nhome/gitea\n")
        #expect(try search(["GIT", "--ignore-case"]).text == "Work/GitHub\nhome/gitea\n")
        #expect(try search(["git", "-s"]).text == "home/gitea\n")
        #expect(try search(["git", "--case-sensitive"]).text == "home/gitea\n")
        #expect(try search(["git", "-i", "-s"]).text == "home/gitea\n", "the last of -i and -s wins")
        #expect(try search(["--regex", "\\Sithub$"]).text == "Work/GitHub\n", "an escape such as \\S is not an upper-case letter")
    }

    @Test func test_search_noMatchSaysSoAndExits1() throws {
        let cli = try vaultWith(["a": "x"]); defer { cli.directory.remove() }
        let none = try cli.run(["search", "zzz"] + cli.unlock())
        #expect(none.status == 1)
        #expect(none.stderr.contains("vaultfile: error: no entry matches 'zzz'"), "\(none.stderr)")
        #expect(!none.stderr.contains("no entry named"))
        #expect(none.stderr.contains("--values"), "the hint says how to search further: \(none.stderr)")
    }

    // MARK: - git merge

    /// A conflict parks theirs at NAME.conflict-theirs; when a side already holds an entry of that
    /// name (an earlier conflict committed unresolved), parking there lost theirs or that entry.
    /// The merge now stops (git merge: exit 1, as a conflict; merge: 2) and OURS stays as it was.
    @Test(arguments: ["THEIRS", "OURS"])
    func test_gitMerge_aConflictWhoseParkingNameIsTakenLosesNothing(holder: String) throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        // Copies of one vault written apart, as branches are: no rollback warning between them.
        let copies = ["VAULTFILE_ROLLBACK_CHECK": "off"]
        try cli.initVault("base.vault")
        #expect(try cli.run(["set", "X"] + cli.unlock("base.vault"), stdin: Array("base".utf8), extra: copies).status == 0)
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        #expect(try cli.run(["set", "X"] + cli.unlock("ours.vault"), stdin: Array("ours".utf8), extra: copies).status == 0)
        #expect(try cli.run(["set", "X"] + cli.unlock("theirs.vault"), stdin: Array("theirs".utf8), extra: copies).status == 0)
        let holderVault = holder == "OURS" ? "ours.vault" : "theirs.vault"
        #expect(try cli.run(["set", "X.conflict-theirs"] + cli.unlock(holderVault), stdin: Array("its own entry".utf8), extra: copies).status == 0)
        let before = try cli.read("ours.vault")

        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")], extra: copies)
        #expect(merge.status == 1, "\(merge.stderr)")
        #expect(merge.stderr.contains("a conflict in 'X' needs 'X.conflict-theirs'") && merge.stderr.contains("\(holder) already holds"), "\(merge.stderr)")
        #expect(merge.stderr.contains("vaultfile resolve X --ours"), "the hint says how to settle it: \(merge.stderr)")
        #expect(try cli.read("ours.vault") == before, "OURS is left as it was")

        // The same copies merged outside git, three-way and two-way: refused (status 2), OURS unchanged.
        let threeWay = try cli.run(["merge", cli.path("ours.vault"), cli.path("theirs.vault"), "--base", cli.path("base.vault")] + ["--password-file", cli.path("pw")], extra: copies)
        #expect(threeWay.status == 2 && threeWay.stderr.contains("needs 'X.conflict-theirs'"), "\(threeWay.stderr)")
        let twoWay = try cli.run(["merge", cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")], extra: copies)
        #expect(twoWay.status == 2 && twoWay.stderr.contains("needs 'X.conflict-theirs'"), "\(twoWay.stderr)")
        #expect(try cli.read("ours.vault") == before)
    }

    @Test func test_gitMerge_wrongPasswordIsNotBlamedOnAChange() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault("base.vault")
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        try cli.write("wrong", Array("wrong".utf8))
        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("wrong")])
        #expect(merge.status == 2)
        #expect(merge.stderr.contains("wrong password: it opens none of BASE"), "\(merge.stderr)")
        #expect(!merge.stderr.contains("changed") && !merge.stderr.contains("passwd"), "no change was made on any side: \(merge.stderr)")
    }

    @Test func test_gitMerge_namesTheSideWhereThePasswordChanged() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault("base.vault")
        for side in ["ours.vault", "theirs.vault"] { try cli.write(side, try cli.read("base.vault")) }
        try cli.write("new", Array("new-pw".utf8))
        #expect(try cli.run(["passwd", "--new-password-file", cli.path("new")] + cli.unlock("ours.vault")).status == 0)
        let merge = try cli.run(["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("new")])
        #expect(merge.status == 2)
        #expect(merge.stderr.contains("the password opens OURS (this branch) at \(cli.path("ours.vault")) but not BASE"), "\(merge.stderr)")
        #expect(merge.stderr.contains("changed on that side since BASE"), "\(merge.stderr)")
    }

    // MARK: - passwd

    @Test func test_passwd_wrongOldPasswordFailsBeforeTheNewOneIsAsked() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        try cli.write("wrong", Array("wrong".utf8))
        let session = try onTerminal(cli, ["passwd", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")])
        #expect(session.status == 3, "\(session.text)")
        #expect(!session.text.contains("New password"), "\(session.text)")
    }

    @Test func test_passwd_asksForTheNewPasswordOnceTheOldOneOpens() throws {
        let cli = try vaultWith(["k": "v"]); defer { cli.directory.remove() }
        let session = try cli.interactive(["passwd"] + cli.unlock(),
                                          answers: [("New password for", "n3w-pw"), ("Repeat the new password: ", "n3w-pw")])
        #expect(session.status == 0, "\(session.screen)")
        try cli.write("new", Array("n3w-pw".utf8))
        #expect(try cli.run(["get", "k", "--vault", cli.path("t.vault"), "--password-file", cli.path("new")]).text == "v")
    }

    // MARK: - A missing field

    @Test func test_get_missingFieldNamesTheEntryAndItsFields() throws {
        let cli = try vaultWith(["prod/db/pw": "secret"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "prod/db/pw", "--field", "user"] + cli.unlock(), stdin: Array("admin".utf8)).status == 0)
        #expect(try cli.run(["set", "prod/db/pw", "--field", "url"] + cli.unlock(), stdin: Array("db://x".utf8)).status == 0)
        for verb in ["get", "rm"] {
            let result = try cli.run([verb, "prod/db/pw", "--field", "username"] + cli.unlock())
            #expect(result.status == 1, "\(verb)")
            #expect(result.stderr.contains("the entry 'prod/db/pw' has no field 'username'; its fields: url, user"), "\(verb): \(result.stderr)")
            #expect(!result.stderr.contains("no entry named") && !result.stderr.contains("vaultfile list"), "\(result.stderr)")
        }
    }

    // MARK: - `-` is standard input

    @Test func test_dash_readsStandardInputWhereverAFileIsRead() throws {
        let cli = try vaultWith(["db/pw": "hunter2"]); defer { cli.directory.remove() }
        #expect(try cli.run(["set", "a", "--value-file", "-"] + cli.unlock(), stdin: Array("from stdin".utf8)).status == 0)
        #expect(try cli.run(["get", "a"] + cli.unlock()).text == "from stdin")
        let password = try cli.run(["list", "--vault", cli.path("t.vault"), "--password-file", "-"], stdin: Array("pw\n".utf8))
        #expect(password.status == 0 && password.text.contains("db/pw"), "\(password.stderr)")
        let imported = try cli.run(["import", "--format", "dotenv", "-"] + cli.unlock(), stdin: Array("B_KEY=b\n".utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        let injected = try cli.run(["inject", "--in", "-"] + cli.unlock(), stdin: Array("p={{ vf://db/pw }}".utf8))
        #expect(injected.text == "p=hunter2", "\(injected.stderr)")
        let batch = try cli.run(["batch", "--script", "-"] + cli.unlock(), stdin: Array("get db/pw\n".utf8))
        #expect(batch.text == "hunter2", "\(batch.stderr)")
    }

    @Test func test_dash_standardInputCannotCarryBothThePasswordAndTheValue() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let both = try cli.run(["set", "a", "--vault", cli.path("t.vault"), "--password-file", "-"], stdin: Array("pw".utf8))
        #expect(both.status == 64)
        #expect(both.stderr.contains("standard input holds one thing: it was read for the value, so the password cannot come from it too"), "\(both.stderr)")
    }

    // MARK: - get: binary values and the terminal

    @Test func test_get_refusesBinaryValuesOnATerminalUnlessForced() throws {
        let cli = try vaultWith(["text": "café\tok\n"]); defer { cli.directory.remove() }
        let values: [(String, [UInt8])] = [("escape", Array("a\u{1B}]0;owned\u{07}b".utf8)), ("c1", [0x61, 0xC2, 0x9B, 0x32, 0x4A]), ("latin1", [0x63, 0x61, 0x66, 0xE9])]
        for (name, value) in values {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: value).status == 0)
            let refused = try cli.interactive(["get", name] + cli.unlock(), answers: [])
            #expect(refused.status == 2, "\(name): \(refused.screen)")
            #expect(refused.screen.contains("holds binary data") && refused.screen.contains("--force"), "\(refused.screen)")
            #expect(!refused.screen.contains("owned"), "nothing of the value reached the terminal")
            #expect(try cli.interactive(["get", name, "--force"] + cli.unlock(), answers: []).status == 0)
            #expect(try cli.run(["get", name] + cli.unlock()).stdout == value, "piped, the bytes pass as they are")
        }
        let text = try cli.interactive(["get", "text"] + cli.unlock(), answers: [])
        #expect(text.status == 0 && text.screen.contains("café"), "UTF-8 with tab and newline is text: \(text.screen)")
    }

    // MARK: - set: empty values

    @Test func test_set_refusesAnEmptyValueUnlessAllowed() throws {
        let cli = try vaultWith([:]); defer { cli.directory.remove() }
        let empty = try cli.run(["set", "x"] + cli.unlock(), stdin: [])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("the value read for 'x' is empty") && empty.stderr.contains("--allow-empty"), "\(empty.stderr)")
        #expect(try cli.run(["get", "x"] + cli.unlock()).status == 1, "nothing was stored")
        try cli.write("empty.txt", [])
        let fromFile = try cli.run(["set", "x", "--field", "f", "--value-file", cli.path("empty.txt")] + cli.unlock())
        #expect(fromFile.status == 2 && fromFile.stderr.contains("field 'f' of 'x'"), "\(fromFile.stderr)")
        #expect(try cli.run(["set", "x", "--allow-empty"] + cli.unlock(), stdin: []).status == 0)
        let stored = try cli.run(["get", "x"] + cli.unlock())
        #expect(stored.status == 0 && stored.stdout.isEmpty)
    }

    // MARK: - list: prefixes are path segments

    @Test func test_list_prefixMatchesWholePathSegments() throws {
        let cli = try vaultWith(["prod": "a", "prod/db": "b", "production/db": "c", "prod (2)": "d", "prodx/y": "e"])
        defer { cli.directory.remove() }
        #expect(try cli.run(["list", "prod"] + cli.unlock()).text == "prod\nprod/db\n")
        #expect(try cli.run(["list", "prod/"] + cli.unlock()).text == "prod/db\n")
        #expect(try cli.run(["list", "prod/db"] + cli.unlock()).text == "prod/db\n")
        let json = try cli.run(["list", "--json", "prod"] + cli.unlock())
        #expect(json.text.contains("\"prod/db\"") && !json.text.contains("production"), "\(json.text)")
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("list prod\n".utf8)).text == "prod\nprod/db\n")
    }

    // MARK: - No verb, or a misspelt one

    @Test func test_main_noArgumentsPrintsAShortUsageAndExits64() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let bare = try cli.run([])
        #expect(bare.status == 64)
        #expect(bare.stdout.isEmpty)
        #expect(bare.stderr.split(separator: "\n").count <= 5, "a few lines: \(bare.stderr)")
        #expect(bare.stderr.contains("vaultfile --help") && bare.stderr.contains("get"))
    }

    @Test func test_main_unknownVerbOfAnotherToolNamesVaultfilesVerb() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for (word, verb) in [("insert", "set"), ("remove", "rm"), ("delete", "rm"), ("find", "search"), ("grep", "search"),
                             ("clip", "get --clip"), ("cat", "get"), ("otp", "totp")] {
            let result = try cli.run([word, "x"])
            #expect(result.status == 64 && result.stderr.contains("did you mean '\(verb)'?\n"), "\(word): \(result.stderr)")
        }
        // Only as the verb: a word of another tool after a verb is left to that verb's parser.
        #expect(try cli.run(["git", "insert"]).stderr.contains("did you mean 'set'") == false)
    }

    @Test func test_main_unknownVerbSuggestsTheClosestOnes() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let typo = try cli.run(["lsit"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("'lsit' is not a vaultfile verb") && typo.stderr.contains("did you mean 'list'?"), "\(typo.stderr)")
        #expect(try cli.run(["git", "mrege", "a", "b", "c"]).stderr.contains("did you mean 'merge'?"))
        #expect(try cli.run(["serach", "x"]).stderr.contains("did you mean 'search'?"))
        let unknown = try cli.run(["xyzzy"])
        #expect(unknown.status == 64 && unknown.stderr.contains("'vaultfile --help' lists the verbs"), "\(unknown.stderr)")
        #expect(try cli.run(["help", "get"]).status == 0, "help is a verb")
    }
}
