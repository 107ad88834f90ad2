import Foundation
import TestSupport
import Testing

/// `vaultfile exec`: `--only` under `--prefix`, binary entries, commands that cannot start,
/// fields, and signals passed on to the command. (Name mapping, exit statuses and clashes are in ScriptingCLITests; the child's
/// environment and descriptors in ChildProcessCLITests.)
@Suite struct ExecCLITests {

    // MARK: - --only and --prefix

    @Test func test_exec_onlyUnderAPrefixTakesTheFullNameOrTheNameBelowIt() throws {
        let cli = try CLI.withVault(["prod/db": "d", "prod/api": "a", "other/x": "o"]); defer { cli.directory.remove() }
        let show = ["--", "sh", "-c", "printf '%s|%s' \"$DB\" \"${API-unset}\""]
        for only in ["db", "prod/db"] {
            let result = try cli.run(["exec", "--prefix", "prod", "--only", only] + cli.unlock() + show)
            #expect(result.status == 0 && result.text == "d|unset", "--only \(only): \(result.stderr)")
        }
        let outside = try cli.run(["exec", "--prefix", "prod", "--only", "other/x"] + cli.unlock() + ["--", "true"])
        #expect(outside.status == 64 && outside.stderr.contains("not under --prefix prod/"), "\(outside.stderr)")
        #expect(try cli.run(["exec", "--prefix", "prod", "--only", "nothing"] + cli.unlock() + ["--", "true"]).status == 1)
    }

    @Test func test_exec_onlyThatMeansTwoEntriesUnderAPrefixIsRefused() throws {
        let cli = try CLI.withVault(["prod/db": "outer", "prod/prod/db": "inner"]); defer { cli.directory.remove() }
        let ambiguous = try cli.run(["exec", "--prefix", "prod", "--only", "prod/db"] + cli.unlock() + ["--", "true"])
        #expect(ambiguous.status == 64 && ambiguous.stderr.contains("ambiguous"), "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("'prod/db'") && ambiguous.stderr.contains("'prod/prod/db'"))
        let inner = try cli.run(["exec", "--prefix", "prod", "--only", "prod/prod/db"] + cli.unlock() + ["--", "sh", "-c", "printf %s \"$PROD_DB\""])
        #expect(inner.status == 0 && inner.text == "inner", "\(inner.stderr)")
    }

