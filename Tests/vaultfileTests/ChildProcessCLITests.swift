import Foundation
import TestSupport
import Testing

/// What child processes get, and what a killed `edit` leaves, through the real binary: the private
/// folder on signals and after SIGKILL, the environment and descriptors of `exec`'s command, the
/// editor, the password command and git, their limits and signal dispositions; and messages that
/// quote such input without letting its control characters reach the terminal.
@Suite struct ChildProcessCLITests {
    // MARK: - Helpers

    /// A private tmpfs folder for `edit`'s folders ($XDG_RUNTIME_DIR), so a test sees only its own.
    private struct RuntimeDirectory {
        let path: String
        init() throws {
            var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            path = String(cString: made)
        }
        /// The `vaultfile-edit-*` folders in it.
        var editFolders: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasPrefix("vaultfile-edit-") }.sorted()
        }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// /dev/shm is tmpfs on the machines these tests run on; elsewhere the edit tests are skipped.
    static let hasTmpfs: Bool = {
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().prefix(2) == ["/dev/shm", "tmpfs"] }
    }()

    /// An editor that records its file and process id (after making a subfolder and a file of its
    /// own beside the value), then sleeps until killed, its output closed so it holds no pipe.
    private func sleepingEditor(_ cli: CLI) throws -> String {
        try cli.write("editor.sh", Array("""
            #!/bin/sh
            folder="$(dirname "$1")"
            mkdir -p "$folder/sub/deeper" && printf 'editor copy' > "$folder/sub/deeper/backup"
            echo $$ > "\(cli.path("editor.pid"))"
            echo "$1" > "\(cli.path("where.new"))" && mv "\(cli.path("where.new"))" "\(cli.path("where"))"
            exec sleep 30 </dev/null >/dev/null 2>&1

            """.utf8), mode: 0o700)
        return cli.path("editor.sh")
    }

    /// Waits (at most 20 s) until `name` exists in the test's folder; returns its contents.
    private func waitForFile(_ cli: CLI, _ name: String) -> String? {
        for _ in 0..<1_000 {
            if let bytes = try? cli.read(name) { return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
            usleep(20_000)
        }
        return nil
    }

    /// Waits at most `seconds` for a running vaultfile; kills it and returns nil when it does not end.
    private func finish(_ running: CLI.Running, within seconds: Double = 20) -> (result: CLI.Result, bySignal: Bool)? {
        let deadline = Date().addingTimeInterval(seconds)
        while running.isRunning && Date() < deadline { usleep(20_000) }
        guard !running.isRunning else {
            kill(running.pid, SIGKILL)
            _ = running.finish()
            return nil
        }
        let result = running.finish()
        return (result, result.endedBySignal)
    }

    /// Kills the sleeping editor left by a test, if it still runs (by its recorded pid, checked to be
    /// the editor script or the sleep it becomes; it may still be on its way from one to the other).
    private func killEditor(_ cli: CLI) {
        guard let text = try? cli.read("editor.pid"),
              let pid = Int32(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        for _ in 0..<250 {
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return }
            if command.hasPrefix("sleep") { break }
            guard command.hasPrefix("editor.sh") || command.hasPrefix("sh") else { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
    }

    // MARK: - edit: signals

    @Test(.enabled(if: hasTmpfs), arguments: [SIGTERM, SIGHUP, SIGINT])
    func test_edit_signalWipesThePrivateFolderAndExits128PlusTheSignal(signal: Int32) throws {
        let cli = try CLI.withEntriesSet(["svc/key": "before"]); defer { cli.directory.remove() }
        let runtime = try RuntimeDirectory(); defer { runtime.remove() }
        defer { killEditor(cli) }
        let editor = try sleepingEditor(cli)
        let editing = try cli.start(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": editor, "XDG_RUNTIME_DIR": runtime.path])
        let file = try #require(waitForFile(cli, "where"), "the editor never started")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "before", "the value is in the private file")
        kill(editing.pid, signal)
        let ended = try #require(finish(editing), "edit did not exit after signal \(signal)")
        #expect(!ended.bySignal && ended.result.status == 128 + signal, "\(ended.result.status): \(ended.result.stderr)")
        #expect(runtime.editFolders.isEmpty, "left behind: \(runtime.editFolders)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "before")
    }

    // MARK: - edit: leftovers

    @Test(.enabled(if: hasTmpfs))
    func test_edit_anotherRunLeavesALiveEditAlone() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "before"]); defer { cli.directory.remove() }
        let runtime = try RuntimeDirectory(); defer { runtime.remove() }
        // Waits (at most 20 s) for the test to say "go", then saves a new value.
        try cli.write("editor.sh", Array("""
            #!/bin/sh
            echo "$1" > "\(cli.path("where.new"))" && mv "\(cli.path("where.new"))" "\(cli.path("where"))"
            n=0; while [ ! -f "\(cli.path("go"))" ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
            printf 'after' > "$1"

            """.utf8), mode: 0o700)
        let editing = try cli.start(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": runtime.path])
        let file = try #require(waitForFile(cli, "where"))
        let other = try cli.run(["get", "svc/key"] + cli.unlock(), extra: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(other.text == "before", "\(other.stderr)")
        #expect(FileManager.default.fileExists(atPath: file), "a second run swept a live edit's folder")
        try cli.write("go", [])
        let ended = try #require(finish(editing))
        #expect(ended.result.status == 0, "\(ended.result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "after")
        #expect(runtime.editFolders.isEmpty)
    }

    @Test(.enabled(if: hasTmpfs))
    func test_edit_folderOfAKilledEditIsWipedByTheNextRun() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "before"]); defer { cli.directory.remove() }
        let runtime = try RuntimeDirectory(); defer { runtime.remove() }
        defer { killEditor(cli) }
        try cli.write("outside", Array("keep me".utf8))
        let editing = try cli.start(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": try sleepingEditor(cli), "XDG_RUNTIME_DIR": runtime.path])
        let file = try #require(waitForFile(cli, "where"))
        let folder = (file as NSString).deletingLastPathComponent
        // A link out of the folder: the sweep removes the link and never follows it.
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: cli.path("outside"))
        kill(editing.pid, SIGKILL)
        // The orphaned editor holds a descriptor of the test runner's that vaultfile passed on; it goes too.
        killEditor(cli)
        _ = try #require(finish(editing))
        #expect(FileManager.default.fileExists(atPath: file), "SIGKILL cannot be caught: the file is still there")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock(), extra: ["XDG_RUNTIME_DIR": runtime.path]).status == 0)
        #expect(runtime.editFolders.isEmpty, "left behind: \(runtime.editFolders)")
        #expect(try cli.read("outside") == Array("keep me".utf8))
    }

    @Test(.enabled(if: hasTmpfs))
    func test_sweep_leavesLockedAndRecentUnlockedFoldersAndOtherNames() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        let runtime = try RuntimeDirectory(); defer { runtime.remove() }
        let manager = FileManager.default
        for name in ["vaultfile-edit-held", "vaultfile-edit-recent", "vaultfile-edit-old", "vaultfile-edit-dead", "other-folder"] {
            try manager.createDirectory(atPath: runtime.path + "/" + name, withIntermediateDirectories: false)
            _ = manager.createFile(atPath: runtime.path + "/" + name + "/entry-x", contents: Data("plain".utf8))
        }
        // "held": its lock is taken by a live process (this one); "dead": its lock file is free.
        for name in ["vaultfile-edit-held", "vaultfile-edit-dead"] {
            _ = manager.createFile(atPath: runtime.path + "/" + name + "/vaultfile.lock", contents: nil)
        }
        let held = open(runtime.path + "/vaultfile-edit-held/vaultfile.lock", O_RDWR | O_CLOEXEC)
        defer { close(held) }
        #expect(flock(held, LOCK_EX) == 0)
        // "old": no lock file and untouched for two hours (a crash before the lock, or an older release).
        try manager.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: runtime.path + "/vaultfile-edit-old")
        #expect(try cli.run(["generate"], extra: ["XDG_RUNTIME_DIR": runtime.path]).status == 0)
        #expect(runtime.editFolders == ["vaultfile-edit-held", "vaultfile-edit-recent"])
        #expect(manager.fileExists(atPath: runtime.path + "/other-folder/entry-x"))
    }

    // MARK: - Unlock sources stay out of children

    @Test func test_exec_childGetsNoPasswordSourceAndSaysHowToAllowIt() throws {
        let cli = try CLI.withEntriesSet(["db/password": "db-secret", "other/a": "x"]); defer { cli.directory.remove() }
        let sources = ["VAULTFILE_PASSWORD_COMMAND": "cat pw", "VAULTFILE_IDENTITY_FILE": cli.path("id"), "VAULTFILE_IDENTITY": "AGE-SECRET-KEY-1X",
                       "VAULTFILE_KEYFILE": cli.path("key"), "VAULTFILE_AGENT_SOCK": cli.path("agent.sock")]
        let nested = try cli.run(["exec", "--vault", cli.path("t.vault"), "--prefix", "other/", "--", "sh", "-c",
                                  "env | grep '^VAULTFILE_' | sort >&2; \"$VF\" get db/password --vault t.vault"], extra: sources)
        #expect(!nested.text.contains("db-secret"), "the child read an entry outside --prefix")
        #expect(nested.status == 2)
        #expect(nested.stderr.contains("VAULTFILE_AGENT_SOCK=\(cli.path("agent.sock"))\nVAULTFILE_EXEC=1\nVAULTFILE_NO_AGENT=1\nVAULTFILE_QUIET_WEAK_PASSWORD=1\nVAULTFILE_STATE_DIR=\(cli.stateDirectory)\nvaultfile: error:"),
                "\(nested.stderr)")
        #expect(nested.stderr.contains("inside 'vaultfile exec'") && nested.stderr.contains("--allow-nested"), "\(nested.stderr)")
        let file = try cli.run(["exec", "--vault", cli.path("t.vault"), "--", "sh", "-c", "\"$VF\" list --vault t.vault"],
                               extra: ["VAULTFILE_PASSWORD_FILE": cli.path("pw")])
        #expect(file.status == 2 && file.stderr.contains("--allow-nested"))
    }

    @Test func test_exec_allowNestedPassesTheSourcesOn() throws {
        let cli = try CLI.withEntriesSet(["db/password": "db-secret"]); defer { cli.directory.remove() }
        let nested = ["exec", "--allow-nested", "--vault", cli.path("t.vault"), "--", "sh", "-c", "\"$VF\" get db/password --vault t.vault"]
        let command = try cli.run(nested, extra: ["VAULTFILE_PASSWORD_COMMAND": "cat pw"])
        #expect(command.status == 0 && command.text == "db-secret", "\(command.stderr)")
        // VAULTFILE_PASSWORD leaves vaultfile's environment at start-up; --allow-nested puts it back for the child.
        let variable = try cli.run(nested, extra: ["VAULTFILE_PASSWORD": "pw"])
        #expect(variable.status == 0 && variable.text == "db-secret", "\(variable.stderr)")
    }

    @Test func test_exec_passwordDescriptorIsClosedAndInheritedOnesPassThrough() throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        try cli.write("conf", Array("from fd 3".utf8))
        let high = try cli.shell("\"$VF\" exec --vault t.vault --password-fd 5 -- sh -c 'cat /proc/self/fd/5 2>/dev/null; cat <&3' 5<pw 3<conf")
        #expect(high.status == 0, "\(high.stderr)")
        #expect(high.text == "from fd 3", "the child read the password descriptor: \(high.text)")
        let stdin = try cli.shell("\"$VF\" exec --vault t.vault --password-fd 0 -- sh -c 'cat /proc/self/fd/0; readlink /proc/self/fd/0' <pw")
        #expect(stdin.text == "/dev/null\n", "\(stdin.text) \(stdin.stderr)")
    }

    @Test func test_childProcesses_getNoUnlockVariables() throws {
        let cli = try CLI.withEntriesSet(["k": "v"]); defer { cli.directory.remove() }
        let sources = ["VAULTFILE_PASSWORD_FILE": cli.path("pw"), "VAULTFILE_PASSWORD_COMMAND": "cat pw", "VAULTFILE_KEYFILE": cli.path("key"),
                       "VAULTFILE_IDENTITY_FILE": cli.path("id"), "VAULTFILE_PASSWORD": "pw"]
        func leaked(_ file: String) throws -> [String] {
            String(decoding: try cli.read(file), as: UTF8.self).split(separator: "\n").map(String.init)
                .filter { line in ["VAULTFILE_PASSWORD", "VAULTFILE_KEYFILE", "VAULTFILE_IDENTITY"].contains { line.hasPrefix($0) } }
        }
        // The password command.
        let command = try cli.run(["list", "--vault", cli.path("t.vault"), "--password-command", "env > command.env; cat pw"], extra: sources)
        #expect(command.status == 0, "\(command.stderr)")
        #expect(try leaked("command.env").isEmpty)
        // The editor.
        try cli.write("editor.sh", Array("#!/bin/sh\nenv > \"\(cli.path("editor.env"))\"\n".utf8), mode: 0o700)
        let edit = try cli.run(["edit", "k", "--allow-disk-temp"], extra: sources.merging(["EDITOR": cli.path("editor.sh"), "VAULTFILE_PATH": cli.path("t.vault")]) { $1 })
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try leaked("editor.env").isEmpty)
        // git, as `git setup` runs it.
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try cli.write("bin/git", Array("#!/bin/sh\nenv >> \"\(cli.path("git.env"))\"\n[ \"$1\" = rev-parse ] && echo \"\(cli.directory.url.path)\"\nexit 0\n".utf8), mode: 0o700)
        let setup = try cli.run(["git", "setup"], extra: sources.merging(["PATH": cli.path("bin") + ":/usr/bin:/bin"]) { $1 })
        #expect(setup.status == 0, "\(setup.stderr)")
        #expect(try leaked("git.env").isEmpty)
        // exec's command.
        let exec = try cli.run(["exec", "--vault", cli.path("t.vault"), "--", "sh", "-c", "env > exec.env"], extra: sources)
        #expect(exec.status == 0, "\(exec.stderr)")
        #expect(try leaked("exec.env").isEmpty)
    }

    // MARK: - exec: variables that run code

    @Test func test_exec_refusesVariablesThatRunCodeUnlessAllowed() throws {
        let cli = try CLI.withEntriesSet(["app/ld/preload": "/nonexistent/evil.so", "app/db/password": "p", "app/git/token": "t"]); defer { cli.directory.remove() }
        let refused = try cli.run(["exec", "--prefix", "app/"] + cli.unlock() + ["--", "sh", "-c", "touch ran"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("'app/ld/preload'") && refused.stderr.contains("LD_PRELOAD") && refused.stderr.contains("--allow-env LD_PRELOAD"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the command ran")
        let allowed = try cli.run(["exec", "--prefix", "app/", "--allow-env", "LD_PRELOAD"] + cli.unlock()
                                  + ["--", "sh", "-c", "printf '%s %s %s' \"$DB_PASSWORD\" \"$GIT_TOKEN\" \"$(env | grep -c '^LD_PRELOAD=/nonexistent/evil.so$')\""])
        #expect(allowed.text == "p t 1", "\(allowed.stderr)")
        for (entry, variable) in [("path", "PATH"), ("home", "HOME"), ("bash/env", "BASH_ENV"), ("ld/library/path", "LD_LIBRARY_PATH"),
                                  ("node/options", "NODE_OPTIONS"), ("git/ssh/command", "GIT_SSH_COMMAND"), ("pythonpath", "PYTHONPATH"),
                                  ("vaultfile/password/command", "VAULTFILE_PASSWORD_COMMAND"), ("git/config/key/0", "GIT_CONFIG_KEY_0")] {
            #expect(try cli.run(["set", "risky/" + entry] + cli.unlock(), stdin: [0x78]).status == 0)
            let result = try cli.run(["exec", "--prefix", "risky/", "--only", "risky/" + entry] + cli.unlock() + ["--", "true"])
            #expect(result.status == 2 && result.stderr.contains(variable), "\(entry): \(result.stderr)")
        }
    }

    // MARK: - Messages

    @Test func test_messages_escapeControlCharactersFromInput() throws {
        let cli = try CLI.withEntriesSet([:]); defer { cli.directory.remove() }
        try cli.write("script", Array("get \"a\u{1B}[31mb\"\n".utf8))
        let batch = try cli.run(["batch", "--script", cli.path("script")] + cli.unlock())
        #expect(batch.status == 1)
        #expect(batch.stderr.contains("a\\x1B[31mb") && !batch.stderr.contains("\u{1B}"), "\(batch.stderr)")
        let dotenv = try cli.run(["import", "--format", "dotenv"] + cli.unlock(), stdin: Array("A\u{07}B=1\n".utf8))
        #expect(dotenv.status == 2)
        #expect(dotenv.stderr.contains("'A\\x07B'") && !dotenv.stderr.contains("\u{07}"), "\(dotenv.stderr)")
        // A newline, a tab, DEL, a C1 control and a right-to-left override inside a name stay inside one line.
        try cli.write("script", Array("get \"x\\ny\\tz\u{7F}\u{9B}\u{202E}w\"\n".utf8))
        let hidden = try cli.run(["batch", "--script", cli.path("script")] + cli.unlock())
        #expect(hidden.stderr.contains("x\\x0Ay\\x09z\\x7F\\u{009B}\\u{202E}w"), "\(hidden.stderr)")
        #expect(hidden.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("vaultfile: ") }, "\(hidden.stderr)")
    }

    // MARK: - Limits and signal dispositions of children

    @Test(.disabled(if: HardeningCLITests.underThreadSanitizer, "ThreadSanitizer's runtime sets its own core-dump limit"),
          .disabled(if: HardeningCLITests.underAddressSanitizer, "AddressSanitizer's runtime sets its own core-dump limit"))
    func test_exec_childGetsTheCallersCoreLimitAndSignalDispositions() throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        // A definite hard limit when the caller may set one, and a soft limit below it.
        let probe = #"echo "$(ulimit -H -c) $(ulimit -S -c)"; grep -E '^Sig(Ign|Blk)' /proc/self/status"#
        let script = """
            if [ "$(ulimit -H -c)" = unlimited ]; then ulimit -H -c 5000; fi
            if [ "$(ulimit -H -c)" -ge 100 ]; then ulimit -S -c 100; fi
            \(probe)
            echo ---
            "$VF" exec --vault t.vault --password-file pw -- sh -c '\(probe.replacingOccurrences(of: "'", with: "'\\''"))'
            """
        let result = try cli.shell(script)
        #expect(result.status == 0, "\(result.stderr)")
        let halves = result.text.components(separatedBy: "---\n")
        try #require(halves.count == 2, "\(result.text)")
        let caller = halves[0].split(separator: "\n"), child = halves[1].split(separator: "\n")
        #expect(child.first == caller.first, "core limits (hard soft): caller \(caller.first ?? "?"), child \(child.first ?? "?")")
        // Signals 1-31 (glibc's posix_spawn leaves its own real-time signals 32 and 33 ignored).
        func classic(_ line: Substring?) -> UInt64? {
            line.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }.map { $0 & 0x7FFF_FFFF }
        }
        for (index, name) in ["SigBlk", "SigIgn"].enumerated() {
            let mine = caller.dropFirst().first { $0.hasPrefix(name) }, theirs = child.dropFirst().first { $0.hasPrefix(name) }
            #expect(classic(mine) != nil && classic(mine) == classic(theirs), "\(name): caller \(mine ?? "?"), child \(theirs ?? "?")")
            if index == 1 { #expect((classic(theirs) ?? 1) & (1 << (SIGXFSZ - 1)) == 0, "SIGXFSZ is ignored in the child") }
        }
    }
}
