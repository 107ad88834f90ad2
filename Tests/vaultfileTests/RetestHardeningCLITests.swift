import Foundation
import TestSupport
import Testing

/// What the second adversarial re-test of issue 25 found still open, through the real binary:
/// edit's private folder under a base another user could change, argv's control characters in
/// the parser's messages and paths in `info`, a clipboard time past 2^63, `--out` into folders a
/// group or another user may change, a failing folder `mv`, a clipboard tool that exits early,
/// and a regular expression that would have run for hours.
@Suite struct RetestHardeningCLITests {
    // MARK: - Helpers

    /// A vault holding `entries`, opened with the password file `pw`.
    private func vaultWith(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        for (name, value) in entries.sorted(by: { $0.key < $1.key }) {
            let result = try cli.run(["set", name] + cli.unlock(), stdin: Array(value.utf8))
            precondition(result.status == 0, result.stderr)
        }
        return cli
    }

    /// The names in the vault, from `list`.
    private func names(_ cli: CLI) throws -> [String] {
        try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
    }

    private static let isRoot = getuid() == 0

    // MARK: - edit: the base of the private folder

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_refusesABaseAnotherUserCouldChange() throws {
        let cli = try vaultWith(["svc/key": "old"]); defer { cli.directory.remove() }
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: base) }
        try cli.write("editor.sh", Array("#!/bin/sh\necho ran > \"\(cli.path("ran"))\"\nprintf new > \"$1\"\n".utf8), mode: 0o700)
        func edit(_ runtime: String) throws -> CLI.Result {
            try cli.run(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": runtime])
        }
        func refused(_ runtime: String, _ says: String, _ folder: String? = nil) throws {
            let result = try edit(runtime)
            #expect(result.status == 2, "\(runtime): \(result.stderr)")
            #expect(result.stderr.contains(folder ?? runtime) && result.stderr.contains(says), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the editor never ran")
            let made = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
            #expect(!made.contains { $0.hasPrefix("vaultfile-edit-") }, "no private folder was made there")
        }
        #expect(chmod(base, 0o777) == 0)
        try refused(base, "writable by every user")
        // A folder of this user's own under a base everyone may change is no safer: the base can be renamed.
        #expect(mkdir(base + "/mine", 0o700) == 0)
        try refused(base + "/mine", "writable by every user", base)
        if Self.isRoot {
            #expect(chmod(base, 0o770) == 0 && chown(base, 0, 65534) == 0)
            try refused(base, "group nogroup")
            #expect(chmod(base, 0o700) == 0 && chown(base, 65534, 65534) == 0)
            try refused(base, "belongs to user nobody")
            #expect(chown(base, 0, 0) == 0)
        }
        // A shared base with the sticky bit, as /dev/shm itself, is fine; the value is edited.
        #expect(chmod(base, 0o1777) == 0)
        let edited = try edit(base)
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
    }

    // MARK: - Messages

    @Test func test_parserErrors_escapeControlCharactersFromArgv() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        for arguments in [["list", "--bad\u{1B}[2J\u{1B}]0;title\u{07}"], ["get", "a", "b\u{1B}[31m"], ["set", "--vault"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "raw control characters: \(result.stderr)")
            #expect(result.stderr.contains("Usage: vaultfile"), "the usage lines are kept: \(result.stderr)")
        }
        #expect(try cli.run(["list", "--bad\u{1B}[2J"]).stderr.contains("Unknown option '--bad\\x1B[2J'"))
    }

    @Test func test_info_escapesThePathsItPrints() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let hostile = "v\u{1B}]0;owned\u{07}\u{1B}[2J.vault"
        try cli.initVault(hostile)
        let older = try cli.read(hostile)
        #expect(try cli.run(["set", "k"] + cli.unlock(hostile), stdin: [1]).status == 0)  // recorded at the hostile path
        try cli.write("old.vault", older)
        let info = try cli.run(["info", "--vault", cli.path("old.vault")])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.text.contains("OLDER COPY"), "\(info.text)")
        #expect(!info.stdout.contains(0x1B) && !info.stdout.contains(0x07), "\(info.text)")
        #expect(info.text.contains("v\\x1B]0;owned\\x07\\x1B[2J.vault"), "\(info.text)")
        let own = try cli.run(["info", "--vault", cli.path(hostile)])
        #expect(own.status == 0 && !own.stdout.contains(0x1B), "\(own.text)")
    }

    // MARK: - The clipboard

    @Test func test_clip_aClearTimePastADayIsRefusedNotATrap() throws {
        let cli = try vaultWith(["k": "v"]); defer { cli.directory.remove() }
        let environment = ["VAULTFILE_CLIPBOARD_COMMAND": "cat > /dev/null", "VAULTFILE_CLIPBOARD_PASTE_COMMAND": "true"]
        for time in ["9223372036854775808", "99999999999999999999999", "86401s"] {
            let option = try cli.run(["get", "k", "--clip", "--clear-after", time] + cli.unlock(), extra: environment)
            #expect(option.status == 64 && option.stderr.contains("longer than a day"), "\(time): \(option.status) \(option.stderr)")
            let variable = try cli.run(["get", "k", "--clip"] + cli.unlock(), extra: environment.merging(["VAULTFILE_CLIP_TIME": time]) { $1 })
            #expect(variable.status == 64 && variable.stderr.contains("longer than a day"), "\(time): \(variable.status) \(variable.stderr)")
        }
    }

    @Test func test_clip_aToolThatExitsEarlyIsReportedInsteadOfKillingVaultfile() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        // More than a pipe holds: the write is still under way when the tool has gone.
        #expect(try cli.run(["set", "big"] + cli.unlock(), stdin: [UInt8](repeating: 0x61, count: 1 << 20)).status == 0)
        // The test runner ignores SIGPIPE and children inherit that: put the default back, as in a shell.
        let command = "env --default-signal=PIPE \"$VF\" get big --clip --clear-after 0 --vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        let quiet = try cli.shell(command, extra: ["VAULTFILE_CLIPBOARD_COMMAND": "exit 0"])
        #expect(quiet.status == 2, "not 141 (SIGPIPE): \(quiet.status) \(quiet.stderr)")
        #expect(quiet.stderr.contains("clipboard tool") && quiet.stderr.contains("Broken pipe"), "\(quiet.stderr)")
        let failing = try cli.shell(command, extra: ["VAULTFILE_CLIPBOARD_COMMAND": "exit 3"])
        #expect(failing.status == 2 && failing.stderr.contains("the clipboard tool failed (exit status 3)"), "\(failing.status) \(failing.stderr)")
    }

    // MARK: - --out into a folder others may change

    @Test(.enabled(if: Self.isRoot, "needs root to give a folder to another user or group: skipped"), arguments: ["export", "inject"])
    func test_out_refusesAFolderAGroupOrAnotherUserMayChange(verb: String) throws {
        let cli = try vaultWith(["a": "1"]); defer { cli.directory.remove() }
        try cli.write("t.tmpl", Array("a={{ vf://a }}\n".utf8))
        func write(into folder: String) throws -> CLI.Result {
            let source = verb == "export" ? ["export", "--format", "json"] : ["inject", "--in", cli.path("t.tmpl")]
            return try cli.run(source + ["--out", cli.path(folder) + "/out"] + cli.unlock())
        }
        for (folder, owner, group, mode, says) in [("shared", 0, 65534, 0o770, "writable by group nogroup"),
                                                   ("theirs", 65534, 65534, 0o755, "belongs to user nobody")] as [(String, uid_t, gid_t, mode_t, String)] {
            #expect(mkdir(cli.path(folder), 0o700) == 0 && chown(cli.path(folder), owner, group) == 0 && chmod(cli.path(folder), mode) == 0)
            let refused = try write(into: folder)
            #expect(refused.status == 2, "\(folder): \(refused.stderr)")
            #expect(refused.stderr.contains(cli.path(folder)) && refused.stderr.contains(says) && refused.stderr.contains("sticky bit"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path(folder) + "/out"), "nothing is written")
            #expect(chmod(cli.path(folder), mode | S_ISVTX) == 0)
            #expect(try write(into: folder).status == 0, "\(folder) with the sticky bit is fine")
        }
        // The user's own private group (umask 002): group-writable, but nobody else is in the group.
        #expect(mkdir(cli.path("mine"), 0o700) == 0 && chown(cli.path("mine"), 0, 0) == 0 && chmod(cli.path("mine"), 0o775) == 0)
        let mine = try write(into: "mine")
        #expect(mine.status == 0, "\(mine.stderr)")
    }

    // MARK: - mv and cp of a folder

    @Test func test_mvAndCp_aFolderMoveThatFailsLeavesTheVaultByteIdentical() throws {
        let cli = try vaultWith(["prod/a": "1", "prod/b": "2", "live/b": "3"]); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let long = String(repeating: "x", count: 1_023) + "/"  // a valid folder, but prod/a would become 1,025 bytes
        let cases: [([String], String)] = [
            (["mv", "prod/", "\u{202E}live/"], "format characters"),  // passed before: checked after the move, when the names existed
            (["cp", "prod/", "\u{200B}copy/"], "format characters"),
            (["mv", "prod/", "live/"], "live/b"),
            (["mv", "prod/", long], "at most 1024 bytes"),
        ]
        for (arguments, says) in cases {
            let result = try cli.run(arguments + cli.unlock())
            #expect(result.status != 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(try cli.read("t.vault") == before, "\(arguments): the vault is byte-identical")
        }
        #expect(try names(cli) == ["live/b", "prod/a", "prod/b"])
        let allowed = try cli.run(["mv", "prod/", "\u{202E}live/", "--allow-format-characters"] + cli.unlock())
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }

    // MARK: - search --regex

    @Test func test_search_aPathologicalRegexStopsAtItsWorkLimit() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        #expect(try cli.run(["set", "big"] + cli.unlock(), stdin: [UInt8](repeating: 0x61, count: 1 << 20)).status == 0)
        let unlock = "--vault '\(cli.path("t.vault"))' --password-file '\(cli.path("pw"))'"
        // About 3,000 states alive at every character of 1 MiB: 10^10 steps, hours, before the budget.
        let stopped = try cli.shell("timeout 120 \"$VF\" search --values --regex '(a?){1000}c' \(unlock)")
        #expect(stopped.status == 6, "over the limit, at once (124 = killed after 120 s): \(stopped.stderr)")
        #expect(stopped.stderr.contains("1000 steps per character") && stopped.stderr.contains("(a?){1000}c"), "\(stopped.stderr)")
        let ordinary = try cli.shell("timeout 120 \"$VF\" search --values --regex 'x[0-9]+y|^a+$' \(unlock)")
        #expect(ordinary.status == 0 && ordinary.text == "big\n", "\(ordinary.status) \(ordinary.stderr)")
    }
}