    @Test func test_exec_aPrefixWithoutSlashIsAWholeSegment() throws {
        let cli = try CLI.withEntriesSet([("prod/db/main", bytes("m")), ("production/x", bytes("p"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--prefix", "prod"] + cli.unlock() + ["--", "sh", "-c", "printf '%s|%s|%s' \"${DB_MAIN-unset}\" \"${_DB_MAIN-unset}\" \"${UCTION_X-unset}\""])
        #expect(result.text == "m|unset|unset", "\(result.stderr)")
    }

    @Test func test_exec_anEmptyPrefixIsRefusedUnlessAllowEmpty() throws {
        let cli = try CLI.withVault(["prod/db": "d", "other/x": "o"]); defer { cli.directory.remove() }
        let show = ["--", "sh", "-c", "printf '%s|%s' \"${PROD_DB-unset}\" \"${OTHER_X-unset}\""]
        let refused = try cli.run(["exec", "--prefix", ""] + cli.unlock() + show)
        #expect(refused.status == 64 && refused.text.isEmpty, "\(refused.stderr)")
        #expect(refused.stderr.contains("--prefix is empty") && refused.stderr.contains("--allow-empty"), "\(refused.stderr)")
        let allowed = try cli.run(["exec", "--prefix", "", "--allow-empty"] + cli.unlock() + show)
        #expect(allowed.status == 0 && allowed.text == "d|o", "\(allowed.stderr)")
        let noPrefix = try cli.run(["exec"] + cli.unlock() + show)
        #expect(noPrefix.status == 0 && noPrefix.text == "d|o", "\(noPrefix.stderr)")
    }

    // MARK: - Binary entries

    @Test func test_exec_skipsABinaryEntryWithAWarning() throws {
        let cli = try CLI.withEntriesSet([("app/key", [0x00, 0xFF, 0x01]), ("app/token", bytes("t"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "sh", "-c", "printf '%s|%s' \"$APP_TOKEN\" \"${APP_KEY-unset}\""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "t|unset")
        #expect(result.stderr.contains("warning: left out 1 binary value") && result.stderr.contains("'app/key'"), "\(result.stderr)")
    }

    @Test func test_exec_onlyNamingABinaryEntryFailsWithStatus2() throws {
        let cli = try CLI.withEntriesSet([("app/key", [0x00, 0xFF]), ("app/token", bytes("t"))]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--only", "app/key"] + cli.unlock() + ["--", "sh", "-c", "touch ran"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("'app/key' holds binary data"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")))
    }

    // MARK: - A command that cannot start

    @Test func test_exec_aMissingCommandExits127AndANonExecutableOne126() throws {
        let cli = try CLI.withEntriesSet([("a", bytes("x"))]); defer { cli.directory.remove() }
        let missing = try cli.run(["exec"] + cli.unlock() + ["--", "no-such-command-here"])
        #expect(missing.status == 127 && missing.stderr.contains("'no-such-command-here': command not found"), "\(missing.stderr)")
        #expect(try cli.run(["exec"] + cli.unlock() + ["--", "./nowhere/x"]).status == 127)
        try cli.write("plain.sh", bytes("#!/bin/sh\n"), mode: 0o644)
        let plain = try cli.run(["exec"] + cli.unlock() + ["--", "./plain.sh"])
        #expect(plain.status == 126 && plain.stderr.contains("not an executable file"), "\(plain.stderr)")
        #expect(try cli.run(["exec"] + cli.unlock() + ["--", "/tmp"]).status == 126)
    }

    @Test func test_exec_anEnvironmentTooLargeToStartExits126AndSaysHowToExportFewer() throws {
        // One variable over Linux's 128 KiB limit for a single string makes posix_spawn fail with E2BIG.
        let cli = try CLI.withEntriesSet([("app/big", [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)), ("app/small", bytes("s"))])
        defer { cli.directory.remove() }
        let result = try cli.run(["exec"] + cli.unlock() + ["--", "true"])
        #expect(result.status == 126, "\(result.stderr)")
        #expect(result.stderr.contains("cannot run 'true': its environment and arguments are larger than the system allows"), "\(result.stderr)")
        #expect(result.stderr.contains("2 variables were exported: choose fewer with --prefix or --only"), "\(result.stderr)")
        // Another failure to start gets no such hint.
        let small = try cli.run(["exec", "--only", "app/small"] + cli.unlock() + ["--", "/tmp"])
        #expect(small.status == 126 && !small.stderr.contains("choose fewer"), "\(small.stderr)")
    }

    // MARK: - Fields

    @Test func test_exec_fieldsOnlyWithTheFlagAsNameField() throws {
        var cli = try CLI.withEntriesSet([("app/db", bytes("pw"))]); defer { cli.directory.remove() }
        cli.environment = [:]
        #expect(try cli.run(["set", "app/db", "--field", "user"] + cli.unlock(), stdin: bytes("admin")).status == 0)
        let script = ["--", "sh", "-c", "printf '%s|%s' \"$APP_DB\" \"${APP_DB_USER-unset}\""]
        #expect(try cli.run(["exec"] + cli.unlock() + script).text == "pw|unset", "fields are never exported by default")
        #expect(try cli.run(["exec", "--fields"] + cli.unlock() + script).text == "pw|admin")
        #expect(try cli.run(["set", "app/db/user"] + cli.unlock(), stdin: bytes("x")).status == 0)
        let clash = try cli.run(["exec", "--fields"] + cli.unlock() + ["--", "true"])
        #expect(clash.status == 2 && clash.stderr.contains("'app/db#user'") && clash.stderr.contains("'app/db/user'"), "\(clash.stderr)")
    }

    // MARK: - Signals

    /// A command that writes its process id to `ready` once its traps are set, then waits.
    private func waitingCommand(traps: String, _ cli: CLI) -> [String] {
        ["--", "sh", "-c", "\(traps); echo $$ > \(cli.path("ready.tmp")); mv \(cli.path("ready.tmp")) \(cli.path("ready")); while :; do sleep 0.05; done"]
    }

    /// The command's process id once it is ready; nil after 30 s.
    private func commandPid(_ cli: CLI) -> pid_t? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: cli.path("ready"), encoding: .utf8),
               let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return pid }
            usleep(10_000)
        }
        return nil
    }

    /// Waits at most 30 s for `running` to end, then for its `command` to be gone. A command left
    /// running (the failure looked for) is killed before the outputs are read, since it holds
    /// vaultfile's output pipes open. Nil when vaultfile did not end.
    private func finish(_ running: CLI.Running, command: pid_t) -> (result: CLI.Result, commandOutlivedIt: Bool)? {
        let deadline = Date().addingTimeInterval(30)
        while running.isRunning && Date() < deadline { usleep(10_000) }
        let ended = !running.isRunning
        let outlived = ended && kill(command, 0) == 0
        kill(command, SIGKILL)
        if !ended { kill(running.pid, SIGKILL) }
        let result = running.finish()
        return ended ? (result, outlived) : nil
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func test_exec_passesASignalOnToTheCommandAndExitsWithItsStatus(signal: Int32) throws {
        let cli = try CLI.withVault(["app/token": "t"]); defer { cli.directory.remove() }
        let running = try cli.start(["exec"] + cli.unlock()
            + waitingCommand(traps: "trap 'echo \"caught $APP_TOKEN\"; exit 7' TERM INT HUP", cli))
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        let command = try #require(commandPid(cli), "the command never started")
        kill(running.pid, signal)
        let (result, outlived) = try #require(finish(running, command: command), "exec did not end after signal \(signal)")
        #expect(!outlived, "the command ran on after vaultfile ended")
        #expect(!result.endedBySignal && result.status == 7, "\(result.status): \(result.stderr)")
        #expect(result.text == "caught t\n", "the command's trap did not run: \(result.text)")
    }

    @Test func test_exec_waitsForACommandThatIgnoresTheSignalAndTakesItsEnding() throws {
        let cli = try CLI.withVault(["app/token": "t"]); defer { cli.directory.remove() }
        let running = try cli.start(["exec"] + cli.unlock() + waitingCommand(traps: "trap '' TERM", cli))
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        let command = try #require(commandPid(cli), "the command never started")
        kill(running.pid, SIGTERM)
        usleep(300_000)
        let stillWaiting = running.isRunning
        #expect(stillWaiting, "vaultfile ended while its command still ran")
        #expect(kill(command, 0) == 0, "the command did not outlive an ignored SIGTERM")
        if stillWaiting { kill(command, SIGKILL) }
        let (result, _) = try #require(finish(running, command: command), "exec did not end after its command")
        if stillWaiting { #expect(result.endedBySignal && result.status == SIGKILL, "\(result.status): \(result.stderr)") }
    }

    @Test func test_exec_endsBySignalWhenTheSignalEndedTheCommand() throws {
        let cli = try CLI.withVault(["app/token": "t"]); defer { cli.directory.remove() }
        let running = try cli.start(["exec"] + cli.unlock() + waitingCommand(traps: ":", cli))
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        let command = try #require(commandPid(cli), "the command never started")
        kill(running.pid, SIGTERM)
        let (result, outlived) = try #require(finish(running, command: command), "exec did not end after SIGTERM")
        #expect(!outlived, "the command ran on after vaultfile ended")
        // A shell sees 143 either way; a script's loop stops only when vaultfile itself ends by the signal.
        #expect(result.endedBySignal && result.status == SIGTERM, "\(result.status): \(result.stderr)")
    }

    @Test func test_exec_takesTheCommandsStatusWhenSIGCHLDWasInheritedIgnored() throws {
        let cli = try CLI.withVault(["app/token": "t"]); defer { cli.directory.remove() }
        // perl-base is in every Debian system; dash's `trap '' CHLD` does not reach an exec'd program.
        let result = try cli.run(["-e", "$SIG{CHLD} = 'IGNORE'; exec @ARGV or die", CLI.binary, "exec"] + cli.unlock() + ["--", "sh", "-c", "exit 3"],
                                 executable: "/usr/bin/perl")
        #expect(result.status == 3, "\(result.status): \(result.stderr)")
    }

    /// recheck-exec N1: when vaultfile leads its terminal's session (`ssh -t host vaultfile exec …`),
    /// a hang-up reaches vaultfile alone, so it is passed on. python3's pty.fork gives vaultfile a
    /// session and a terminal of its own; closing the terminal's other end hangs it up.
    @Test func test_exec_passesAHangUpOnWhenItLeadsTheTerminalsSession() throws {
        let cli = try CLI.withVault(["app/token": "t"]); defer { cli.directory.remove() }
        let ready = cli.path("ready"), hung = cli.path("hung")
        let script = """
            import os, pty, select, sys, time
            pid, master = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            deadline = time.time() + 30
            while not os.path.exists(\(String(reflecting: ready))) and time.time() < deadline:
                if select.select([master], [], [], 0.05)[0]:
                    try: os.read(master, 4096)
                    except OSError: break
            os.close(master)
            deadline = time.time() + 30
            while time.time() < deadline:
                ended, status = os.waitpid(pid, os.WNOHANG)
                if ended: sys.exit(0 if os.path.exists(\(String(reflecting: hung))) else 3)
                time.sleep(0.02)
            os.kill(pid, 9); os.waitpid(pid, 0); sys.exit(4)
            """
        let command = ["--", "sh", "-c", "trap 'touch \(hung); exit 5' HUP; touch \(ready); while :; do sleep 0.05; done"]
        let result = try cli.run(["-c", script, CLI.binary, "exec"] + cli.unlock() + command, executable: "/usr/bin/python3")
        #expect(result.status == 0, "status \(result.status) (3: vaultfile ended but the command never had the hang-up; 4: vaultfile never ended): \(result.stderr)")
    }
}
