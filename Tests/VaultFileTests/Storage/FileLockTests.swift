import Foundation
import TestSupport
import Testing
@testable import VaultFile

/// The sidecar lock file of a vault: what it may be given away to, and what never.
@Suite struct FileLockTests {
    /// The finding: root writing another user's vault gave that user any file hard-linked at
    /// `<vault>.lock` (where the kernel lets users link others' files: fs.protected_hardlinks=0).
    @Test(.enabled(if: getuid() == 0, "needs root to give a file to another user: owner test skipped"))
    func test_init_neverGivesAwayAFileHardLinkedAtTheLockPath() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let secret = directory.path("root-only")
        _ = FileManager.default.createFile(atPath: secret, contents: Data("root-only".utf8), attributes: [.posixPermissions: 0o600])
        #expect(link(secret, directory.path("v.vault.lock")) == 0)
        let lock = try FileLock(path: directory.path("v.vault.lock"), timeout: 1, owner: FileOwner(stat(st_dev: 0, st_ino: 0, st_nlink: 0, st_mode: 0, st_uid: 65534, st_gid: 65534, __pad0: 0, st_rdev: 0, st_size: 0, st_blksize: 0, st_blocks: 0, st_atim: timespec(), st_mtim: timespec(), st_ctim: timespec(), __glibc_reserved: (0, 0, 0))))
        lock.release()
        var info = stat()
        #expect(lstat(secret, &info) == 0 && info.st_uid == 0 && info.st_gid == 0, "the linked file keeps its owner")
    }
}
