import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import vaultfile

/// The child processes of `import --format pass|passage|sops` (issue 44, att60 F4, F5, F8): one
/// SIGKILL deadline for all the tools, a tool stopped by the terminal while the import ran in
/// the background, hints that paste, identities files read once (a pipe, an `age -p` file for
/// sops) and plugin identities passed on. Fake tools are shell scripts on PATH; real age where
/// the test says so. Every wait is bounded.
extension ExternalTools {
    @Suite struct ImportChildrenCLITests {
        static let hasAge = FileManager.default.isExecutableFile(atPath: "/usr/bin/age") && FileManager.default.isExecutableFile(atPath: "/usr/bin/age-keygen")

        /// A vault with one entry, folders `bin` and `store` (a pass store's `.gpg-id`), and
        /// `bin/NAME` holding `script`.
        private func setUp(tool name: String = "gpg", _ script: String) throws -> CLI {
            let cli = try CLI.withEntriesSet(["kept": "before"])
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/\(name)", Array(script.utf8), mode: 0o700)
            try cli.write(name == "gpg" ? "store/.gpg-id" : "store/.age-recipients", Array("K\n".utf8))
            return cli
        }

        // MARK: - One deadline for all (att60 F5)

        /// Four tools that ignore SIGTERM: vaultfile gives them two seconds together, then SIGKILL,
        /// and exits within about two seconds of the signal (before, 2 s each one after another:
        /// over 8 s here, 32 s with 16 jobs).
        @Test func test_importPass_sigtermGivesToolsThatIgnoreItOneGraceTogether() throws {
            let cli = try setUp("""
                #!/bin/sh
                trap '' TERM
                echo $$ > "$MARKS/$$"
                exec sleep 30

                """)
            defer { cli.directory.remove() }
            try FileManager.default.createDirectory(atPath: cli.path("marks"), withIntermediateDirectories: true)
            for index in 1...4 { try cli.write("store/a\(index).gpg", Array("A\n".utf8)) }
            let before = try cli.read("t.vault")
            // setsid: no terminal, so each tool leads a group of its own, as under a service manager.
            let importing = try cli.start([CLI.binary, "import", "--format", "pass", cli.path("store")] + cli.unlock(),
                                          extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "MARKS": cli.path("marks"), "VAULTFILE_IMPORT_JOBS": "4"],
                                          executable: "/usr/bin/setsid")
            var started: [pid_t] = []
            defer {
                if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() }
                for pid in started where !ChildProcess.hasEnded(pid) { kill(pid, SIGKILL) }
            }
            let marks = { (try? FileManager.default.contentsOfDirectory(atPath: cli.path("marks"))) ?? [] }
            let deadline = Date().addingTimeInterval(20)
            while marks().count < 4 && importing.isRunning && Date() < deadline { usleep(10_000) }
            started = marks().compactMap { pid_t($0) }
            try #require(started.count == 4, "the four tools did not start within 20 s: \(started)")
            usleep(200_000)
            let sent = Date()
            kill(importing.pid, SIGTERM)
            while importing.isRunning && Date().timeIntervalSince(sent) < 20 { usleep(10_000) }
            let took = Date().timeIntervalSince(sent)
            try #require(!importing.isRunning, "the import did not end within 20 s of SIGTERM")
            let result = importing.finish()
            #expect(!result.endedBySignal && result.status == 128 + SIGTERM, "\(result.status): \(result.stderr)")
            #expect(took >= 1.8, "the tools were not given their two seconds: \(took) s")
            #expect(took < 3.5, "one grace for all, not one each: \(took) s")
            #expect(started.allSatisfy(ChildProcess.hasEnded), "left running: \(started.filter { !ChildProcess.hasEnded($0) })")
            #expect(try cli.read("t.vault") == before, "the vault was written")
        }

        // MARK: - Stopped by the terminal in the background (att60 F4)

        /// `vaultfile import … &` in an interactive bash, its tool reading the terminal (a PIN, as
        /// age asks an encrypted identity's passphrase): the tool is stopped (SIGTTIN), vaultfile
        /// says so once, and after `fg` it starts the tool again in its own group, where the
        /// terminal answers it (before, it waited for ever, saying nothing).
        @Test(.enabled(if: ShellTerminal.Shell.bash.isInstalled, "tmux or bash is absent: skipped"))
        func test_importPass_toolStoppedByTheTerminalInTheBackgroundAsksAgainAfterFg() throws {
            let cli = try setUp("""
                #!/bin/sh
                # A watchdog in a session of its own ends a tool still waiting after 20 s (a failure).
                touch "$ANSWER.pending"
                setsid -f sh -c "sleep 20; [ -e '$ANSWER.pending' ] && kill -KILL $$" < /dev/null > /dev/null 2>&1
                sleep 1
                printf 'PIN for the card: ' > /dev/tty
                read -r pin < /dev/tty
                rm -f "$ANSWER.pending"
                printf '%s' "$pin" > "$ANSWER"
                cat

                """)
            defer { cli.directory.remove() }
            try cli.write("store/a.gpg", Array("secret\n".utf8))
            let terminal = try ShellTerminal.backgroundPassImport(cli); defer { terminal.stop() }
            let screen = terminal.scrollback, waiting = ShellTerminal.toolWaiting
            try #require(CLI.waitFor(20) { screen().contains(waiting) }, "no word of the stopped tool: \(screen())")
            usleep(300_000)
            #expect(screen().components(separatedBy: waiting).count == 2, "said once: \(screen())")
            terminal.type("fg; echo import-status=$?")
            try #require(CLI.waitFor(20) { screen().components(separatedBy: "PIN for the card:").count == 3 }, "not asked again: \(screen())")
            usleep(300_000)
            terminal.type("4321")
            // The line `echo` prints (the typed command holds `import-status=$?`, not at a line's start).
            let status = { screen().split(separator: "\n").first { $0.hasPrefix("import-status=") }.map(String.init) }
            try #require(CLI.waitFor(20) { status() != nil }, "the import did not end: \(screen())")
            #expect(status() == "import-status=0", "\(screen())")
            #expect(try cli.read("answer") == Array("4321".utf8), "\(screen())")
            #expect(try cli.run(["get", "a"] + cli.unlock()).text == "secret")
        }

        // MARK: - Hints that paste (att60 F8)

        /// A file whose name holds an escape: the hint's command shows it as `$'…\x1B…'`, which a
        /// shell reads back as the file's own name (before: `('gpg --decrypt '…\x1B…'')`, quotes
        /// inside quotes, and `\x1B` four characters in single quotes).
        @Test func test_importPass_gpgHintIsACommandThatPastes() throws {
            let cli = try setUp("#!/bin/sh\nexit 2\n")
            defer { cli.directory.remove() }
            let name = "e\u{1B}[2J x'\u{202E}.gpg"
            try cli.write("store/" + name, Array("A\n".utf8))
            let result = try cli.run(["import", "--format", "pass", cli.path("store")] + cli.unlock(), extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"])
            #expect(result.status == 3, "\(result.stderr)")
            let hint = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") }.map(String.init), "\(result.stderr)")
            #expect(!hint.contains("\u{1B}") && hint.contains("\\x1B[2J x\\x27\\xE2\\x80\\xAE.gpg' > /dev/null"), "\(hint)")
            let command = try #require(hint.range(of: "gpg --decrypt ").map { String(hint[$0.upperBound...]) }, "\(hint)")
            let word = try #require(command.components(separatedBy: " > /dev/null").first)
            let echoed = try cli.run(["-c", "printf %s " + word], executable: "/bin/bash")
            #expect(echoed.stdout == Array(cli.path("store/" + name).utf8), "\(word) gives \(echoed.text.debugDescription)")
        }

        /// `shellWord` of names a shell reads back as they were, with the escapes messages show.
        @Test func test_shellWord_escapedCharactersAreWrittenAsAShellReadsThem() throws {
            let cases: [(String, String)] = [("plain/path.gpg", "plain/path.gpg"), ("with space", "'with space'"), ("it's", "'it'\\''s'"),
                                             ("e\u{1B}x", "$'e\\x1Bx'"), ("b\u{202E}\\'", "$'b\\xE2\\x80\\xAE\\\\\\x27'"),
                                             ("t\u{E0041}", "$'t\\xF3\\xA0\\x81\\x81'"), ("café", "'café'"), ("a'\u{301}b", "'a'\\''\u{301}b'")]
            for (text, expected) in cases {
                #expect(shellWord(text) == expected)
                let echoed = try CLI().run(["-c", "printf %s " + shellWord(text)], extra: ["LANG": "C.UTF-8"], executable: "/bin/bash")
                #expect(echoed.stdout == Array(text.utf8), "\(shellWord(text)) gives \(echoed.text.debugDescription)")
            }
        }

        // MARK: - Identities read once

        /// PASSAGE_IDENTITIES_FILE a FIFO (`<(…)`): read once, and given to every age through a
        /// pipe (before, the first age read it and the others waited on an empty FIFO for ever).
        @Test(.enabled(if: hasAge, "age is absent: skipped"))
        func test_importPassage_identitiesFromAPipeReachEveryAge() throws {
            let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            try CryptImportCLITests().sh(cli, "age-keygen -o identities 2>/dev/null && mkdir -p store && age-keygen -y identities > store/.age-recipients"
                                         + " && for i in 1 2 3 4 5 6; do printf 'v%s\\n' $i | age -R store/.age-recipients -o store/g$i.age; done"
                                         + " && mkfifo ids.fifo", [:])
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/bin/sh")
            writer.arguments = ["-c", "cat identities > ids.fifo"]
            writer.currentDirectoryURL = cli.directory.url
            try writer.run()
            defer { if writer.isRunning { writer.terminate() } }
            let importing = try cli.start(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                          extra: ["PASSAGE_IDENTITIES_FILE": cli.path("ids.fifo"), "VAULTFILE_IMPORT_JOBS": "3"])
            defer { if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() } }
            let deadline = Date().addingTimeInterval(30)
            while importing.isRunning && Date() < deadline { usleep(10_000) }
            try #require(!importing.isRunning, "the import did not end within 30 s")
            let result = importing.finish()
            #expect(result.status == 0, "\(result.stderr)")
            for index in 1...6 { #expect(try cli.run(["get", "g\(index)"] + cli.unlock()).text == "v\(index)") }
        }

        /// A sops file with two age stanzas (the first for another key) and SOPS_AGE_KEY_FILE an
        /// `age -p` file: its passphrase is asked once, and the second stanza opens with it
        /// (before, each stanza's age asked again).
        @Test(.enabled(if: hasAge && CLI.hasScript, "age or script (util-linux) is absent: skipped"))
        func test_importSops_protectedKeysFileAskedOnceForAllStanzas() throws {
            var cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
            let fixture = CryptImportCLITests.fixtures.appendingPathComponent("sops/secrets.yaml").path
            let keys = CryptImportCLITests.fixtures.appendingPathComponent("sops/keys.txt").path
            let sh = CryptImportCLITests()
            try sh.sh(cli, "sed -n '/BEGIN AGE/,/END AGE/p' '\(fixture)' | sed 's/^ *//' | age -d -i '\(keys)' > datakey && age-keygen -o other 2>/dev/null", [:])
            let other = try sh.sh(cli, "age-keygen -y other", [:]).trimmingCharacters(in: .whitespacesAndNewlines)
            var entries = ""
            for recipient in [other, ProtectedIdentityCLITests.ageRecipient] {
                let armored = try sh.sh(cli, "age -a -r \(recipient) < datakey", [:])
                entries += "        - recipient: \(recipient)\n          enc: |\n"
                    + armored.split(separator: "\n").map { "            " + $0 + "\n" }.joined()
            }
            let yaml = try String(contentsOfFile: fixture, encoding: .utf8)
            let start = try #require(yaml.range(of: "    age:\n")), end = try #require(yaml.range(of: "    lastmodified:"))
            try cli.write("two.yaml", Array((yaml[..<start.upperBound] + entries + yaml[end.lowerBound...]).utf8))
            try FileManager.default.removeItem(atPath: cli.path("datakey"))
            cli.environment = ["SOPS_AGE_KEY_FILE": ProtectedIdentityCLITests.fixture("identity.age")]
            let prompt = "Passphrase for the sops age keys "
            let session = try cli.interactive(["import", "--format", "sops", cli.path("two.yaml")] + cli.unlock(),
                                              answers: [(prompt, ProtectedIdentityCLITests.agePassphrase)])
            #expect(session.status == 0, "\(session.screen)")
            #expect(session.screen.components(separatedBy: "[answered]").count == 2, "one prompt: \(session.screen)")
            #expect(!session.screen.contains("assphrase for"), "no second prompt, none of age's: \(session.screen)")
            cli.environment = [:]
            #expect(try cli.run(["get", "two/db/password"] + cli.unlock()).text == "hunter2: with a colon")
        }

        /// A plugin identity inside an `age -p` identities file reaches each age unchanged, on its
        /// descriptor 3, with the other identities (age runs the plugin; vaultfile does not parse it).
        @Test(.enabled(if: CLI.hasScript, "script (util-linux) is absent: skipped"))
        func test_importPassage_pluginIdentityInAProtectedFileReachesAge() throws {
            var cli = try setUp(tool: "age", """
                #!/bin/sh
                # age --decrypt -i /dev/fd/3: the identities on descriptor 3, the file on stdin.
                [ "$3" = /dev/fd/3 ] || { echo "identities not on descriptor 3: $*" >&2; exit 9; }
                cat <&3 > "$SEEN.$$"
                cat

                """)
            defer { cli.directory.remove() }
            let identities = "# created: by hand\nAGE-PLUGIN-FAKE-1QQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQ9SXY8H\n"
                + "AGE-SECRET-KEY-1HPG9VNGG406XW7D2NDSL6NGEPWWLF0CEC60TGX0LKT6GKSZRCJSQNGJ37H\n"
            let passphrase = "plugin file passphrase"
            let sealed = try AgeFile.encrypt(SecureBytes(copying: Array(identities.utf8)),
                                             to: [AgeScryptPassphrase(passphrase: SecureBytes(copying: Array(passphrase.utf8)), limits: .defaults, logN: 10)])
            try cli.write("identities.age", sealed)
            try cli.write("store/a.age", Array("pw-a\n".utf8))
            try cli.write("store/b.age", Array("pw-b\n".utf8))
            try FileManager.default.createDirectory(atPath: cli.path("seen"), withIntermediateDirectories: true)
            cli.environment = ["PATH": cli.path("bin") + ":/usr/bin:/bin", "PASSAGE_IDENTITIES_FILE": cli.path("identities.age"),
                               "SEEN": cli.path("seen/age")]
            let session = try cli.interactive(["import", "--format", "passage", cli.path("store")] + cli.unlock(),
                                              answers: [("Passphrase for the passage identities ", passphrase)])
            #expect(session.status == 0, "\(session.screen)")
            let seen = try FileManager.default.contentsOfDirectory(atPath: cli.path("seen"))
            #expect(seen.count == 2, "one age for each file: \(seen)")
            for file in seen { #expect(try cli.read("seen/" + file) == Array(identities.utf8)) }
            cli.environment = [:]
            #expect(try cli.run(["get", "a"] + cli.unlock()).text == "pw-a")
        }
    }
}
