import Foundation
import TestSupport
import Testing

/// Files that `export --out` and `inject --out` write, and the owner of a vault that root writes:
/// nothing a command writes may hurt a file it was not meant to replace.
@Suite struct OutputFileCLITests {
    private static let isRoot = getuid() == 0

    /// A vault `t.vault` holding `a` = `1`, and the template `t.tmpl` that uses it.
    private func prepared() throws -> CLI {
        let cli = try CLI()
        try cli.initVault()
        let set = try cli.run(["set", "a"] + cli.unlock(), stdin: Array("1".utf8))
        precondition(set.status == 0, set.stderr)
        try cli.write("t.tmpl", Array("a={{ vf://a }}\n".utf8))
        return cli
    }

    /// Runs `verb` (export or inject) with `--out out` and `extra` options.
    private func write(_ cli: CLI, _ verb: String, to out: String, _ extra: [String] = [], vault: String = "t.vault") throws -> CLI.Result {
        let source = verb == "export" ? ["export", "--format", "json"] : ["inject", "--in", cli.path("t.tmpl")]
        return try cli.run(source + ["--out", out] + extra + cli.unlock(vault))
    }

    private func kind(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : 0
    }

    private func owner(_ path: String) -> (uid: uid_t, gid: gid_t) {
        var info = stat()
        lstat(path, &info)
        return (info.st_uid, info.st_gid)
    }

    // MARK: - A symbolic link at --out

