#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing

/// Issue 39, item 7, through the built binary: a state folder another user owns, or that group or
/// others may write, is not used. Whoever can write it can delete the records that make exit 7,
/// so a write is refused (exit 2, naming the folder, its mode and owner, and the fix) and a
/// command that only reads goes on with a warning, without the rollback check.
@Suite struct StateFolderOwnerCLITests {
    /// `t.vault` at generation 3 and `old.vault`, its copy at generation 2, seen in the test's own
    /// state folder; the weak-KDF warning off.
    private func vaultWithAnOlderCopy() throws -> CLI {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault()
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("one".utf8)).status == 0)
        try cli.write("old.vault", try cli.read("t.vault"))
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("two".utf8)).status == 0)
        return cli
    }

    /// A copy of the test's state folder at `name`, with permission bits `mode`, and `owner` when given.
    private func stateFolder(_ cli: CLI, _ name: String, mode: mode_t, owner: uid_t? = nil) throws -> String {
        let folder = cli.path(name)
        try FileManager.default.copyItem(atPath: cli.stateDirectory, toPath: folder)
        #expect(chmod(folder, mode) == 0)
        if let owner { #expect(chown(folder, owner, gid_t(owner)) == 0) }
        return folder
    }

    private func contents(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return files
    }

    // MARK: - Writes

    @Test func test_writes_withAStateFolderOthersMayWriteExit2AndWriteNothing() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let folder = try stateFolder(cli, "shared", mode: 0o777)
        let (vault, records) = (try cli.read("t.vault"), try contents(folder))
        let writes: [(arguments: [String], stdin: String)] = [
            (["set", "k"] + cli.unlock(), "x"), (["rm", "k"] + cli.unlock(), ""), (["rekey"] + cli.unlock(), ""),
            (["merge", cli.path("t.vault"), cli.path("old.vault"), "--password-file", cli.path("pw")], ""),
        ]
        for write in writes {
            let result = try cli.run(write.arguments, stdin: Array(write.stdin.utf8), extra: ["VAULTFILE_STATE_DIR": folder])
            #expect(result.status == 2, "\(write.arguments): \(result.stderr)")
            #expect(result.stderr.contains("vaultfile: error: the state folder \(folder) has mode 0777, which lets group or others write it "
                                           + "(owned by you, uid \(geteuid())"), "\(result.stderr)")
            #expect(result.stderr.contains("can delete the records that refuse older copies; refusing to write through it, so nothing was written"),
                    "\(result.stderr)")
            #expect(result.stderr.contains("vaultfile: hint: run 'chmod 700 \(folder)'"), "\(result.stderr)")
            #expect(try cli.read("t.vault") == vault && contents(folder) == records, "\(write.arguments)")
        }
        #expect(chmod(folder, 0o700) == 0)
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("x".utf8), extra: ["VAULTFILE_STATE_DIR": folder]).status == 0)
    }

    @Test func test_writes_withAnotherUsersStateFolderExit2NamingItsOwner() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        // Root can give a folder away; anyone else finds one of root's.
        let (folder, owner) = geteuid() == 0 ? (try stateFolder(cli, "theirs", mode: 0o700, owner: 65534), uid_t(65534)) : ("/", uid_t(0))
        let result = try cli.run(["set", "k"] + cli.unlock(), stdin: Array("x".utf8), extra: ["VAULTFILE_STATE_DIR": folder])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("the state folder \(folder) belongs to uid \(owner)") && result.stderr.contains("not to you (uid \(geteuid()))"),
                "\(result.stderr)")
        #expect(result.stderr.contains("hint: set VAULTFILE_STATE_DIR to a folder of your own, or (as its owner) run 'chmod 700 \(folder)'"),
                "\(result.stderr)")
    }

    // MARK: - Reads

    @Test func test_reads_withAnUnsafeStateFolderWarnAndSkipTheRollbackCheck() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let folder = try stateFolder(cli, "shared", mode: 0o777)
        let records = try contents(folder)
        for arguments in [["get", "k"], ["list"]] {
            let read = try cli.run(arguments + cli.unlock("old.vault"), extra: ["VAULTFILE_STATE_DIR": folder])
            #expect(read.status == 0, "\(arguments): \(read.stderr)")
            #expect(read.stderr.contains("vaultfile: warning: the state folder \(folder) has mode 0777")
                    && read.stderr.contains("it is not used: this command goes on without the rollback check, and writes are refused (exit 2) "
                                            + "until you run 'chmod 700 \(folder)'"), "\(read.stderr)")
            #expect(!read.stderr.contains("older copy"), "the check is skipped: \(read.stderr)")
            #expect(read.stderr.split(separator: "\n").count == 1, "one warning: \(read.stderr)")
        }
        #expect(try cli.run(["get", "k"] + cli.unlock("old.vault"), extra: ["VAULTFILE_STATE_DIR": folder]).text == "one")
        #expect(try contents(folder) == records, "nothing recorded there")
        let info = try cli.run(["info", "--vault", cli.path("old.vault")], extra: ["VAULTFILE_STATE_DIR": folder])
        #expect(info.text.contains("seen here:   not checked: the state folder \(folder) has mode 0777"), "\(info.text)")
    }

    /// The rule is the agent folder's for writes: a folder of this user's that group and others
    /// may read (0755, as `mkdir` makes it) is used as before; one vaultfile makes is 0700.
    @Test func test_stateFolder_ofThisUserWithoutGroupOrOtherWriteIsUsed() throws {
        let cli = try vaultWithAnOlderCopy(); defer { cli.directory.remove() }
        let folder = try stateFolder(cli, "readable", mode: 0o755)
        let write = try cli.run(["set", "k"] + cli.unlock("old.vault"), stdin: Array("x".utf8), extra: ["VAULTFILE_STATE_DIR": folder])
        #expect(write.status == 7, "the records are used: \(write.stderr)")
        #expect(try cli.run(["set", "k"] + cli.unlock(), stdin: Array("x".utf8), extra: ["VAULTFILE_STATE_DIR": folder]).status == 0)
        #expect(try cli.recordedGeneration(of: "t.vault", state: folder) == 4)
        #expect(try FileManager.default.attributesOfItem(atPath: cli.stateDirectory)[.posixPermissions] as? Int == 0o700)
    }

    /// A folder missing at the command's check that another user makes 0777 during the password
    /// prompt: the write path checks the folder it writes into, and records nothing there. (Before,
    /// the records went into it without a word.)
    @Test(.enabled(if: geteuid() == 0, "needs root to act as another user: skipped"))
    func test_update_refusesAStateFolderAnotherUserMadeDuringThePrompt() throws {
        var cli = try CLI()
        cli.environment["VAULTFILE_QUIET_WEAK_KDF"] = "1"
        try cli.initVault()
        let shared = cli.path("shared777")
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o777) == 0 && chmod(cli.directory.url.path, 0o755) == 0)
        let folder = shared + "/x"
        let planting = "setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m777 \(folder); cat \(cli.path("pw"))"
        let result = try cli.run(["set", "a", "--vault", cli.path("t.vault"), "--password-command", planting],
                                 stdin: Array("v".utf8), extra: ["VAULTFILE_STATE_DIR": folder])
        var info = stat()
        #expect(stat(folder, &info) == 0 && info.st_uid == 65534, "the other user made the folder: \(result.stderr)")
        #expect(result.stderr.contains("the state folder \(folder) cannot be used: it belongs to uid 65534"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was recorded there"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "no record, no lock file")
    }
}
