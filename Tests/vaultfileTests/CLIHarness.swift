import Foundation
import KDF
import SecureMemory
import TestSupport
import VaultFile

/// Runs the built `vaultfile` binary as a subprocess, as a user's shell would.
struct CLI {
    /// What one run produced.
    struct Result {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
        /// Whether a signal ended it (`status` is then the signal's number).
        var endedBySignal = false
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The binary under test: `$VAULTFILE_TEST_BINARY` when set (`make test` points it at the
    /// release build: a debug build of swift-argument-parser validates every option group on each
    /// run, about 70 ms of a debug run's 80), else the binary next to the test bundle (`swift build`
    /// puts both in the same folder).
    static let binary: String = {
        if let chosen = ProcessInfo.processInfo.environment["VAULTFILE_TEST_BINARY"], !chosen.isEmpty {
            precondition(FileManager.default.isExecutableFile(atPath: chosen), "VAULTFILE_TEST_BINARY=\(chosen) is not an executable file")
            return chosen
        }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vaultfile")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
        return ProjectPaths.root.appendingPathComponent(".build/debug/vaultfile").path
    }()

    /// The test's private folder: HOME and the vaults live here.
    let directory: TemporaryDirectory
    /// Extra environment for every run.
    var environment: [String: String] = [:]

    init() throws { directory = try TemporaryDirectory() }

    /// A path inside the test's folder.
    func path(_ name: String) -> String { directory.path(name) }

    /// The state folder of every run (VAULTFILE_STATE_DIR): inside the test's folder, never the user's.
    var stateDirectory: String { path("state") }

    /// The sanitizers' settings of this run (`make check-sanitizers` sets ASAN_OPTIONS=detect_leaks=0),
    /// passed on to every child: without them a sanitized binary runs LeakSanitizer at exit and
    /// turns an error's exit status into 1 over memory the exiting process still held.
    static let sanitizerOptions: [String: String] = ProcessInfo.processInfo.environment.filter {
        ["ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"].contains($0.key)
    }

    /// Runs `vaultfile arguments…` with `stdin` piped in and waits; the environment is clean but for `extra`.
    @discardableResult
    func run(_ arguments: [String], stdin: [UInt8] = [], extra: [String: String] = [:], executable: String? = nil) throws -> Result {
        try start(arguments, stdin: stdin, extra: extra, executable: executable).finish()
    }

    /// Runs a shell command line with `$VF` set to the binary (for pipes and descriptors).
    @discardableResult
    func shell(_ script: String, extra: [String: String] = [:]) throws -> Result {
        try run(["-c", script], extra: extra.merging(["VF": Self.binary]) { $1 }, executable: "/bin/sh")
    }

    /// Writes a file in the test's folder; one with an execute bit in `mode` (a program the test
    /// runs) through `ExecutableFile`, so that running it never fails with ETXTBSY.
    func write(_ name: String, _ bytes: [UInt8], mode: Int = 0o600) throws {
        if mode & 0o111 != 0 { return try ExecutableFile.write(bytes, to: path(name), mode: mode_t(mode)) }
        _ = FileManager.default.createFile(atPath: path(name), contents: Data(bytes), attributes: [.posixPermissions: mode])
    }

    /// Reads a file in the test's folder.
    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    /// Creates `name` with a fast (weak) KDF, or `kdf`, and the password in `pw`.
    ///
    /// Made in-process with the library call `init` makes (`VaultStore.create`): a test's setup
    /// needs no run of the binary. `init` itself runs through the binary in CLITests' test_init_…
    func initVault(_ name: String = "t.vault", password: String = "pw", kdf: KDFParameters = CLI.testKDF) throws {
        try write("pw", Array(password.utf8))
        try VaultStore(path: path(name)).create(password: SecureBytes(copying: Array(password.utf8)), kdf: kdf)
    }

    /// Sets each entry in the vault `name` in-process, one locked update and seal per entry as one
    /// `set` makes each: setup of a test's vault, with the generation a run of `set` per entry leaves.
    func setEntries(_ entries: [String: String], in name: String = "t.vault", password: String = "pw") throws {
        for (entry, value) in entries {
            try VaultStore(path: path(name)).update(password: SecureBytes(copying: Array(password.utf8)), limits: .defaults) { unlocked in
                try unlocked.vault.setValue(Array(value.utf8), for: entry)
            }
        }
    }

    /// The KDF of `initVault`: Argon2id's least memory (8 KiB), 1 pass, below the floor on purpose,
    /// as `fastKDF` asks `init` for it. Every later run of the binary on the vault derives its key.
    static let testKDF = KDFParameters.argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))

    /// 8 MiB, 1 pass: for tests that read the KDF's settings back or set a memory cap under them.
    static let eightMiBKDF = KDFParameters.argon2id(.init(memoryKiB: 8 * 1024, iterations: 1, parallelism: 1))

