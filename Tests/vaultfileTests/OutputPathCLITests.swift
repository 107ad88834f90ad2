import Foundation
import TestSupport
import Testing

/// Every folder on the way of an `--out` file, not only the last (issue 39, item 6): the path is
/// walked one component at a time from a descriptor, and the file is written relative to the
/// folder checked, so a link swapped afterwards cannot redirect it.
@Suite struct OutputPathCLITests {
    private static let isRoot = getuid() == 0

    /// A vault `t.vault` holding `a` = `1`, the template `t.tmpl` that uses it, and a private folder.
    private func prepared() throws -> CLI {
        let cli = try CLI.withEntriesSet(["a": "1"])
        try cli.write("t.tmpl", Array("a={{ vf://a }}\n".utf8))
        #expect(mkdir(cli.path("private"), 0o700) == 0)
        return cli
    }

    /// Runs `verb` (export, inject or keygen) writing to `out`, with `unlock` (default: the password file).
    private func write(_ cli: CLI, _ verb: String, to out: String, unlock: [String]? = nil) throws -> CLI.Result {
        switch verb {
        case "export": return try cli.run(["export", "--format", "json", "--out", out] + (unlock ?? cli.unlock()))
        case "inject": return try cli.run(["inject", "--in", cli.path("t.tmpl"), "--out", out] + (unlock ?? cli.unlock()))
        default: return try cli.run(["keygen", "-o", out])
        }
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    // MARK: - Folders on the way

    /// The review's finding: another user's folder holding a link to a private folder passed,
    /// since only the last folder was checked, following links.
    @Test(.enabled(if: Self.isRoot, "needs root to give a folder to another user: skipped"), arguments: ["export", "inject", "keygen"])
    func test_out_refusesAPathThroughAnotherUsersFolderThatLinksToAPrivateOne(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let theirs = cli.path("theirs")
        #expect(mkdir(theirs, 0o755) == 0 && symlink(cli.path("private"), theirs + "/link") == 0)
        #expect(lchown(theirs + "/link", 65534, 65534) == 0 && chown(theirs, 65534, 65534) == 0)
        let refused = try write(cli, verb, to: theirs + "/link/out")
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("the folder \(theirs) belongs to user nobody") && refused.stderr.contains("symbolic link"), "\(refused.stderr)")
        #expect(!exists(cli.path("private/out")), "nothing lands in the private folder")
        // The same folder with the sticky bit: its owner can still swap the link.
        #expect(chmod(theirs, 0o1777) == 0)
        #expect(try write(cli, verb, to: theirs + "/link/out").status == 2)
        #expect(!exists(cli.path("private/out")))
    }

    @Test(.enabled(if: Self.isRoot, "needs root to give a folder to another user: skipped"), arguments: ["export", "keygen"])
    func test_out_inASharedStickyFolderTakesOnlyThisUsersOrRootsComponents(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let shared = cli.path("shared")
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o1777) == 0)
        #expect(mkdir(shared + "/mine", 0o700) == 0 && mkdir(shared + "/theirs", 0o700) == 0 && chown(shared + "/theirs", 65534, 65534) == 0)
        #expect(symlink(cli.path("private"), shared + "/planted") == 0 && lchown(shared + "/planted", 65534, 65534) == 0)
        #expect(symlink(cli.path("private"), shared + "/own-link") == 0)
        // A file straight in the sticky folder (as /tmp/x.json), and through a folder or link of this user's.
        for (out, fileIn) in [(shared + "/direct", shared), (shared + "/mine/out", shared + "/mine"), (shared + "/own-link/out", cli.path("private"))] {
            let written = try write(cli, verb, to: out)
            #expect(written.status == 0, "\(out): \(written.stderr)")
            #expect(exists(fileIn + "/" + (out as NSString).lastPathComponent), "\(out)")
        }
        // Through a folder or a link that another user owns in it: they could replace it.
        for name in ["theirs", "planted"] {
            let refused = try write(cli, verb, to: shared + "/\(name)/other")
            #expect(refused.status == 2, "\(name): \(refused.stderr)")
            #expect(refused.stderr.contains("\(shared)/\(name) in the shared folder \(shared) belongs to user nobody"), "\(refused.stderr)")
        }
        #expect(!exists(cli.path("private/other")))
    }

    @Test(arguments: ["export", "inject", "keygen"])
    func test_out_inTmpKeepsWorking(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let out = "/tmp/vaultfile-out-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json"
        defer { unlink(out) }
        let written = try write(cli, verb, to: out)
        #expect(written.status == 0, "\(written.stderr)")
        var info = stat()
        #expect(lstat(out, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_uid == geteuid())
    }

    @Test func test_out_aMissingFolderOrAFolderNameIsRefusedBeforeThePassword() throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let asked = ["--vault", cli.path("t.vault"), "--password-command", "touch asked; cat pw"]
        let missing = try write(cli, "export", to: cli.path("nowhere/out.json"), unlock: asked)
        #expect(missing.status == 2 && missing.stderr.contains("opening the folder \(cli.path("nowhere"))"), "\(missing.stderr)")
        let folder = try write(cli, "export", to: cli.path("new") + "/", unlock: asked)
        #expect(folder.status == 2 && folder.stderr.contains("names a folder"), "\(folder.stderr)")
        let existing = try write(cli, "export", to: cli.path("private") + "/", unlock: asked)
        #expect(existing.status == 2 && existing.stderr.contains("is not a regular file"), "as before: \(existing.stderr)")
        #expect(!exists(cli.path("asked")), "the password was not asked for")
    }

    // MARK: - A link swapped after the check

    /// Deterministic: the password command (run after the check, before the write) swaps a link on
    /// the way from one folder of this user's to another. The file lands in the folder checked.
    /// (Before, the write re-resolved the path and followed the swapped link.)
    @Test(arguments: ["export", "inject"])
    func test_out_aLinkSwappedAfterTheCheckDoesNotRedirectTheWrite(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        #expect(mkdir(cli.path("checked"), 0o700) == 0 && mkdir(cli.path("swapped"), 0o700) == 0)
        #expect(symlink("checked", cli.path("via")) == 0)
        let swapping = ["--vault", cli.path("t.vault"), "--password-command", "ln -sfn swapped via; cat pw"]
        let written = try write(cli, verb, to: cli.path("via/out"), unlock: swapping)
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cli.path("via")) == "swapped", "the command swapped the link")
        #expect(exists(cli.path("checked/out")), "the file is in the folder that was checked")
        #expect(!exists(cli.path("swapped/out")), "the swapped link redirected nothing")
    }
}
