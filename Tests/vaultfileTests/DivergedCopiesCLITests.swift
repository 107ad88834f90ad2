#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Issue 39, item 4, through the built binary: the USB stick written on another machine and the
/// home copy, both at one generation with different changes. A write to the stick is refused
/// (exit 7, nothing written) with `vaultfile merge` as the hint, never --allow-rollback; and
/// `merge --both` makes the two copies converge in one command.
@Suite struct DivergedCopiesCLITests {
    /// `home.vault` (seen here at generation 3, with `h`) and `stick.vault`, written at generation
    /// 3 on another machine (its own state folder, `other-machine`) with `s`: two copies of generation 2.
    private func homeAndStick() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault("home.vault")
        try expectRun(cli, ["set", "a"], vault: "home.vault", stdin: "a0")
        try cli.write("stick.vault", try cli.read("home.vault"))
        try expectRun(cli, ["set", "s"], vault: "stick.vault", stdin: "stick", state: "other-machine")
        try expectRun(cli, ["set", "h"], vault: "home.vault", stdin: "home")
        return cli
    }

    @discardableResult
    private func expectRun(_ cli: CLI, _ arguments: [String], vault: String, stdin: String = "", state: String? = nil,
                           status: Int32 = 0) throws -> CLI.Result {
        let extra = state.map { ["VAULTFILE_STATE_DIR": cli.path($0)] } ?? [:]
        let result = try cli.run(arguments + cli.unlock(vault), stdin: Array(stdin.utf8), extra: extra)
        #expect(result.status == status, "\(arguments) on \(vault): \(result.stderr)")
        return result
    }

    private func mergeBoth(_ cli: CLI, extra: [String] = []) throws -> CLI.Result {
        try cli.run(["merge", "--both", cli.path("stick.vault"), cli.path("home.vault"), "--password-file", cli.path("pw")] + extra)
    }

    // MARK: - A write to a diverged copy

    /// The issue's scenario: before, `set` on the stick succeeded with a warning, the home copy was
    /// then called older, and its hint offered --allow-rollback, which would drop the home change.
    @Test func test_set_onADivergedStickExits7WritesNothingAndPointsToMerge() throws {
        let cli = try homeAndStick(); defer { cli.directory.remove() }
        let stick = try cli.read("stick.vault")
        for (arguments, stdin) in [(["set", "x"], "1"), (["rm", "a"], ""), (["passwd", "--new-password-file", cli.path("pw")], "")] {
            let write = try expectRun(cli, arguments, vault: "stick.vault", stdin: stdin, status: 7)
            #expect(write.stderr.contains("vaultfile: error: \(cli.path("stick.vault")) has diverged from the copy seen here on ")
                    && write.stderr.contains("(at \(cli.path("home.vault"))): both are generation 3 with different contents"), "\(write.stderr)")
            #expect(write.stderr.contains("so nothing was written"), "\(write.stderr)")
            #expect(write.stderr.contains("vaultfile: hint: combine the two copies, which writes the result to both: vaultfile merge --both "
                                          + "\(cli.path("stick.vault")) \(cli.path("home.vault"))\n"), "\(write.stderr)")
            #expect(!write.stderr.contains("--allow-rollback"), "the hint never offers to drop a copy's changes: \(write.stderr)")
            #expect(try cli.read("stick.vault") == stick, "\(arguments): nothing written")
        }
        // The home copy is not called older: it reads and writes silently.
        #expect(try expectRun(cli, ["get", "h"], vault: "home.vault").stderr.isEmpty)
        #expect(try expectRun(cli, ["set", "h"], vault: "home.vault", stdin: "home2").stderr.isEmpty)
        let read = try expectRun(cli, ["get", "s"], vault: "stick.vault")
        #expect(read.text == "stick" && read.stderr.contains("is an older copy"), "now one generation behind: \(read.stderr)")
    }

    /// Decided for issue 39: --allow-rollback overrides a divergence on purpose (documented as
    /// dropping the other copy's changes), and the warning still points to merge.
    @Test func test_allowRollback_writesADivergedCopyAndTheOtherBecomesOlder() throws {
        let cli = try homeAndStick(); defer { cli.directory.remove() }
        let forced = try expectRun(cli, ["set", "x", "--allow-rollback"], vault: "stick.vault", stdin: "1")
        #expect(forced.stderr.contains("has diverged") && forced.stderr.contains("combine them with: vaultfile merge --both "), "\(forced.stderr)")
        #expect(try cli.generation(of: "stick.vault") == 4 && cli.recordedGeneration(of: "home.vault") == 4)
        let home = try expectRun(cli, ["set", "y"], vault: "home.vault", stdin: "1", status: 7)
        #expect(home.stderr.contains("is an older copy"), "\(home.stderr)")
    }

    // MARK: - merge --both

    @Test func test_mergeBoth_leavesTheStickAndTheHomeCopyByteIdenticalAndRecordsOnce() throws {
        let cli = try homeAndStick(); defer { cli.directory.remove() }
        let merge = try mergeBoth(cli)
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stderr.contains("merged \(cli.path("home.vault")) into \(cli.path("stick.vault")) (generation 4); both now hold the result"),
                "\(merge.stderr)")
        #expect(try cli.read("stick.vault") == cli.read("home.vault"), "byte-identical")
        #expect(try cli.generation(of: "home.vault") == 4 && cli.recordedGeneration(of: "home.vault") == 4)
        let records = try FileManager.default.contentsOfDirectory(atPath: cli.stateDirectory).filter { $0.hasSuffix(".generation") }
        #expect(records.count == 1)
        let record = String(decoding: try cli.read("state/" + records[0]), as: UTF8.self)
        #expect(record.hasSuffix("path \(cli.path("stick.vault"))\n"), "recorded once, for OURS: \(record)")
        for vault in ["stick.vault", "home.vault"] {
            for (name, value) in [("a", "a0"), ("s", "stick"), ("h", "home")] {
                let read = try expectRun(cli, ["get", name], vault: vault)
                #expect(read.text == value && read.stderr.isEmpty, "\(vault) \(name): \(read.stderr)")
            }
        }
        // The other machine takes the merged stick as newer, silently.
        #expect(try expectRun(cli, ["get", "h"], vault: "stick.vault", state: "other-machine").stderr.isEmpty)
        #expect(try cli.run(["merge", "--help"]).text.contains("--both"))
    }

    /// Each copy is written under its own lock: while another process holds the home copy's, the
    /// merge waits, then gives up (exit 5) with both copies as they were.
    @Test func test_mergeBoth_waitsForTheOtherCopysLockAndWritesNothingWhenItStaysTaken() throws {
        let cli = try homeAndStick(); defer { cli.directory.remove() }
        let (stick, home) = (try cli.read("stick.vault"), try cli.read("home.vault"))
        let lock = open(cli.path("home.vault.lock"), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
        let busy = try mergeBoth(cli, extra: ["--lock-timeout", "0.3"])
        #expect(busy.status == 5 && busy.stderr.contains("home.vault.lock"), "\(busy.stderr)")
        #expect(try cli.read("stick.vault") == stick && cli.read("home.vault") == home)
        close(lock)
        #expect(try mergeBoth(cli).status == 0)
    }
}