extension ExternalTools {
    /// `--out`'s "git marks this path as a vault", checked against what real git says
    /// (`git check-attr`): macros within macros, and a linked work tree's common info/attributes.
    @Suite struct GitAttributesCLITests {
        /// A vault `t.vault` (outside any repository) and a repository `main` with one commit.
        private func prepared() throws -> CLI {
            var cli = try CLI()
            cli.environment = ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"]
            try cli.initVault()
            #expect(try cli.run(["set", "a"] + cli.unlock(), stdin: [0x31]).status == 0)
            #expect(try cli.shell("git init -q -b main main && cd main && git commit -q --allow-empty -m base").status == 0)
            return cli
        }

        /// What git itself says of `attribute` for `path`, run in the folder `folder`.
        private func gitSays(_ cli: CLI, in folder: String, _ attribute: String, _ path: String) throws -> String {
            try cli.shell("cd '\(cli.path(folder))' && git check-attr \(attribute) -- '\(path)'").text
        }

        private func export(_ cli: CLI, to out: String) throws -> CLI.Result {
            try cli.run(["export", "--format", "json", "--out", cli.path(out), "--overwrite"] + cli.unlock())
        }

        @Test func test_out_refusesAPathMarkedThroughMacrosWithinMacros() throws {
            let cli = try prepared(); defer { cli.directory.remove() }
            try cli.write("main/.gitattributes", Array("""
                [attr]vaultdiff diff=vaultfile merge=vaultfile
                [attr]secret vaultdiff
                [attr]topsecret secret -text
                *.sec secret
                deep/*.env topsecret
                *.plain secret -diff -merge

                """.utf8))
            #expect(mkdir(cli.path("main/deep"), 0o700) == 0)
            #expect(try gitSays(cli, in: "main", "diff", "x.sec") == "x.sec: diff: vaultfile\n", "git expands the macro in the macro")
            #expect(try gitSays(cli, in: "main", "merge", "deep/a.env") == "deep/a.env: merge: vaultfile\n")
            for target in ["main/x.sec", "main/deep/a.env"] {
                let refused = try export(cli, to: target)
                #expect(refused.status == 2 && refused.stderr.contains("vault for git") && refused.stderr.contains(cli.path("main/.gitattributes")),
                        "\(target): \(refused.stderr)")
                #expect(!FileManager.default.fileExists(atPath: cli.path(target)))
            }
            #expect(try gitSays(cli, in: "main", "diff", "y.plain") == "y.plain: diff: unset\n")
            #expect(try export(cli, to: "main/y.plain").status == 0, "later attributes of the line still unset the macro's")
        }

        @Test func test_out_refusesAPathMarkedInTheCommonInfoAttributesOfALinkedWorkTree() throws {
            let cli = try prepared(); defer { cli.directory.remove() }
            #expect(try cli.shell("cd main && git worktree add -q ../linked").status == 0)
            #expect(mkdir(cli.path("main/.git/info"), 0o755) == 0 || errno == EEXIST)
            try cli.write("main/.git/info/attributes", Array("*.vault filter=vaultfile\n".utf8))
            #expect(try gitSays(cli, in: "linked", "filter", "team.vault") == "team.vault: filter: vaultfile\n", "git reads the common folder's")
            let refused = try export(cli, to: "linked/team.vault")
            #expect(refused.status == 2 && refused.stderr.contains(cli.path("main/.git/info/attributes")), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("linked/team.vault")))
            #expect(try export(cli, to: "linked/team.json").status == 0)
        }
    }
}
