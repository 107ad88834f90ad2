import Foundation
import Testing

/// `get --clip` and `totp --clip` through a scripted clipboard (`VAULTFILE_CLIPBOARD_COMMAND`
/// writes stdin to a file and records its argv; `VAULTFILE_CLIPBOARD_PASTE_COMMAND` reads it back).
@Suite struct ClipboardCLITests {
    private static let secret = "hunter2-clipboard-secret"

    private func setUp() throws -> (CLI, [String: String]) {
        let cli = try CLI()
        try cli.initVault()
        let set = try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array(Self.secret.utf8))
        #expect(set.status == 0, "\(set.stderr)")
        let board = cli.path("board"), argv = cli.path("argv")
        let environment = [
            "VAULTFILE_CLIPBOARD_COMMAND": "echo \"$0 $*\" >> '\(argv)'; cat > '\(board).tmp'; mv '\(board).tmp' '\(board)'",
            // Each read back is logged, so a test knows when the clearer has looked.
            "VAULTFILE_CLIPBOARD_PASTE_COMMAND": "echo pasted >> '\(cli.path("pastes"))'; cat '\(board)'",
        ]
        return (cli, environment)
    }

    /// Waits, polling, until `condition` holds or `seconds` pass; returns whether it held. It
    /// sleeps with `Task.sleep`, which leaves the test runner's thread to other tests meanwhile.
    private func waitUntil(_ seconds: Double, _ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try condition()
    }

    // MARK: - get --clip

    @Test func test_get_clipCopiesThroughStdinAndClearsWhenUnchanged() async throws {
        let (cli, environment) = try setUp(); defer { cli.directory.remove() }
        let started = ContinuousClock.now
        let result = try cli.run(["get", "db/password", "--clip", "--clear-after", "2s"] + cli.unlock(), extra: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty, "nothing on stdout")
        #expect(result.stderr.contains("copied; clears in 2 s"))
        #expect(String(decoding: try cli.read("board"), as: UTF8.self) == Self.secret)
        #expect(try await waitUntil(15) { (try? cli.read("board"))?.isEmpty == true }, "cleared after 2 s")
        #expect(ContinuousClock.now - started >= .seconds(2), "not cleared before its time")
        let argv = String(decoding: try cli.read("argv"), as: UTF8.self)
        #expect(!argv.contains(Self.secret), "the secret is never on the helper's argv")
    }

    @Test func test_get_clipLeavesAClipboardChangedMeanwhile() async throws {
        let (cli, environment) = try setUp(); defer { cli.directory.remove() }
        let result = try cli.run(["get", "db/password", "--clip", "--clear-after", "2s"] + cli.unlock(), extra: environment)
        #expect(result.status == 0, "\(result.stderr)")
        try cli.write("board", Array("something else".utf8))
        // Once the clearer has read the clipboard back it decides at once; give it a moment to (not) write.
        #expect(try await waitUntil(15) { FileManager.default.fileExists(atPath: cli.path("pastes")) }, "the clearer looked")
        try await Task.sleep(for: .milliseconds(500))
        #expect(String(decoding: try cli.read("board"), as: UTF8.self) == "something else")
    }

    @Test func test_get_clipZeroNeverClears() throws {
        let (cli, environment) = try setUp(); defer { cli.directory.remove() }
        let result = try cli.run(["get", "db/password", "--clip"] + cli.unlock(), extra: environment.merging(["VAULTFILE_CLIP_TIME": "0"]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("not cleared"))
    }

    @Test func test_get_clipWithoutAToolExitsTwoNamingWhatToInstall() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        _ = try cli.run(["set", "db/password"] + cli.unlock(), stdin: Array(Self.secret.utf8))
        let result = try cli.run(["get", "db/password", "--clip"] + cli.unlock(), extra: ["DISPLAY": ":99", "PATH": cli.path("empty")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("apt install xclip"), "\(result.stderr)")
        #expect(!result.stderr.contains(Self.secret))
    }

    // MARK: - totp --clip

    @Test func test_totp_clipCopiesTheCode() throws {
        let (cli, environment) = try setUp(); defer { cli.directory.remove() }
        _ = try cli.run(["set", "db/password", "--totp"] + cli.unlock(), stdin: Array("otpauth://totp/x?secret=GEZDGNBVGY3TQOJQ&period=3600".utf8))
        let code = try cli.run(["totp", "db/password"] + cli.unlock()).text
        let result = try cli.run(["totp", "db/password", "--clip", "--clear-after", "0"] + cli.unlock(), extra: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(String(decoding: try cli.read("board"), as: UTF8.self) == code)
    }

    // MARK: - Without a display, long clear times, a tool that exits early

    @Test func test_getClip_withoutADisplayNamesWhatIsMissingAndWhatToInstall() throws {
        let cli = try CLI.withVault(["db": "secret-value"]); defer { cli.directory.remove() }
        try FileManager.default.createDirectory(atPath: cli.path("empty"), withIntermediateDirectories: true)
        let result = try cli.run(["get", "db", "--clip"] + cli.unlock(), extra: ["PATH": cli.path("empty")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no display for the clipboard: neither $WAYLAND_DISPLAY nor $DISPLAY is set"), "\(result.stderr)")
        #expect(result.stderr.contains("apt install wl-clipboard") && result.stderr.contains("apt install xclip"))
        #expect(!result.stderr.contains("secret-value"))
    }

    @Test func test_clip_aClearTimePastADayIsRefusedNotATrap() throws {
        let cli = try CLI.withEntriesSet(["k": "v"]); defer { cli.directory.remove() }
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
}
