import Foundation
import TestSupport
import Testing

/// `vaultfile edit`: where its private folder may be made. (The folder's life on signals is in
/// ChildProcessCLITests; the editor's round trip in ScriptingCLITests.)
@Suite struct EditCLITests {
    private static let isRoot = getuid() == 0

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_refusesABaseAnotherUserCouldChange() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: base) }
        try cli.write("editor.sh", Array("#!/bin/sh\necho ran > \"\(cli.path("ran"))\"\nprintf new > \"$1\"\n".utf8), mode: 0o700)
        func edit(_ runtime: String) throws -> CLI.Result {
            try cli.run(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": runtime])
        }
        func refused(_ runtime: String, _ says: String, _ folder: String? = nil) throws {
            let result = try edit(runtime)
            #expect(result.status == 2, "\(runtime): \(result.stderr)")
            #expect(result.stderr.contains(folder ?? runtime) && result.stderr.contains(says), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the editor never ran")
            let made = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
            #expect(!made.contains { $0.hasPrefix("vaultfile-edit-") }, "no private folder was made there")
        }
        #expect(chmod(base, 0o777) == 0)
        try refused(base, "writable by every user")
        // A folder of this user's own under a base everyone may change is no safer: the base can be renamed.
        #expect(mkdir(base + "/mine", 0o700) == 0)
        try refused(base + "/mine", "writable by every user", base)
        if Self.isRoot {
            #expect(chmod(base, 0o770) == 0 && chown(base, 0, 65534) == 0)
            try refused(base, "group nogroup")
            #expect(chmod(base, 0o700) == 0 && chown(base, 65534, 65534) == 0)
            try refused(base, "belongs to user nobody")
            #expect(chown(base, 0, 0) == 0)
        }
        // A shared base with the sticky bit, as /dev/shm itself, is fine; the value is edited.
        #expect(chmod(base, 0o1777) == 0)
        let edited = try edit(base)
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
    }

    // MARK: - No lock while the editor runs (issue 47)

    /// An editor script that runs `commands` (shell lines; `$VF` is the binary, `$V` the vault,
    /// `$PW` the password file) while it is open, then writes `text` as the edited value.
    private static func editor(_ cli: CLI, running commands: String, writes text: String) throws {
        let script = "#!/bin/sh\nVF='\(CLI.binary)'; V='\(cli.path("t.vault"))'; PW='\(cli.path("pw"))'\n\(commands)\n"
            + "printf '%s' '\(text)' > \"$1\"\n"
        try cli.write("editor.sh", Array(script.utf8), mode: 0o700)
    }

    /// Runs `edit` with the editor script, its private folder made under a fresh 0700 folder of
    /// /dev/shm, which is checked afterwards: nothing of the edit may be left there, and removed.
    private static func edit(_ cli: CLI, _ arguments: [String] = ["svc/key"]) throws -> CLI.Result {
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let runtime = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        let result = try cli.run(["edit"] + arguments + cli.unlock(), extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": runtime])
        let left = (try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? []
        #expect(!left.contains { $0.hasPrefix("vaultfile-edit-") }, "nothing of the edit is left on the tmpfs: \(left)")
        return result
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_takesNoLockWhileTheEditorRuns() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        // A writer while the editor is open gets the lock at once (it waited 10 s and failed before).
        try Self.editor(cli, running: "printf other | \"$VF\" set svc/other --vault \"$V\" --password-file \"$PW\" --lock-timeout 1 || exit 9",
                        writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
        #expect(try cli.run(["get", "svc/other"] + cli.unlock()).text == "other", "the write made while the editor ran is kept")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_mergesAChangeToAnotherPartMadeMeanwhile() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try Self.editor(cli, running: "printf admin | \"$VF\" set svc/key --field user --vault \"$V\" --password-file \"$PW\" || exit 9",
                        writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
        #expect(try cli.run(["get", "svc/key", "--field", "user"] + cli.unlock()).text == "admin", "the other part's change is kept")
        #expect(try cli.run(["list"] + cli.unlock()).text == "svc/key\n", "no conflict entry")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_takesTheSameChangeMadeMeanwhileOnce() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try Self.editor(cli, running: "printf new | \"$VF\" set svc/key --vault \"$V\" --password-file \"$PW\" || exit 9", writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["list"] + cli.unlock()).text == "svc/key\n")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_storesAConflictingEditAsConflictEditAndExits1() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try Self.editor(cli, running: "printf theirs | \"$VF\" set svc/key --vault \"$V\" --password-file \"$PW\" || exit 9", writes: "mine")
        let result = try Self.edit(cli)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("svc/key.conflict-edit") && result.stderr.contains("while the editor ran"), "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "theirs", "the change made meanwhile stays")
        #expect(try cli.run(["get", "svc/key.conflict-edit"] + cli.unlock()).text == "mine", "the edit is kept beside it")
        // A second conflict never overwrites the first one's parked edit.
        try Self.editor(cli, running: "printf third | \"$VF\" set svc/key --vault \"$V\" --password-file \"$PW\" || exit 9", writes: "mine2")
        #expect(try Self.edit(cli).status == 1)
        #expect(try cli.run(["get", "svc/key.conflict-edit"] + cli.unlock()).text == "mine")
        #expect(try cli.run(["get", "svc/key.conflict-edit-2"] + cli.unlock()).text == "mine2")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_unlocksAgainWhenThePasswordChangedMeanwhile() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try cli.write("pw2", Array("second password".utf8))
        // passwd rotates the file key; the password file then holds the new password, read again on save.
        try Self.editor(cli, running: "\"$VF\" passwd --vault \"$V\" --password-file \"$PW\" --new-password-file '\(cli.path("pw2"))' "
                            + "\(CLI.fastKDF.joined(separator: " ")) || exit 9\ncp '\(cli.path("pw2"))' \"$PW\"", writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_exits3WhenNoSourceOpensTheRotatedVault() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try cli.write("pw2", Array("second password".utf8))
        try Self.editor(cli, running: "\"$VF\" passwd --vault \"$V\" --password-file \"$PW\" --new-password-file '\(cli.path("pw2"))' "
                            + "\(CLI.fastKDF.joined(separator: " ")) || exit 9", writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 3, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key", "--vault", cli.path("t.vault"), "--password-file", cli.path("pw2")]).text == "old")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_ofASignedVaultSignsTheSaveWithTheSlotThatOpenedIt() throws {
        let cli = try CLI(); defer { cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["init"] + cli.unlock() + CLI.fastKDF).status == 0)
        #expect(try cli.run(["set", "svc/key"] + cli.unlock(), stdin: Array("old".utf8)).status == 0)
        try Self.editor(cli, running: "printf other | \"$VF\" set svc/other --vault \"$V\" --password-file \"$PW\" --lock-timeout 1 || exit 9",
                        writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
        #expect(try cli.run(["get", "svc/other"] + cli.unlock()).text == "other")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_withTheAgentsKeyNeedsNoPasswordOnSave() throws {
        let cli = try CLI(); defer { cli.stopAgent(); cli.directory.remove() }
        try cli.write("pw", Array("pw".utf8))
        #expect(try cli.run(["init"] + cli.unlock() + CLI.fastKDF).status == 0)
        #expect(try cli.run(["set", "svc/key"] + cli.unlock(), stdin: Array("old".utf8)).status == 0)
        #expect(try cli.run(["unlock"] + cli.unlock()).status == 0)
        try Self.editor(cli, running: "printf admin | \"$VF\" set svc/key --field user --vault \"$V\" --lock-timeout 1 || exit 9", writes: "new")
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let runtime = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        // No password source at all: the agent's key opens the vault before the editor and again on save.
        let result = try cli.run(["edit", "svc/key", "--vault", cli.path("t.vault")], extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": runtime])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
        #expect(try cli.run(["get", "svc/key", "--field", "user"] + cli.unlock()).text == "admin")
        #expect(try cli.run(["verify"] + cli.unlock()).status == 0)
    }

    // MARK: - The attack review (h-fixatk)

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_wipesAFileTheEditorMadeUnderANameThatIsNotUTF8() throws {
        // A backup named by raw bytes (\377\376) beside the value: removed by its own bytes (it was left on the tmpfs).
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        try Self.editor(cli, running: "cp \"$1\" \"$(dirname \"$1\")/bak$(printf '\\377\\376')\"", writes: "new")
        let result = try Self.edit(cli)  // checks that nothing of the edit is left
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try cli.run(["get", "svc/key"] + cli.unlock()).text == "new")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_sweep_removesALeftoverFolderHoldingANameThatIsNotUTF8() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let runtime = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        // A folder a killed edit left (no lock file, older than an hour), holding a value under a raw name.
        let folder = runtime + "/vaultfile-edit-old123"
        #expect(mkdir(folder, 0o700) == 0)
        let name = Array((folder + "/bak").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), CChar(bitPattern: 0xFE), 0]
        let fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(fd >= 0 && write(fd, "secret", 6) == 6)
        close(fd)
        var times = [timeval(tv_sec: time(nil) - 7_200, tv_usec: 0), timeval(tv_sec: time(nil) - 7_200, tv_usec: 0)]
        #expect(utimes(folder, &times) == 0)
        #expect(try cli.run(["list"] + cli.unlock(), extra: ["XDG_RUNTIME_DIR": runtime]).status == 0)
        #expect(access(folder, F_OK) != 0, "the leftover folder is swept whole")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_conflictOnALongNameKeepsTheEditUnderAShortenedName() throws {
        // 1011 bytes, ending in a 2-byte character: NAME.conflict-edit would pass the 1024-byte limit (exit 64, the edit lost).
        let long = "svc/" + String(repeating: "k", count: 1_005) + "é"
        let cli = try CLI.withEntriesSet([long: "old"]); defer { cli.directory.remove() }
        try Self.editor(cli, running: "printf theirs | \"$VF\" set \"$N\" --vault \"$V\" --password-file \"$PW\" || exit 9", writes: "mine")
        let script = try cli.read("editor.sh")
        try cli.write("editor.sh", Array("#!/bin/sh\nN='\(long)'\n".utf8) + script.dropFirst("#!/bin/sh\n".utf8.count), mode: 0o700)
        let result = try Self.edit(cli, [long])
        #expect(result.status == 1, "\(result.stderr)")
        let names = try cli.run(["list"] + cli.unlock()).text.split(separator: "\n").map(String.init)
        let parked = try #require(names.first { $0.hasSuffix(".conflict-edit") }, "\(names.map(\.utf8.count))")
        #expect(parked.utf8.count <= 1_024 && long.hasPrefix(parked.dropLast(".conflict-edit".count)))
        #expect(try cli.run(["get", parked] + cli.unlock()).text == "mine")
        #expect(try cli.run(["get", long] + cli.unlock()).text == "theirs")
    }

    @Test(.enabled(if: ChildProcessCLITests.hasTmpfs, "/dev/shm is not tmpfs: edit tests skipped"))
    func test_edit_saveRefusedOnAnOlderCopySaysTheEditWasNotSaved() throws {
        var cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        cli.environment["VAULTFILE_ROLLBACK_CHECK"] = "on"
        try cli.write("older.vault", try cli.read("t.vault"))
        #expect(try cli.run(["set", "svc/other"] + cli.unlock(), stdin: Array("x".utf8)).status == 0)
        try Self.editor(cli, running: "cp '\(cli.path("older.vault"))' \"$V\" || exit 9", writes: "new")
        let result = try Self.edit(cli)
        #expect(result.status == 7, "\(result.stderr)")
        #expect(result.stderr.contains("your edit was not saved"), "\(result.stderr)")
    }
}
