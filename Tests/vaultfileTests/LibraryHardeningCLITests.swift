import Foundation
import TestSupport
import Testing
import VaultModel

/// Findings of the adversarial review of the release binary (issue 25), as a user meets them.
@Suite struct LibraryHardeningCLITests {
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

    // MARK: - Memory

    /// The finding: `info` on a 1,056 MiB file (the largest a vault may be) with a valid header
    /// read the file whole, 1.1 GB. It reads the header alone: 256 MiB of address space suffice.
    @Test(.disabled(if: HardeningCLITests.underAddressSanitizer, "AddressSanitizer's shadow memory does not fit in 256 MiB of address space"),
          .disabled(if: HardeningCLITests.underThreadSanitizer, "ThreadSanitizer's shadow memory does not fit in 256 MiB of address space"))
    func test_info_readsOnlyTheHeaderOfTheLargestVault() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        let bytes = try cli.read("t.vault")
        let headerLength = Int(bytes[10]) | Int(bytes[11]) << 8
        try cli.write("large.vault", Array(bytes.prefix(headerLength)))
        #expect(truncate(cli.path("large.vault"), off_t(VaultLimits.maxFileLength)) == 0)
        let result = try cli.shell("ulimit -v 262144 && \"$VF\" info --vault large.vault")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text.contains("size:        \(VaultLimits.maxFileLength) bytes"), "\(result.text)")
    }

    // MARK: - git textconv

    /// The finding: equal values had equal fingerprints, so a pasted diff showed a reused secret.
    @Test func test_textconv_equalValuesOfTwoEntriesGetDifferentFingerprints() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.initVault()
        for name in ["db/password", "other/pw"] {
            #expect(try cli.run(["set", name] + cli.unlock(), stdin: Array("same-secret".utf8)).status == 0)
        }
        let listing = try cli.run(["git", "textconv", cli.path("t.vault"), "--password-file", cli.path("pw")])
        #expect(listing.status == 0, "\(listing.stderr)")
        let prints = listing.text.split(separator: "\n").filter { $0.contains("value  fingerprint:") }
        #expect(prints.count == 2 && Set(prints).count == 2, "\(listing.text)")
        #expect(!listing.text.contains("same-secret"))
    }

    // MARK: - git merge

    /// The finding: a branch that ran `passwd --kdf pbkdf2 --kdf-iterations 1 --allow-weak-kdf`
    /// passed its KDF on through a merge, silently.
    @Test func test_gitMerge_stopsOnTheirLowerKDFUnlessAllowed() throws {
        var cli = try CLI(); defer { cli.directory.remove() }
        // The three copies stand for git's branches: no rollback check, as inside a work tree.
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "off"
        try cli.initVault("base.vault", kdf: CLI.eightMiBKDF)
        let base = try cli.read("base.vault")
        try cli.write("ours.vault", base)
        try cli.write("theirs.vault", base)
        #expect(try cli.run(["set", "ours-only"] + cli.unlock("ours.vault"), stdin: [1]).status == 0)
        let weaker = try cli.run(["passwd", "--new-password-file", cli.path("pw"), "--kdf", "pbkdf2", "--kdf-iterations", "1", "--allow-weak-kdf"]
                                 + cli.unlock("theirs.vault"))
        #expect(weaker.status == 0, "\(weaker.stderr)")
        let ours = try cli.read("ours.vault")
        let merge = ["git", "merge", cli.path("base.vault"), cli.path("ours.vault"), cli.path("theirs.vault"), "--password-file", cli.path("pw")]

        let refused = try cli.run(merge)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("lowers the key derivation from Argon2id 8 MiB, t=1, p=1 to PBKDF2-SHA256 1 iterations"), "\(refused.stderr)")
        #expect(refused.stderr.contains("VAULTFILE_MERGE_ALLOW_WEAK=1"))
        #expect(try cli.read("ours.vault") == ours, "ours is left byte for byte")

        let allowed = try cli.run(merge, extra: ["VAULTFILE_MERGE_ALLOW_WEAK": "1"])
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(try cli.run(["info", "--vault", cli.path("ours.vault")]).text.contains("PBKDF2-SHA256 1 iterations"))
        #expect(try cli.run(["get", "ours-only"] + cli.unlock("ours.vault")).stdout == [1])
    }
}
