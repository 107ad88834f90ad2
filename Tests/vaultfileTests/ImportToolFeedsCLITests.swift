import Foundation
import TestSupport
import Testing
@testable import vaultfile

/// What `import --format passage|sops` writes to its age children, and how many it runs (att62
/// F5, F6): the identities on descriptor 3 are written from the run's poll loop, so a signal ends
/// an import whose age never reads them; a sops file's age entries are capped, and age's stderr is
/// shown for the last one only. Fake tools are shell scripts on PATH; every wait is bounded.
extension ExternalTools {
    @Suite struct ImportToolFeedsCLITests {
        // MARK: - F5: a signal while identities wait to be written

        /// PASSAGE_IDENTITIES_FILE a pipe of 200 KB (more than a pipe holds) and an age that never
        /// reads its descriptor 3: SIGTERM and SIGINT end the import at once, with 128 + the signal,
        /// the tool ended too (before, vaultfile sat in a blocking write with the signals blocked,
        /// and only SIGKILL ended it).
        @Test(arguments: [SIGTERM, SIGINT])
        func test_importPassage_aSignalEndsTheImportWhileAnAgeNeverReadsItsIdentities(signal: Int32) throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/age", Array("#!/bin/sh\necho $$ > \"$MARK.tmp\"\nmv \"$MARK.tmp\" \"$MARK\"\nexec sleep 30\n".utf8), mode: 0o700)
            try cli.write("store/.age-recipients", Array("K\n".utf8))
            try cli.write("store/a.age", Array("x\n".utf8))
            let before = try cli.read("t.vault"), mark = cli.path("started")
            let script = "PASSAGE_IDENTITIES_FILE=<(head -c 200000 /dev/zero | tr '\\0' x) exec setsid \"$VF\" import --format passage "
                + "store --vault t.vault --password-file pw"
            let importing = try cli.start(["-c", script], extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "MARK": mark], executable: "/bin/bash")
            var tool: pid_t = 0
            defer {
                if importing.isRunning { kill(importing.pid, SIGKILL); _ = importing.finish() }
                if tool > 0 && !ChildProcess.hasEnded(tool) { kill(tool, SIGKILL) }
            }
            let deadline = Date().addingTimeInterval(20)
            while !FileManager.default.fileExists(atPath: mark) && importing.isRunning && Date() < deadline { usleep(10_000) }
            if !importing.isRunning { let early = importing.finish(); Issue.record("the import ended first: \(early.status) \(early.stderr)"); return }
            tool = try #require(pid_t(String(decoding: try cli.read("started"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
            usleep(300_000)
            let sent = Date()
            kill(importing.pid, signal)
            while importing.isRunning && Date().timeIntervalSince(sent) < 20 { usleep(10_000) }
            try #require(!importing.isRunning, "the import did not end within 20 s of signal \(signal)")
            #expect(Date().timeIntervalSince(sent) < 5, "the signal waited")
            let result = importing.finish()
            #expect(!result.endedBySignal && result.status == 128 + signal, "\(result.status): \(result.stderr)")
            while !ChildProcess.hasEnded(tool) && Date().timeIntervalSince(sent) < 10 { usleep(10_000) }
            #expect(ChildProcess.hasEnded(tool), "the age was left running")
            #expect(try cli.read("t.vault") == before, "the vault was written")
        }

        /// An age that reads its identities whole (200 KB through the pipe) still gets all of
        /// them, and its stdin, from the poll loop.
        @Test func test_importPassage_anAgeThatReadsItsIdentitiesGetsThemWhole() throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            // Counts what descriptor 3 held, then prints the file (its stdin) as the plaintext.
            try cli.write("bin/age", Array("#!/bin/sh\nwc -c <&3 > \"$COUNT\"\ncat\n".utf8), mode: 0o700)
            try cli.write("store/.age-recipients", Array("K\n".utf8))
            try cli.write("store/a.age", Array("secret\n".utf8))
            let script = "PASSAGE_IDENTITIES_FILE=<(head -c 200000 /dev/zero | tr '\\0' x) exec \"$VF\" import --format passage "
                + "store --vault t.vault --password-file pw"
            let result = try cli.run(["-c", script], extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "COUNT": cli.path("count")], executable: "/bin/bash")
            #expect(result.status == 0, "\(result.stderr)")
            #expect(String(decoding: try cli.read("count"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "200000")
            #expect(try cli.run(["get", "a"] + cli.unlock()).text == "secret")
        }

        // MARK: - F8: tools stopped by the terminal, restarted one at a time

        /// Two tools started in the background, both stopped reading the terminal: after `fg` they
        /// are started again one at a time, so each gets its own typed line (before, both read the
        /// terminal at once, and the second took the shell's next line).
        @Test(.enabled(if: ShellTerminal.Shell.bash.isInstalled, "tmux or bash is absent: skipped"))
        func test_importPass_twoToolsStoppedInTheBackgroundAskOneAtATimeAfterFg() throws {
            let cli = try CLI.withEntriesSet(["kept": "before"]); defer { cli.directory.remove() }
            for folder in ["bin", "store"] { try FileManager.default.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true) }
            try cli.write("bin/gpg", Array("""
                #!/bin/sh
                # A watchdog in a session of its own ends a tool still waiting after 30 s (a failure);
                # an answer stops every watchdog (a tool ended before its answer leaves its own behind).
                touch "$ANSWER.$$.pending"
                setsid -f sh -c "sleep 30; [ -e '$ANSWER.$$.pending' ] && kill -KILL $$" < /dev/null > /dev/null 2>&1
                sleep 1
                printf 'PIN for the card: ' > /dev/tty
                read -r pin < /dev/tty
                rm -f "$ANSWER".*.pending
                printf '%s' "$pin" > "$ANSWER.$$"
                cat

                """.utf8), mode: 0o700)
            try cli.write("store/.gpg-id", Array("K\n".utf8))
            try cli.write("store/a.gpg", Array("secret-a\n".utf8))
            try cli.write("store/b.gpg", Array("secret-b\n".utf8))
            let terminal = try ShellTerminal.backgroundPassImport(cli, environment: "VAULTFILE_IMPORT_JOBS=2"); defer { terminal.stop() }
            let screen = terminal.scrollback, waiting = ShellTerminal.toolWaiting
            let prompts = { screen().components(separatedBy: "PIN for the card:").count - 1 }
            try #require(CLI.waitFor(20) { screen().contains(waiting) && prompts() == 2 }, "the two tools did not stop: \(screen())")
            usleep(300_000)
            terminal.type("fg; echo import-status=$?")
            try #require(CLI.waitFor(20) { prompts() == 3 }, "not asked again: \(screen())")
            // The second waits until the first has its answer.
            sleep(2)
            #expect(prompts() == 3, "two asked at once: \(screen())")
            terminal.type("1111")
            try #require(CLI.waitFor(20) { prompts() == 4 }, "the second was not asked: \(screen())")
            usleep(300_000)
            terminal.type("2222")
            let status = { screen().split(separator: "\n").first { $0.hasPrefix("import-status=") }.map(String.init) }
            try #require(CLI.waitFor(30) { status() != nil }, "the import did not end: \(screen())")
            #expect(status() == "import-status=0", "\(screen())")
            let answers = try FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path).filter { $0.hasPrefix("answer.") && !$0.hasSuffix(".pending") }
            #expect(Set(try answers.map { String(decoding: try cli.read($0), as: UTF8.self) }) == ["1111", "2222"], "\(answers) \(screen())")
            #expect(try cli.run(["get", "a"] + cli.unlock()).text == "secret-a" && cli.run(["get", "b"] + cli.unlock()).text == "secret-b")
        }

        // MARK: - F6: a sops file's age entries

        /// A sops file of `count` age entries (the fixture's one, repeated), SOPS_AGE_KEY_FILE a plain
        /// file, and an age that fails as age does when no identity matches.
        private func sops(_ cli: CLI, entries count: Int) throws -> CLI.Result {
            let fixture = try String(contentsOfFile: CryptImportCLITests.fixtures.appendingPathComponent("sops/secrets.yaml").path, encoding: .utf8)
            let start = try #require(fixture.range(of: "    age:\n")), end = try #require(fixture.range(of: "    lastmodified:"))
            let yaml = fixture[..<start.upperBound] + String(repeating: String(fixture[start.upperBound..<end.lowerBound]), count: count)
                + fixture[end.lowerBound...]
            try cli.write("many.yaml", Array(yaml.utf8))
            try cli.write("keys.txt", Array("AGE-SECRET-KEY-1X\n".utf8))
            try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
            try cli.write("bin/age", Array("""
                #!/bin/sh
                echo run >> "$RUNS"
                cat > /dev/null
                echo 'age: error: no identity matched any of the recipients' >&2
                echo 'age: report unexpected or unhelpful errors at https://filippo.io/age/report' >&2
                exit 1

                """.utf8), mode: 0o700)
            return try cli.run(["import", "--format", "sops", "many.yaml"] + cli.unlock(),
                               extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin", "SOPS_AGE_KEY_FILE": cli.path("keys.txt"), "RUNS": cli.path("runs")])
        }

        /// Three entries none opens: three age runs, and age's two lines once (for the last), then
        /// the one error naming the file (before: two lines per entry, 600 for 300).
        @Test func test_importSops_ageStderrIsShownForTheLastEntryOnly() throws {
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            let result = try sops(cli, entries: 3)
            #expect(result.status == 3, "\(result.stderr)")
            #expect(try cli.read("runs").count == 3 * 4, "one age run per entry")
            #expect(result.stderr.components(separatedBy: "no identity matched").count == 2, "\(result.stderr)")
            #expect(result.stderr.contains("the data key of many.yaml (its sops.age entries) does not open"), "\(result.stderr)")
        }

        /// More entries than the cap: refused before any age runs, naming the file, the count and the cap.
        @Test func test_importSops_moreAgeEntriesThanTheCapAreRefusedBeforeAnyAgeRuns() throws {
            let cli = try CLI.withVault([:]); defer { cli.directory.remove() }
            #expect(CryptImport.maxAgeDataKeys == 64)
            let over = try sops(cli, entries: 65)
            #expect(over.status != 0 && over.stderr.contains("many.yaml has 65 sops.age entries, and vaultfile tries at most 64"), "\(over.stderr)")
            #expect(over.stderr.contains("nothing was imported"), "\(over.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("runs")), "age ran")
            // At the cap: tried.
            let at = try sops(cli, entries: 64)
            #expect(at.status == 3 && at.stderr.components(separatedBy: "no identity matched").count == 2, "\(at.stderr)")
            #expect(try cli.read("runs").count == 64 * 4)
        }
    }
}
