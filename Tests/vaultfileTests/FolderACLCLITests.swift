import Foundation
import TestSupport
import Testing
import CPlatform
@testable import vaultfile

/// A folder another user may write through its POSIX access ACL (issue 39, item 6, re-test): its
/// group bits show only the ACL's mask, so the mode alone let `--out` and `edit` use it.
@Suite struct FolderACLCLITests {
    private static let isRoot = getuid() == 0
    private static let everyone = UInt32.max

    /// The bytes of an access ACL as the kernel stores it: version 2, then (tag, perm, id) entries.
    private static func acl(_ entries: [(UInt16, UInt16, UInt32)], version: UInt32 = 2) -> [UInt8] {
        func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        return bytes(version) + entries.flatMap { bytes($0.0) + bytes($0.1) + bytes($0.2) }
    }

    /// rwx for the owner and the owning group, `named` (a named user or group entry), a mask
    /// `mask`, nothing for others.
    private static func folderACL(named: (UInt16, UInt16, UInt32), mask: UInt16 = 7) -> [UInt8] {
        acl([(1, 7, everyone), named, (4, 7, everyone), (16, mask, everyone), (32, 0, everyone)])
    }

    @Test func test_otherWriters_namesAWriterTheMaskLetsThrough() throws {
        let me = geteuid()
        func judged(_ bytes: [UInt8]) throws -> String? {
            FolderACL.otherWriters(in: try #require(FolderACL.parse(bytes)), me: me, hasOtherMembers: { $0 != 4242 })
        }
        #expect(try judged(Self.folderACL(named: (2, 7, me + 1)))?.contains("has an access ACL that lets user") == true)
        #expect(try judged(Self.folderACL(named: (2, 2, me + 1))) != nil, "write alone is enough")
        #expect(try judged(Self.folderACL(named: (8, 7, 4243)))?.contains("which has other members") == true)
        // Not a write by someone else: this user, read only, a mask without write, a group of one's own.
        #expect(try judged(Self.folderACL(named: (2, 7, me))) == nil)
        #expect(try judged(Self.folderACL(named: (2, 5, me + 1))) == nil)
        #expect(try judged(Self.folderACL(named: (2, 7, me + 1), mask: 5)) == nil)
        #expect(try judged(Self.folderACL(named: (8, 7, 4242))) == nil)
        // Malformed: another version, a torn entry, an unknown tag, named entries without a mask.
        #expect(FolderACL.parse(Self.acl([(1, 7, Self.everyone)], version: 1)) == nil)
        #expect(FolderACL.parse(Self.acl([(1, 7, Self.everyone)]) + [0]) == nil)
        #expect(try judged(Self.acl([(1, 7, Self.everyone), (64, 7, 1)]))?.contains("cannot read") == true)
        #expect(try judged(Self.acl([(1, 7, Self.everyone), (2, 7, me + 1), (4, 7, Self.everyone), (32, 0, Self.everyone)]))?
            .contains("cannot read") == true)
    }

    /// Before the fix: exit 0, the file written into a folder daemon (uid 1) can write.
    @Test(.enabled(if: Self.isRoot, "needs root to name another user in an ACL: skipped"))
    func test_out_refusesAFolderAnACLLetsAnotherUserWrite() throws {
        let cli = try CLI.withEntriesSet(["a": "1"]); defer { cli.directory.remove() }
        let folder = cli.path("acl")
        #expect(mkdir(folder, 0o770) == 0)
        let bytes = Self.folderACL(named: (2, 7, 1))
        try #require(setxattr(folder, "system.posix_acl_access", bytes, bytes.count, 0) == 0, "setting the ACL: errno \(errno)")
        let refused = try cli.run(["export", "--format", "json", "--out", folder + "/x.json"] + cli.unlock())
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("has an access ACL that lets user daemon (uid 1) write it"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/x.json"))
        // The same folder with a mask that takes write away is fine.
        let masked = Self.folderACL(named: (2, 7, 1), mask: 5)
        #expect(setxattr(folder, "system.posix_acl_access", masked, masked.count, 0) == 0)
        let written = try cli.run(["export", "--format", "json", "--out", folder + "/x.json"] + cli.unlock())
        #expect(written.status == 0, "\(written.stderr)")
    }

    @Test(.enabled(if: Self.isRoot && ChildProcessCLITests.hasTmpfs, "needs root and a tmpfs /dev/shm: skipped"))
    func test_edit_refusesABaseAnACLLetsAnotherUserWrite() throws {
        let cli = try CLI.withEntriesSet(["svc/key": "old"]); defer { cli.directory.remove() }
        var template = Array("/dev/shm/vaultfile-test-XXXXXX".utf8CString)
        let base = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(chmod(base, 0o770) == 0)
        let bytes = Self.folderACL(named: (2, 7, 1))
        try #require(setxattr(base, "system.posix_acl_access", bytes, bytes.count, 0) == 0, "setting the ACL: errno \(errno)")
        try cli.write("editor.sh", Array("#!/bin/sh\necho ran > \"\(cli.path("ran"))\"\nprintf new > \"$1\"\n".utf8), mode: 0o700)
        let result = try cli.run(["edit", "svc/key"] + cli.unlock(), extra: ["EDITOR": cli.path("editor.sh"), "XDG_RUNTIME_DIR": base])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("has an access ACL that lets user daemon (uid 1) write it"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("ran")), "the editor never ran")
    }
}
