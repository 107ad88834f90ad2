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
}
