import Foundation
import TestSupport
import Testing

/// A signal while `export --out` writes (issue 45's attacker review): the temporary file beside the
/// target (plain text for json) or the half-written pass store is removed, the target is not made,
/// and vaultfile exits with 128 + the signal, as `edit` does. Every wait is bounded.
@Suite struct ExportSignalCLITests {
    // MARK: - Helpers

    /// The names in the test's folder that a write in progress leaves beside `target`.
    private func leftovers(_ cli: CLI, of target: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path)) ?? [])
            .filter { $0.hasPrefix(".\(target).vaultfile-") }.sorted()
    }

    /// Whether process `pid` is stopped (state T in /proc/PID/stat).
    private func isStopped(_ pid: pid_t) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return false }
        return text[text.index(after: close)...].split(separator: " ").first == "T"
    }

    /// Waits at most 30 s for `running` to end; kills it and returns nil when it does not.
    private func finish(_ running: CLI.Running) -> CLI.Result? {
        let deadline = Date().addingTimeInterval(30)
        while running.isRunning && Date() < deadline { usleep(10_000) }
        guard !running.isRunning else { kill(running.pid, SIGKILL); _ = running.finish(); return nil }
        return running.finish()
    }

    /// Catches `running` in the middle of its write: as soon as a temporary file of `target` shows,
    /// the process is stopped (SIGSTOP) and the file looked for again, so the signal is known to
    /// arrive while it exists; a process stopped just after its rename is let go and watched again.
    /// Returns the temporary file's name, or nil when the export ended first.
    private func stopMidWrite(_ running: CLI.Running, _ cli: CLI, target: String) -> String? {
        let deadline = Date().addingTimeInterval(60)
        while running.isRunning && Date() < deadline {
            if !leftovers(cli, of: target).isEmpty {
                kill(running.pid, SIGSTOP)
                while running.isRunning && !isStopped(running.pid) { usleep(1_000) }
                if let temporary = leftovers(cli, of: target).first { return temporary }
                kill(running.pid, SIGCONT)
            }
            usleep(500)
        }
        return nil
    }

    /// A vault holding one 32 MiB binary value: long enough a write to be caught in.
    private func largeVault() throws -> CLI {
        let cli = try CLI.withEntriesSet(["small": "s"])
        var generator = SystemRandomNumberGenerator()
        try cli.write("big", (0..<(32 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } })
        let set = try cli.run(["set", "big", "--value-file", cli.path("big")] + cli.unlock())
        precondition(set.status == 0, set.stderr)
        return cli
    }

    // MARK: - Files written beside the target

    @Test(arguments: [("json", SIGTERM), ("json", SIGINT), ("kdbx", SIGHUP), ("kdbx", SIGTERM)])
    func test_export_signalMidWriteRemovesTheTemporaryFileAndExits128PlusTheSignal(format: String, signal: Int32) throws {
        let cli = try largeVault(); defer { cli.directory.remove() }
        try cli.write("fpw", Array("kp-pw".utf8))
        let kdbx = format == "kdbx" ? ["--new-password-file", cli.path("fpw")] + ExternalTools.KDBXExportCLITests.tiny : []
        // A test runner kept off the CPU for the whole write sees the export end first: it tries again (three times in all).
        var caught: (running: CLI.Running, temporary: String)?
        for _ in 0..<3 where caught == nil {
            try? FileManager.default.removeItem(atPath: cli.path("out"))
            let running = try cli.start(["export", "--format", format, "--out", cli.path("out")] + kdbx + cli.unlock())
            if let temporary = stopMidWrite(running, cli, target: "out") { caught = (running, temporary) } else { _ = finish(running) }
        }
        let (running, temporary) = try #require(caught, "three exports ended before their temporary file was seen")
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        #expect(temporary.hasPrefix(".out.vaultfile-tmp-"))
        kill(running.pid, signal)
        kill(running.pid, SIGCONT)
        let result = try #require(finish(running), "export did not end after signal \(signal)")
        #expect(!result.endedBySignal && result.status == 128 + signal, "\(result.status): \(result.stderr)")
        #expect(leftovers(cli, of: "out").isEmpty, "left behind: \(leftovers(cli, of: "out"))")
        #expect(!FileManager.default.fileExists(atPath: cli.path("out")), "a half-written export took the target's name")
        // The next export is whole.
        let again = try cli.run(["export", "--format", format, "--out", cli.path("out")] + kdbx + cli.unlock())
        #expect(again.status == 0, "\(again.stderr)")
    }

    /// A signal outside any write keeps its default action: vaultfile ends by the signal itself.
    @Test func test_export_signalBeforeTheWriteEndsTheProcessByTheSignal() throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        let result = try #require(try signalWhileWaitingForThePassword(cli, SIGTERM))
        #expect(result.endedBySignal && result.status == SIGTERM, "\(result.status): \(result.stderr)")
        #expect(leftovers(cli, of: "out").isEmpty && !FileManager.default.fileExists(atPath: cli.path("out")))
    }

    /// A crash signal takes its default action: the Swift runtime's backtracer (debug builds) does
    /// not print registers and the memory they point at (att57, M1).
    @Test(arguments: [SIGSEGV, SIGBUS, SIGQUIT])
    func test_process_aCrashSignalPrintsNoBacktraceOrMemory(signal: Int32) throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        let result = try #require(try signalWhileWaitingForThePassword(cli, signal))
        #expect(result.endedBySignal && result.status == signal, "\(result.status): \(result.stderr)")
        #expect(!result.stderr.contains("Backtracing") && !result.stderr.contains("Registers"), "\(result.stderr)")
    }

    /// Sends `signal` to an export waiting in the read of its new password (a FIFO the test holds
    /// open and never writes), before any write; returns how it ended (nil: it never opened the FIFO).
    private func signalWhileWaitingForThePassword(_ cli: CLI, _ signal: Int32) throws -> CLI.Result? {
        // The new password is read from a FIFO the test holds open and never writes: the export waits
        // in its read, before any write.
        #expect(mkfifo(cli.path("fifo"), 0o600) == 0)
        let writer = open(cli.path("fifo"), O_RDWR | O_CLOEXEC)
        defer { close(writer) }
        let running = try cli.start(["export", "--format", "kdbx", "--out", cli.path("out"), "--new-password-file", cli.path("fifo")]
                                    + ExternalTools.KDBXExportCLITests.tiny + cli.unlock())
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        // Waits (at most 20 s) until vaultfile has the FIFO open.
        func readsTheFIFO() -> Bool {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(running.pid)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(running.pid)/fd/\($0)")) == cli.path("fifo") }
        }
        let deadline = Date().addingTimeInterval(20)
        while running.isRunning && !readsTheFIFO() && Date() < deadline { usleep(10_000) }
        guard running.isRunning && readsTheFIFO() else { return nil }
        kill(running.pid, signal)
        return finish(running)
    }

    // MARK: - The pass store written beside its folder

    /// A gpg stand-in (found first on PATH) that encrypts the first entry at once and hangs on the
    /// second, so the export is caught with the store half written beside its target; the hanging
    /// gpg is ended with it. SIGQUIT too (Ctrl-\\): in debug builds the Swift runtime's backtracer
    /// held it, printed register memory and let the export go on (att57, M1).
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP, SIGQUIT])
    func test_exportPass_signalWhileGpgRunsRemovesTheHalfWrittenStore(signal: Int32) throws {
        let cli = try CLI.withEntriesSet(["a": "1", "b": "2", "c": "3"]); defer { cli.directory.remove() }
        let (running, sleeper) = try #require(try passExportCaughtAtTheSecondGpg(cli), "the second gpg never started")
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        defer { if isLive(sleeper) { kill(sleeper, SIGKILL) } }
        let folder = try #require(leftovers(cli, of: "store").first, "no store folder beside the target")
        let written = try FileManager.default.subpathsOfDirectory(atPath: cli.path(folder))
        #expect(written == ["a.gpg"], "the first entry is written: \(written)")
        kill(running.pid, signal)
        let result = try #require(finish(running), "export did not end after signal \(signal)")
        #expect(!result.endedBySignal && result.status == 128 + signal, "\(result.status): \(result.stderr)")
        #expect(!result.stderr.contains("Backtracing") && !result.stderr.contains("Registers"), "\(result.stderr)")
        #expect(leftovers(cli, of: "store").isEmpty, "left behind: \(leftovers(cli, of: "store"))")
        #expect(!FileManager.default.fileExists(atPath: cli.path("store")))
        // The gpg that was running got SIGTERM from vaultfile on its way out.
        let gone = Date().addingTimeInterval(10)
        while isLive(sleeper), Date() < gone { usleep(10_000) }
        #expect(!isLive(sleeper), "gpg left running")
    }

    /// An entry nested 70 folders deep: the handler's removal is linear (it retried three times at
    /// every level: 3^depth calls, with the signals blocked, att57 M6) and goes 128 levels down, so
    /// the export ends at once and nothing is left.
    @Test func test_exportPass_signalWithADeepEntryEndsAtOnceAndRemovesIt() throws {
        let deep = Array(repeating: "d", count: 70).joined(separator: "/") + "/leaf"
        let cli = try CLI.withEntriesSet([deep: "D", "z": "Z"]); defer { cli.directory.remove() }
        let (running, sleeper) = try #require(try passExportCaughtAtTheSecondGpg(cli), "the second gpg never started")
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        defer { if isLive(sleeper) { kill(sleeper, SIGKILL) } }
        let folder = try #require(leftovers(cli, of: "store").first, "no store folder beside the target")
        #expect(FileManager.default.fileExists(atPath: cli.path(folder + "/" + deep + ".gpg")))
        let start = Date()
        kill(running.pid, SIGTERM)
        let result = try #require(finish(running), "export did not end within 30 s of SIGTERM")
        #expect(result.status == 128 + SIGTERM && Date().timeIntervalSince(start) < 10, "\(result.status): \(result.stderr)")
        #expect(leftovers(cli, of: "store").isEmpty, "left behind: \(leftovers(cli, of: "store"))")
    }

    /// Starts `export --format pass --out store` of `cli`'s vault with a gpg stand-in that encrypts
    /// the first entry and then hangs (a `sleep`); returns once the second gpg runs, with its id (nil, the export ended, when it never does).
    private func passExportCaughtAtTheSecondGpg(_ cli: CLI) throws -> (CLI.Running, pid_t)? {
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        try cli.write("bin/gpg", Array("""
            #!/bin/sh
            cat > /dev/null
            if [ -e "\(cli.path("gpg-first"))" ]; then
                echo $$ > "\(cli.path("gpg-second.new"))" && mv "\(cli.path("gpg-second.new"))" "\(cli.path("gpg-second"))"
                exec sleep 30 </dev/null >/dev/null 2>&1
            fi
            : > "\(cli.path("gpg-first"))"
            printf 'not really encrypted'

            """.utf8), mode: 0o700)
        let running = try cli.start(["export", "--format", "pass", "--out", cli.path("store"), "--gpg-id", "someone@example.invalid"] + cli.unlock(),
                                    extra: ["PATH": cli.path("bin") + ":/usr/bin:/bin"])
        var sleeper: pid_t?
        let deadline = Date().addingTimeInterval(20)
        while running.isRunning && sleeper == nil && Date() < deadline {
            sleeper = (try? cli.read("gpg-second")).flatMap { pid_t(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
            usleep(10_000)
        }
        guard let sleeper else {
            if running.isRunning { kill(running.pid, SIGKILL) }
            _ = running.finish()
            return nil
        }
        return (running, sleeper)
    }

    /// Whether `pid` runs (the gpg stand-in, or the sleep it became): not gone, not a zombie.
    private func isLive(_ pid: pid_t) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return false }
        let name = text[text.index(after: text.firstIndex(of: "(")!)..<close]
        return (name == "gpg" || name == "sleep") && text[text.index(after: close)...].split(separator: " ").first != "Z"
    }
}
