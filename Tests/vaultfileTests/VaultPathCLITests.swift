import Foundation
import TestSupport
import Testing

/// What stands at the vault path: nothing (the hint gives the command that creates it), a named
/// pipe, a device or a folder; each is refused at once, saying what it is.
@Suite struct VaultPathCLITests {
    /// Runs `vaultfile arguments…`, killing it after `seconds`: a command that hangs fails the
    /// test instead of hanging the suite.
    private func runBounded(_ cli: CLI, _ arguments: [String], seconds: Double = 5) throws -> CLI.Result {
        let running = try cli.start(arguments)
        let deadline = Date().addingTimeInterval(seconds)
        while running.isRunning && Date() < deadline { usleep(20_000) }
        if running.isRunning {
            kill(running.pid, SIGKILL)
            Issue.record("vaultfile \(arguments.joined(separator: " ")) was still running after \(seconds) s")
        }
        return running.finish()
    }

    // MARK: - No vault

    @Test func test_vaultMissing_hintGivesACommandThatCreatesIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        let missing = try cli.run(["get", "x", "--vault", "sub/dir/t.vault", "--password-file", "pw"])
        #expect(missing.status == 2 && missing.stderr.contains("no vault at sub/dir/t.vault"))
        let hint = try #require(missing.stderr.split(separator: "\n").first { $0.hasPrefix("vaultfile: hint: ") })
        let command = try #require(hint.range(of: "made): ").map { hint[$0.upperBound...] }, "\(hint)")
        #expect(command == "vaultfile init --vault sub/dir/t.vault", "\(hint)")
        let words = command.split(separator: " ").dropFirst().map(String.init)
        let created = try cli.run(words + ["--password-file", "pw"] + CLI.fastKDF)
        #expect(created.status == 0, "the hint's command works: \(created.stderr)")
    }

    // MARK: - A vault path that is not a regular file

    /// The finding: opening a named pipe waited forever for a writer, and `set` waited holding the lock.
    @Test func test_open_aNamedPipeAtTheVaultPathIsRefusedAtOnce() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        #expect(mkfifo(cli.path("t.vault"), 0o600) == 0)
        let vault = ["--vault", cli.path("t.vault")], unlock = cli.unlock()
        for arguments in [["get", "x"] + unlock, ["set", "x"] + unlock, ["list"] + unlock, ["info"] + vault] {
            let result = try runBounded(cli, arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("\(cli.path("t.vault")) is a named pipe, not a vault file"), "\(result.stderr)")
        }
    }

    @Test func test_open_saysWhatKindOfFileTheVaultPathIs() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        try FileManager.default.createDirectory(atPath: cli.path("folder.vault"), withIntermediateDirectories: false)
        for (path, kind) in [("/dev/null", "a character device"), (cli.path("folder.vault"), "a directory")] {
            let result = try runBounded(cli, ["get", "x", "--vault", path, "--password-file", cli.path("pw")])
            #expect(result.status == 2)
            #expect(result.stderr.contains("\(path) is \(kind), not a vault file"), "\(result.stderr)")
        }
    }
}
