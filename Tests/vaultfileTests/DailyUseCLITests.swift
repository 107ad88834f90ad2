import Foundation
import TestSupport
import Testing

/// Issue 47's "daily use": exec's --prefix and --only that match nothing, batch's plain gets and
/// its cp, a writer that waits for the lock naming the holder, `unlock` checking a source given on
/// purpose while the agent holds the vault, and the agent's lock file removed when it ends.
/// (edit without the lock: EditCLITests; the password prompt's three tries: PasswordPromptCLITests.)
@Suite struct DailyUseCLITests {
    // MARK: - exec

    @Test func test_exec_refusesAPrefixThatMatchesNothing() throws {
        let cli = try CLI.withEntriesSet(["app/db": "p"]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--prefix", "nope"] + cli.unlock() + ["--", "sh", "-c", "touch ran"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--prefix nope matches no entry") && result.stderr.contains("--allow-empty"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the command did not run")
    }

    @Test func test_exec_refusesAnOnlyThatNamesNothing() throws {
        let cli = try CLI.withEntriesSet(["app/db": "p"]); defer { cli.directory.remove() }
        let result = try cli.run(["exec", "--only", "app/dbb"] + cli.unlock() + ["--", "sh", "-c", "touch ran"])
        #expect(result.status == 1 && result.stderr.contains("app/dbb"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the command did not run")
    }

    @Test func test_exec_allowEmptyRunsTheCommandWithNoEntries() throws {
        let cli = try CLI.withEntriesSet(["app/db": "p"]); defer { cli.directory.remove() }
        let prefix = try cli.run(["exec", "--prefix", "nope", "--allow-empty"] + cli.unlock() + ["--", "sh", "-c", "printf '%s' \"${APP_DB-unset}\""])
        #expect(prefix.status == 0 && prefix.text == "unset", "\(prefix.stderr)")
        let only = try cli.run(["exec", "--only", "app/db", "--only", "missing", "--allow-empty"] + cli.unlock()
                               + ["--", "sh", "-c", "printf '%s' \"$APP_DB\""])
        #expect(only.status == 0 && only.text == "p", "an --only name that names nothing is skipped: \(only.stderr)")
        // A prefix that matches is unchanged, and no prefix on an empty vault still runs.
        #expect(try cli.run(["exec", "--prefix", "app"] + cli.unlock() + ["--", "sh", "-c", "printf '%s' \"$DB\""]).text == "p")
        let empty = try CLI.withEntriesSet([String: String]()); defer { empty.directory.remove() }
        #expect(try empty.run(["exec"] + empty.unlock() + ["--", "true"]).status == 0)
    }

    // MARK: - batch

    @Test func test_batch_refusesTwoPlainGetsAndChangesNothing() throws {
        let cli = try CLI.withEntriesSet(["a": "x", "b": "y"]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("set c --value z\nget a\nget b\n".utf8))
        #expect(result.status == 64 && result.stdout.isEmpty, "\(result.stderr)")
        #expect(result.stderr.contains("lines 2 and 3") && result.stderr.contains("-z") && result.stderr.contains("--json"), "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).text == "a\nb\n", "nothing was changed")
    }

    @Test func test_batch_refusesAPlainGetBesideAListAndChangesNothing() throws {
        let cli = try CLI.withEntriesSet(["a": "x", "b": "y"]); defer { cli.directory.remove() }
        for (script, lines) in [("get a\nset c --value z\nlist\n", "lines 1 and 3 are get and list"),
                                ("list\nget a\n", "lines 1 and 2 are list and get")] {
            let result = try cli.run(["batch"] + cli.unlock(), stdin: Array(script.utf8))
            #expect(result.status == 64 && result.stdout.isEmpty, "\(script): \(result.stderr)")
            #expect(result.stderr.contains(lines) && result.stderr.contains("the value and the names")
                    && result.stderr.contains("-z") && result.stderr.contains("--json"), "\(script): \(result.stderr)")
        }
        #expect(try cli.run(["list"] + cli.unlock()).text == "a\nb\n", "nothing was changed")
        // A get with lines that print nothing, and list lines alone, print as before; -z frames a get and a list.
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("set c --value z\nget a\n".utf8)).text == "x")
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("list\nlist\n".utf8)).text == "a\nb\nc\na\nb\nc\n")
        let nul = try cli.run(["batch", "-z"] + cli.unlock(), stdin: Array("get a\nlist\n".utf8))
        #expect(nul.status == 0 && nul.stdout.starts(with: Array("x\0".utf8)), "\(nul.stderr)")
    }

    @Test func test_batch_oneGetPrintsAsBeforeAndFramedGetsRun() throws {
        let cli = try CLI.withEntriesSet(["a": "x", "b": "y"]); defer { cli.directory.remove() }
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("get a\n".utf8)).text == "x")
        let nul = try cli.run(["batch", "-z"] + cli.unlock(), stdin: Array("get a\nget b\n".utf8))
        #expect(nul.status == 0 && nul.stdout == Array("x\0y\0".utf8), "\(nul.stderr)")
        let json = try cli.run(["batch", "--json"] + cli.unlock(), stdin: Array("get a\nget b\n".utf8))
        #expect(json.status == 0 && json.text.split(separator: "\n").count == 2, "\(json.stderr)")
    }

    @Test func test_batch_cpCopiesAnEntryOrAFolder() throws {
        let cli = try CLI.withEntriesSet(["prod/db": "p", "prod/api": "k", "a": "x"]); defer { cli.directory.remove() }
        let result = try cli.run(["batch"] + cli.unlock(), stdin: Array("cp a b\ncp prod/ qa/\nset a --value changed\n".utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "b"] + cli.unlock()).text == "x", "the copy took the value before the later set")
        #expect(try cli.run(["get", "qa/db"] + cli.unlock()).text == "p")
        let taken = try cli.run(["batch"] + cli.unlock(), stdin: Array("cp a b\n".utf8))
        #expect(taken.status != 0 && taken.stderr.contains("line 1"), "cp refuses to replace without --force: \(taken.stderr)")
        #expect(try cli.run(["batch"] + cli.unlock(), stdin: Array("cp a b --force\n".utf8)).status == 0)
        #expect(try cli.run(["get", "b"] + cli.unlock()).text == "changed")
    }

    // MARK: - A writer waiting for the lock

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock"), "util-linux flock is absent: skipped"))
    func test_set_waitingForTheLockSaysWhoHoldsIt() async throws {
        let cli = try CLI.withEntriesSet(["a": "x"]); defer { cli.directory.remove() }
        // flock(1) holds the vault's lock for 3 s, as another writer would.
        let holder = try cli.start(["-c", "exec flock '\(cli.path("t.vault.lock"))' sleep 3"], executable: "/bin/sh")
        defer { holder.kill() }
        #expect(CLI.waitFor(5) { ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").contains(" \(holder.pid) ") })
        let waited = try cli.run(["set", "b", "--lock-timeout", "10"] + cli.unlock(), stdin: Array("y".utf8))
        #expect(waited.status == 0, "\(waited.stderr)")
        #expect(waited.stderr.contains("waiting for process \(holder.pid) (flock)") && waited.stderr.contains(cli.path("t.vault")),
                "\(waited.stderr)")
        let again = try cli.start(["-c", "exec flock '\(cli.path("t.vault.lock"))' sleep 3"], executable: "/bin/sh")
        defer { again.kill() }
        #expect(CLI.waitFor(5) { ((try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? "").contains(" \(again.pid) ") })
        let busy = try cli.run(["set", "c", "--lock-timeout", "0.2"] + cli.unlock(), stdin: Array("z".utf8))
        #expect(busy.status == 5 && busy.stderr.contains("process \(again.pid) (flock) holds"), "\(busy.stderr)")
    }

    // MARK: - unlock and the agent

    @Test func test_unlock_checksAWrongPasswordWhenTheAgentHoldsTheVault() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        try cli.write("wrong", Array("nope".utf8))
        let wrong = try cli.run(["unlock", "--vault", cli.path("t.vault"), "--password-file", cli.path("wrong")])
        #expect(wrong.status == 3, "a wrong password is refused although the agent holds the key: \(wrong.stderr)")
        try cli.write("wrong.key", Array(repeating: 0x41, count: 64))
        #expect(try cli.run(["unlock", "--vault", cli.path("t.vault"), "--keyfile", cli.path("wrong.key")]).status == 3)
        // The right password, and no source at all, still unlock (the latter with the agent's key).
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.shell("\"$VF\" unlock --vault t.vault <&-").status == 0)
    }

    @Test func test_agent_removesItsLockFileWhenItEnds() throws {
        let cli = try CLI.withVault(["a": "1"]); defer { cli.stopAgent(); cli.directory.remove() }
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(FileManager.default.fileExists(atPath: cli.path("agent.sock.lock")), "the running agent holds its lock file")
        #expect(try cli.run(["lock", "--vault", cli.path("t.vault")]).status == 0)
        #expect(CLI.waitFor(5) { !CLI.socketExists(cli.path("agent.sock")) }, "the agent ends when it holds no key")
        #expect(CLI.waitFor(5) { !FileManager.default.fileExists(atPath: cli.path("agent.sock.lock")) }, "no agent.sock.lock is left")
        // A new agent starts as before, and `agent stop` leaves nothing either.
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        #expect(try cli.run(["agent", "stop"]).status == 0)
        #expect(CLI.waitFor(5) { !FileManager.default.fileExists(atPath: cli.path("agent.sock.lock")) }, "no agent.sock.lock is left")
    }
}