    @Test(arguments: ["export", "inject"])
    func test_out_neverWritesThroughASymbolicLink(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        try cli.write("precious", Array("keep me".utf8))
        symlink(cli.path("precious"), cli.path("backup"))
        let refused = try write(cli, verb, to: cli.path("backup"))
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("symbolic link") && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
        #expect(kind(cli.path("backup")) == S_IFLNK)
        let replaced = try write(cli, verb, to: cli.path("backup"), ["--overwrite"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(kind(cli.path("backup")) == S_IFREG, "the link itself is replaced")
        #expect(try cli.read("precious") == Array("keep me".utf8), "the file the link pointed to is never written")
    }

    @Test(arguments: ["export", "inject"])
    func test_out_refusesAFolderEveryoneMayWriteWithoutTheStickyBit(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let shared = cli.path("shared")
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o777) == 0)
        let refused = try write(cli, verb, to: shared + "/out")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains(shared) && refused.stderr.contains("sticky bit"), "\(refused.stderr)")
        #expect(kind(shared + "/out") == 0, "nothing is written")
        #expect(chmod(shared, 0o1777) == 0)
        #expect(try write(cli, verb, to: shared + "/out").status == 0, "a sticky folder such as /tmp is fine")
    }

    // MARK: - Vaults are never replaced with plain text

    @Test(arguments: ["export", "inject"])
    func test_out_refusesTheVaultBeingReadWhateverTheFlags(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        let before = try cli.read("t.vault")
        let flags = verb == "export" ? ["--overwrite", "--force"] : ["--overwrite"]
        for extra in [[], flags] {
            let refused = try write(cli, verb, to: cli.path("t.vault"), extra)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("the vault being read"), "\(refused.stderr)")
        }
        #expect(try cli.read("t.vault") == before)
    }

    @Test(arguments: ["export", "inject"])
    func test_out_refusesAnyVaultFileWhateverTheFlags(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        try cli.initVault("other.vault")
        let before = try cli.read("other.vault")
        try cli.write("renamed.bin", before)
        for target in ["other.vault", "renamed.bin"] {
            let refused = try write(cli, verb, to: cli.path(target), ["--overwrite"])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("is a vaultfile vault"), "\(refused.stderr)")
            #expect(try cli.read(target) == before)
        }
    }

    @Test(arguments: ["export", "inject"])
    func test_out_refusesAPathGitTreatsAsAVault(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        for folder in ["repo", "repo/.git", "repo/secrets", "repo/config", "repo/plain"] { #expect(mkdir(cli.path(folder), 0o700) == 0) }
        // What 'vaultfile git setup' writes, a filter on one anchored path, and a folder that unsets both.
        try cli.write("repo/.gitattributes", Array("*.vault diff=vaultfile merge=vaultfile\n/config/app.env filter=vaultfile\n".utf8))
        try cli.write("repo/plain/.gitattributes", Array("*.vault -diff -merge\n".utf8))
        for target in ["repo/secrets/new.vault", "repo/config/app.env"] {
            let refused = try write(cli, verb, to: cli.path(target), ["--overwrite"])
            #expect(refused.status == 2, "\(target)")
            #expect(refused.stderr.contains(cli.path("repo/.gitattributes")) && refused.stderr.contains("vaultfile"), "\(refused.stderr)")
            #expect(kind(cli.path(target)) == 0)
        }
        for target in ["repo/secrets/new.json", "repo/app.env", "repo/plain/old.vault"] {
            let written = try write(cli, verb, to: cli.path(target))
            #expect(written.status == 0, "\(target): \(written.stderr)")
        }
    }

    // MARK: - What --overwrite never replaces

    /// The review's findings: as root, `--out /dev/null --overwrite` replaced the device with a file
    /// of secrets, and the vault's own lock file took plain text.
    @Test(arguments: ["export", "inject"])
    func test_out_neverReplacesADeviceAPipeOrTheVaultsLockFile(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        #expect(mkfifo(cli.path("pipe"), 0o600) == 0)
        #expect(symlink("/dev/null", cli.path("null")) == 0)
        for target in ["pipe", "null"] {
            let refused = try write(cli, verb, to: cli.path(target), ["--overwrite"])
            #expect(refused.status == 2 && refused.stderr.contains("not a regular file"), "\(target): \(refused.stderr)")
        }
        var info = stat()
        #expect(lstat(cli.path("pipe"), &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO, "the pipe is still a pipe")
        #expect(lstat(cli.path("null"), &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK, "the link is still a link")
        try cli.write("t.vault.lock", [])
        let lock = try write(cli, verb, to: cli.path("t.vault.lock"), ["--overwrite"])
        #expect(lock.status == 2 && lock.stderr.contains("lock file"), "\(lock.stderr)")
        #expect(try cli.read("t.vault.lock").isEmpty)
    }

    // MARK: - Existing files need --overwrite

    @Test(arguments: ["export", "inject"])
    func test_out_replacesAnExistingFileOnlyWithOverwrite(verb: String) throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        try cli.write("notes.txt", Array("mine".utf8), mode: 0o644)
        let extras: [[String]] = verb == "export" ? [[], ["--force"]] : [[]]
        for extra in extras {
            let refused = try write(cli, verb, to: cli.path("notes.txt"), extra)
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("exists already") && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
            #expect(try cli.read("notes.txt") == Array("mine".utf8))
        }
        let replaced = try write(cli, verb, to: cli.path("notes.txt"), ["--overwrite"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try cli.read("notes.txt") != Array("mine".utf8))
        let mode = try FileManager.default.attributesOfItem(atPath: cli.path("notes.txt"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    // MARK: - Root writing another user's vault

    @Test(.enabled(if: getuid() == 0, "needs root to give a file to another user: owner tests skipped"))
    func test_set_asRootKeepsTheOwnerOfTheVaultAndItsLock() throws {
        let cli = try prepared(); defer { cli.directory.remove() }
        #expect(chown(cli.path("t.vault"), 65534, 65534) == 0)
        #expect(unlink(cli.path("t.vault.lock")) == 0)
        let result = try cli.run(["set", "b"] + cli.unlock(), stdin: [2])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(owner(cli.path("t.vault")) == (65534, 65534), "the vault stays its owner's")
        #expect(owner(cli.path("t.vault.lock")) == (65534, 65534), "a new lock file is the vault owner's")
        // A lock file root made before (owned by root, 0600) is given to the vault's owner too.
        #expect(chown(cli.path("t.vault.lock"), 0, 0) == 0)
        #expect(try cli.run(["set", "c"] + cli.unlock(), stdin: [3]).status == 0)
        #expect(owner(cli.path("t.vault")) == (65534, 65534))
        #expect(owner(cli.path("t.vault.lock")) == (65534, 65534))
    }

    // MARK: - A folder a group or another user may change

    @Test(.enabled(if: Self.isRoot, "needs root to give a folder to another user or group: skipped"), arguments: ["export", "inject"])
    func test_out_refusesAFolderAGroupOrAnotherUserMayChange(verb: String) throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        try cli.write("t.tmpl", Array("a={{ vf://a }}\n".utf8))
        func write(into folder: String) throws -> CLI.Result {
            let source = verb == "export" ? ["export", "--format", "json"] : ["inject", "--in", cli.path("t.tmpl")]
            return try cli.run(source + ["--out", cli.path(folder) + "/out"] + cli.unlock())
        }
        for (folder, owner, group, mode, says) in [("shared", 0, 65534, 0o770, "writable by group nogroup"),
                                                   ("theirs", 65534, 65534, 0o755, "belongs to user nobody")] as [(String, uid_t, gid_t, mode_t, String)] {
            #expect(mkdir(cli.path(folder), 0o700) == 0 && chown(cli.path(folder), owner, group) == 0 && chmod(cli.path(folder), mode) == 0)
            let refused = try write(into: folder)
            #expect(refused.status == 2, "\(folder): \(refused.stderr)")
            #expect(refused.stderr.contains(cli.path(folder)) && refused.stderr.contains(says) && refused.stderr.contains("sticky bit"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path(folder) + "/out"), "nothing is written")
            #expect(chmod(cli.path(folder), mode | S_ISVTX) == 0)
            if owner == 0 {
                #expect(try write(into: folder).status == 0, "\(folder) with the sticky bit is fine")
            } else {
                // Issue 39, item 6: the owner of a folder replaces anything in it, sticky bit or not
                // (and can clear the bit): another user's folder is refused either way.
                let sticky = try write(into: folder)
                #expect(sticky.status == 2 && sticky.stderr.contains(says) && sticky.stderr.contains("sticky bit or not"), "\(sticky.stderr)")
            }
        }
        // The user's own private group (umask 002): group-writable, but nobody else is in the group.
        #expect(mkdir(cli.path("mine"), 0o700) == 0 && chown(cli.path("mine"), 0, 0) == 0 && chmod(cli.path("mine"), 0o775) == 0)
        let mine = try write(into: "mine")
        #expect(mine.status == 0, "\(mine.stderr)")
    }
}