    /// Fast KDF options for `init` through the binary: `testKDF`, below the floor on purpose.
    static let fastKDF = ["--kdf-memory", "8K", "--kdf-iterations", "1", "--kdf-parallelism", "1", "--allow-weak-kdf"]

    /// `--vault <name> --password-file pw`.
    func unlock(_ name: String = "t.vault") -> [String] { ["--vault", path(name), "--password-file", path("pw")] }

    /// The agent's socket and runtime folder of this test alone, so that the suite's runs, tests run
    /// in parallel and a developer's own agent never meet on one socket; and its own configuration
    /// folder (XDG_CONFIG_HOME), so that a developer's default identity never reaches a test (a test
    /// of the default `~/.config` sets it to "", which counts as unset).
    var agentEnvironment: [String: String] {
        ["VAULTFILE_AGENT_SOCK": path("agent.sock"), "XDG_RUNTIME_DIR": directory.url.path, "XDG_CONFIG_HOME": configDirectory]
    }

    /// XDG_CONFIG_HOME of every run: `config` in the test's folder (the default identity is `config/vaultfile/identity.txt`).
    var configDirectory: String { path("config") }
}


// MARK: - A terminal session

extension CLI {
    /// Whether util-linux `script` is here to run a pseudo-terminal (tests that need one are skipped when not).
    static let hasScript = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

    /// Runs `vaultfile arguments…` on a pseudo-terminal (through util-linux `script`), answering
    /// prompts as a person would: wait until `prompt` text appears, then type `line` and Enter.
    func interactive(_ arguments: [String], answers: [(prompt: String, line: String)], stdin extraInput: String = "") throws -> (status: Int32, screen: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([Self.binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process.arguments = ["-q", "-e", "-c", command, "/dev/null"]
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.url.path, "TERM": "dumb", "VAULTFILE_STATE_DIR": stateDirectory,
                   "VAULTFILE_QUIET_WEAK_PASSWORD": "1"].merging(agentEnvironment) { $1 }
        env.merge(environment) { $1 }
        process.environment = env
        process.currentDirectoryURL = directory.url
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var screen = ""
        let reader = output.fileHandleForReading
        for answer in answers {
            let deadline = Date().addingTimeInterval(20)
            while !screen.contains(answer.prompt) && Date() < deadline {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                screen += String(decoding: chunk, as: UTF8.self)
            }
            // The prompt is written before echo is turned off; give the terminal a moment to settle.
            usleep(200_000)
            try input.fileHandleForWriting.write(contentsOf: Data((answer.line + "\n").utf8))
            screen = screen.replacingOccurrences(of: answer.prompt, with: "[answered] ")
        }
        try input.fileHandleForWriting.close()
        screen += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, screen)
    }
}

// MARK: - Processes left running

extension CLI {
    /// A `vaultfile` process started in the background (a `ChildProcess`: stdin fed and both
    /// outputs drained on its own thread, so large values cannot deadlock the pipes).
    final class Running: Sendable {
        private let child: ChildProcess

        init(child: ChildProcess) { self.child = child }

        /// The process id.
        var pid: Int32 { child.pid }

        /// Whether it has not ended yet.
        var isRunning: Bool { child.isRunning }

        /// Waits for the process with `Task.sleep` (leaving the test runner's thread to other tests
        /// meanwhile), then returns what it produced. Call once, instead of `finish`.
        func ended() async throws -> Result {
            while child.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            return finish()
        }

        /// Waits for the process and returns what it produced. Call once.
        func finish() -> Result {
            let output = child.finish()
            var bySignal = false
            if case .signal = output.ending { bySignal = true }
            return Result(status: output.status, stdout: output.stdout, stderr: String(decoding: output.stderr, as: UTF8.self), endedBySignal: bySignal)
        }
    }

    /// Starts `vaultfile arguments…` (or `executable`) without waiting for it.
    func start(_ arguments: [String], stdin: [UInt8] = [], extra: [String: String] = [:], executable: String? = nil) throws -> Running {
        _ = Self.ignoreSIGPIPEOnce
        // VAULTFILE_QUIET_WEAK_PASSWORD=1: the tests' passwords ("pw") are weak on purpose; the tests of the
        // warning itself set it to "" (AuditCLITests).
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.url.path, "LANG": "C.UTF-8", "VF": Self.binary, "VAULTFILE_STATE_DIR": stateDirectory,
                   "VAULTFILE_QUIET_WEAK_PASSWORD": "1"].merging(agentEnvironment) { $1 }
        env.merge(Self.sanitizerOptions) { $1 }
        env.merge(environment) { $1 }
        env.merge(extra) { $1 }
        return Running(child: try ChildProcess(executable: executable ?? Self.binary, arguments: arguments, environment: env,
                                               directory: directory.url.path, stdin: stdin))
    }

    /// A child that exits before reading all of stdin must fail the write, not kill the test runner.
    private static let ignoreSIGPIPEOnce: Void = { signal(SIGPIPE, SIG_IGN); return () }()
}
