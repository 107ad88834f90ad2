import Foundation
import Testing

/// `export --format pass --overwrite` putting the new store in place (attacker review att57: H1,
/// M2, L6): the old store's `.git` and `.extensions` are never lost, whatever the vault's entries
/// are called, a kept item that cannot move aborts the commit, and a signal during the commit
/// waits until the store is whole. gpg is a stand-in that "encrypts" at once.
@Suite struct PassStoreCommitCLITests {
    // MARK: - Helpers

    private static let strace = "/usr/bin/strace"
    private static let hasStrace = FileManager.default.isExecutableFile(atPath: strace)

    /// `cli`'s vault holding `entries`, a gpg stand-in in `bin/`, and a pass store `store` with a
    /// git repository, `.gitattributes`, an extension and one old entry.
    private func storeAndVault(_ entries: [String: String]) throws -> CLI {
        let cli = try CLI.withEntriesSet(entries)
        let manager = FileManager.default
        for folder in ["bin", "store/.git/refs", "store/.extensions", "store/old"] {
            try manager.createDirectory(atPath: cli.path(folder), withIntermediateDirectories: true)
        }
        try cli.write("bin/gpg", Array("#!/bin/sh\ncat > /dev/null\nprintf 'not really encrypted'\n".utf8), mode: 0o700)
        try cli.write("store/.gpg-id", Array("someone@example.invalid\n".utf8))
        try cli.write("store/.git/HEAD", Array("ref: refs/heads/main\n".utf8))
        try cli.write("store/.gitattributes", Array("*.gpg diff=gpg\n".utf8))
        try cli.write("store/.extensions/hello.bash", Array("echo hello\n".utf8))
        try cli.write("store/old/entry.gpg", Array("old".utf8))
        return cli
    }

    private func exportArguments(_ cli: CLI) -> [String] {
        ["export", "--format", "pass", "--out", cli.path("store"), "--gpg-id", "someone@example.invalid", "--overwrite"] + cli.unlock()
    }

    private func environment(_ cli: CLI) -> [String: String] { ["PATH": cli.path("bin") + ":/usr/bin:/bin"] }

    /// Everything under `store`, sorted.
    private func contents(_ cli: CLI) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: cli.path("store"))) ?? []).sorted()
    }

    /// The names beside the store that an export in progress makes.
    private func leftovers(_ cli: CLI) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: cli.directory.url.path)) ?? []).filter { $0.hasPrefix(".store.vaultfile-") }
    }

    // MARK: - Names the store keeps for itself

    @Test func test_exportPass_refusesEntriesUnderTheStoresOwnFolders() throws {
        let cli = try storeAndVault([".git/hooks": "x", ".extensions/foo": "y", "a/.gpg-id/b": "z", "ok": "1"]); defer { cli.directory.remove() }
        let before = contents(cli)
        let result = try cli.run(exportArguments(cli), extra: environment(cli))
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        for name in [".git/hooks", ".extensions/foo", "a/.gpg-id/b"] { #expect(result.stderr.contains("'\(name)'"), "\(result.stderr)") }
        #expect(!result.stderr.contains("'ok'"))
        #expect(contents(cli) == before, "the store changed: \(contents(cli))")
        #expect(leftovers(cli).isEmpty, "\(leftovers(cli))")
        // A dot-name that pass does not use is written as before.
        let fine = try storeAndVault([".git": "top-level file, not a folder", ".hidden/x": "1"]); defer { fine.directory.remove() }
        let written = try fine.run(exportArguments(fine), extra: environment(fine))
        #expect(written.status == 0, "\(written.stderr)")
        #expect(contents(fine).contains(".git.gpg") && contents(fine).contains(".hidden/x.gpg") && contents(fine).contains(".git/HEAD"))
    }

    /// The first rename of the commit (moving `.git`) fails (strace injects EACCES): the export
    /// fails, the old store is whole, the new folder is gone. Before, the failure was dropped and the
    /// old store, `.git` and all, was removed.
    @Test(.enabled(if: hasStrace)) func test_exportPass_aKeptItemThatCannotMoveAbortsTheCommit() throws {
        let cli = try storeAndVault(["a": "1", "b": "2"]); defer { cli.directory.remove() }
        let before = contents(cli)
        let result = try cli.run(["-f", "-o", "/dev/null", "-e", "trace=renameat,renameat2", "-e", "inject=renameat,renameat2:error=EACCES:when=1",
                                  CLI.binary] + exportArguments(cli), extra: environment(cli), executable: Self.strace)
        #expect(result.status != 0, "\(result.stderr)")
        #expect(result.stderr.contains("moving .git into the new store"), "\(result.stderr)")
        #expect(result.stderr.contains("store (the old store is as it was) failed:"), "the note after the path: \(result.stderr)")
        #expect(contents(cli) == before, "the store changed: \(contents(cli))")
        #expect(leftovers(cli).isEmpty, "\(leftovers(cli))")
    }

    /// SIGTERM while the commit's second rename is held up (strace delays it 2 s): the signal waits
    /// until the new store is in place with the old one's `.git`; vaultfile then ends by it.
    /// Before, the store was left without `.git` (moved into the hidden new folder).
    @Test(.enabled(if: hasStrace)) func test_exportPass_signalDuringTheCommitWaitsUntilTheStoreIsWhole() throws {
        let cli = try storeAndVault(["a": "1", "b": "2"]); defer { cli.directory.remove() }
        let script = "echo $$ > '\(cli.path("pid"))'; exec \"$@\""
        let running = try cli.start(["-f", "-o", "/dev/null", "-e", "trace=renameat,renameat2", "-e", "inject=renameat,renameat2:delay_enter=2000000:when=2",
                                     "/bin/sh", "-c", script, "sh", CLI.binary] + exportArguments(cli), extra: environment(cli), executable: Self.strace)
        defer { if running.isRunning { kill(running.pid, SIGKILL); _ = running.finish() } }
        // The first rename moved .git into the new folder: the second is being held up.
        var movedGit: String?
        let deadline = Date().addingTimeInterval(30)
        while running.isRunning && movedGit == nil && Date() < deadline {
            movedGit = leftovers(cli).first { FileManager.default.fileExists(atPath: cli.path($0 + "/.git/HEAD")) }
            usleep(5_000)
        }
        try #require(movedGit != nil, "the commit was never seen")
        let pid = try #require(pid_t(String(decoding: try cli.read("pid"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)
        let end = Date().addingTimeInterval(30)
        while running.isRunning && Date() < end { usleep(10_000) }
        let result = running.finish()
        #expect(result.endedBySignal || result.status == 128 + SIGTERM, "\(result.status): \(result.stderr)")
        #expect(contents(cli) == [".extensions", ".extensions/hello.bash", ".git", ".git/HEAD", ".git/refs", ".gitattributes", ".gpg-id", "a.gpg", "b.gpg"],
                "\(contents(cli))")
        #expect(leftovers(cli).isEmpty, "\(leftovers(cli))")
    }

    // MARK: - The target

    @Test func test_exportPass_aSymlinkedTargetIsNamedAsALink() throws {
        let cli = try storeAndVault(["a": "1"]); defer { cli.directory.remove() }
        #expect(symlink(cli.path("store"), cli.path("link")) == 0)
        let result = try cli.run(["export", "--format", "pass", "--out", cli.path("link"), "--gpg-id", "someone@example.invalid", "--overwrite"] + cli.unlock(),
                                 extra: environment(cli))
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("is a symbolic link"), "\(result.stderr)")
        #expect(contents(cli).contains(".git/HEAD") && contents(cli).contains("old/entry.gpg"))
    }
}
