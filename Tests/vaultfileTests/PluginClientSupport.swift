import Foundation
import Glibc
import TestSupport

// MARK: - The test plugin, age-plugin-vftest

/// A folder of the test with `bin/age-plugin-vftest` (Tests/plugin/age-plugin-vftest.py, a
/// Python age plugin written apart from vaultfile: pure-Python X25519, the standard library only)
/// and the identity it made from a fixed seed. Every run through it is bounded (`runBounded`).
struct PluginHarness {
    /// The plugin's source, beside the tests.
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("plugin/age-plugin-vftest.py").path
    static let python = "/usr/bin/python3"
    static let hasPython = FileManager.default.isExecutableFile(atPath: python)
    static let hasAge = hasPython && FileManager.default.isExecutableFile(atPath: "/usr/bin/age")
    /// The seed of the identity every test uses (the golden fixture's too).
    static let seed = "5f1e0c3a9b7d2468ace013579bdf02468ace13579bdf0246f1e2d3c4b5a69788"

    let cli: CLI
    /// The identity line (`AGE-PLUGIN-VFTEST-1…`) and its recipient (`age1vftest1…`).
    let identity: String, recipient: String

    /// Installs the plugin in `cli`'s folder `bin/` and makes its identity, `id.txt`.
    init(_ cli: CLI, seed: String = PluginHarness.seed) throws {
        self.cli = cli
        try FileManager.default.createDirectory(atPath: cli.path("bin"), withIntermediateDirectories: true)
        let plugin = cli.path("bin/age-plugin-vftest")
        if !FileManager.default.fileExists(atPath: plugin) {
            // Copied by a child, never opened for writing here: no ETXTBSY when it runs (`ExecutableFile`).
            try ExecutableFile.copy(Self.source, to: plugin, mode: 0o755)
        }
        let made = try ChildProcess(executable: plugin, arguments: ["--keygen", seed], environment: ["PATH": "/usr/bin:/bin"],
                                    directory: cli.path(".")).finish()
        let lines = String(decoding: made.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        identity = lines[0]
        recipient = String(lines[1].dropFirst("# public key: ".count))
        try cli.write("id.txt", Array((identity + "\n").utf8))
    }

    /// PATH with the plugin's folder first (absolute).
    var path: String { cli.path("bin") + ":/usr/bin:/bin" }

    /// The environment of a run through the plugin: its PATH, a short deadline, the plugin's mode.
    func environment(mode: String = "normal", timeout: Int = 5, extra: [String: String] = [:]) -> [String: String] {
        ["PATH": path, "VAULTFILE_PLUGIN_TIMEOUT": String(timeout), "VFTEST_MODE": mode, "VFTEST_LOG": cli.path("plugin.log")]
            .merging(extra) { $1 }
    }

    /// What the plugin logged (commands received, its environment's names), and clears it.
    func takeLog() -> String {
        let text = (try? String(contentsOfFile: cli.path("plugin.log"), encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: cli.path("plugin.log"))
        return text
    }

    /// Runs vaultfile and waits at most `seconds`, then kills it: a hung plugin never hangs the suite.
    func runBounded(_ arguments: [String], stdin: [UInt8] = [], extra: [String: String], seconds: Double = 30) throws -> CLI.Result {
        let running = try cli.start(arguments, stdin: stdin, extra: extra)
        let deadline = Date().addingTimeInterval(seconds)
        while running.isRunning && Date() < deadline { usleep(20_000) }
        if running.isRunning { kill(running.pid, SIGKILL) }
        return running.finish()
    }

    /// Runs `tool arguments…` (age) with the plugin's PATH, at most `seconds`.
    func tool(_ tool: String, _ arguments: [String], stdin: [UInt8] = [], seconds: Double = 30) throws -> ChildProcess.Output {
        let child = try ChildProcess(executable: tool, arguments: arguments, environment: ["PATH": path, "VFTEST_LOG": cli.path("plugin.log")],
                                     directory: cli.path("."), stdin: stdin)
        let deadline = Date().addingTimeInterval(seconds)
        while child.isRunning && Date() < deadline { usleep(20_000) }
        if child.isRunning { kill(child.pid, SIGKILL) }
        return child.finish()
    }
}
