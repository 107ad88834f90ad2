import Foundation
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// The atomic writer's parameters: a symbolic link at the destination, an existing file, the owner.
@Suite struct AtomicFileWriterTests {
    /// Root can give a file to another user; the owner tests need it.
    static let isRoot = getuid() == 0

    private func contents(_ path: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map(Array.init)
    }

    private func status(_ path: String) -> stat {
        var info = stat()
        lstat(path, &info)
        return info
    }

    private func listing(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    private func makeFile(_ path: String, _ text: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644])
    }

    // MARK: - write: a symbolic link at the destination

    @Test func test_write_followingTheFinalLinkReplacesTheTargetAndKeepsTheLink() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        makeFile(directory.path("target"), "old")
        symlink(directory.path("target"), directory.path("link"))
        try AtomicFileWriter().write(Array("new".utf8), to: directory.path("link"), finalLink: .follow)
        #expect(contents(directory.path("target")) == Array("new".utf8))
        #expect(status(directory.path("link")).st_mode & S_IFMT == S_IFLNK)
        #expect(status(directory.path("target")).st_mode & 0o777 == 0o600)
    }

    @Test func test_write_replacingTheFinalLinkNeverWritesItsTarget() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        makeFile(directory.path("precious"), "keep me")
        symlink(directory.path("precious"), directory.path("link"))
        try AtomicFileWriter().write(Array("new".utf8), to: directory.path("link"), finalLink: .replace)
        #expect(status(directory.path("link")).st_mode & S_IFMT == S_IFREG, "the link itself is replaced")
        #expect(contents(directory.path("link")) == Array("new".utf8))
        #expect(contents(directory.path("precious")) == Array("keep me".utf8))
    }

    // MARK: - write: an existing file

    @Test(arguments: [AtomicFileWriter.FinalLink.follow, .replace])
    func test_write_withoutReplacingCreatesANewFileButRefusesAnExistingOne(finalLink: AtomicFileWriter.FinalLink) throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let writer = AtomicFileWriter()
        try writer.write([1], to: directory.path("new"), finalLink: finalLink, replacingExisting: false)
        #expect(contents(directory.path("new")) == [1])
        makeFile(directory.path("old"), "old")
        symlink(directory.path("nowhere"), directory.path("dangling"))
        for name in ["new", "old", "dangling"] {
            #expect(throws: VaultError.vaultExists(path: directory.path(name))) {
                try writer.write([2], to: directory.path(name), finalLink: finalLink, replacingExisting: false)
            }
        }
        #expect(contents(directory.path("old")) == Array("old".utf8))
        #expect(try listing(directory) == ["dangling", "new", "old"], "no temporary file is left")
    }

    @Test func test_write_withoutHardLinksStillRefusesAnExistingFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        // FAT on a USB stick: link(2) fails with EPERM.
        var system = SystemCalls.live
        system.link = { _, _ in errno = EPERM; return -1 }
        let writer = AtomicFileWriter(system: system)
        try writer.write([1], to: directory.path("new"), finalLink: .replace, replacingExisting: false)
        #expect(contents(directory.path("new")) == [1])
        #expect(throws: VaultError.vaultExists(path: directory.path("new"))) {
            try writer.write([2], to: directory.path("new"), finalLink: .replace, replacingExisting: false)
        }
        #expect(contents(directory.path("new")) == [1])
        #expect(try listing(directory) == ["new"])
    }

    // MARK: - write: the owner

    @Test(.enabled(if: isRoot, "needs root to give a file to another user: owner tests skipped"))
    func test_write_keepingTheOwnerGivesTheNewFileTheReplacedOne() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        for name in ["kept", "taken"] {
            makeFile(directory.path(name), "old")
            #expect(chown(directory.path(name), 65534, 65534) == 0)
        }
        try AtomicFileWriter().write([1], to: directory.path("kept"), finalLink: .follow, keepingOwner: true)
        try AtomicFileWriter().write([1], to: directory.path("taken"), finalLink: .follow)
        #expect(status(directory.path("kept")).st_uid == 65534 && status(directory.path("kept")).st_gid == 65534)
        #expect(status(directory.path("taken")).st_uid == 0, "without keepingOwner the writer owns the new file")
    }

    @Test(.enabled(if: isRoot, "needs root to give a file to another user: owner tests skipped"))
    func test_write_anOwnerThatCannotBeKeptIsRefusedAndNothingIsWritten() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        makeFile(directory.path("theirs"), "old")
        #expect(chown(directory.path("theirs"), 65534, 65534) == 0)
        var system = SystemCalls.live
        system.fchown = { _, _, _ in errno = EPERM; return -1 }
        #expect(throws: VaultError.io(operation: "keeping the owner (uid 65534) and group (gid 65534) of", path: directory.path("theirs"), errno: EPERM)) {
            try AtomicFileWriter(system: system).write([1], to: directory.path("theirs"), finalLink: .follow, keepingOwner: true)
        }
        #expect(contents(directory.path("theirs")) == Array("old".utf8))
        #expect(status(directory.path("theirs")).st_uid == 65534)
        #expect(try listing(directory) == ["theirs"])
    }

    // MARK: - write(_:in:name:path:): a folder held open

    /// Issue 39, item 6: a write relative to a folder's descriptor lands in that folder even when
    /// the path that led to it now leads elsewhere; a link at the name is replaced, never followed.
    @Test func test_writeInFolder_landsInTheFolderHeldOpenWhateverThePathNowSays() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        #expect(mkdir(directory.path("checked"), 0o700) == 0 && mkdir(directory.path("other"), 0o700) == 0)
        #expect(symlink("checked", directory.path("via")) == 0)
        let folder = open(directory.path("via"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(folder >= 0)
        defer { close(folder) }
        #expect(unlink(directory.path("via")) == 0 && symlink("other", directory.path("via")) == 0)
        makeFile(directory.path("precious"), "keep me")
        #expect(symlink(directory.path("precious"), directory.path("checked/out")) == 0)
        let writer = AtomicFileWriter()
        #expect(throws: VaultError.vaultExists(path: directory.path("via/out"))) {
            try writer.write([1], in: folder, name: "out", path: directory.path("via/out"), replacingExisting: false)
        }
        try writer.write([2], in: folder, name: "out", path: directory.path("via/out"))
        #expect(contents(directory.path("checked/out")) == [2] && status(directory.path("checked/out")).st_mode & S_IFMT == S_IFREG)
        #expect(status(directory.path("checked/out")).st_mode & 0o777 == 0o600)
        #expect(contents(directory.path("precious")) == Array("keep me".utf8), "the link at the name was replaced, not followed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("other")).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path("checked")) == ["out"], "no temporary file is left")
    }

    @Test func test_writeInFolder_aFailedRenameLeavesNothingBehind() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let folder = open(directory.url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(folder) }
        var system = SystemCalls.live
        system.renameat = { _, _, _ in errno = EIO; return -1 }
        #expect(throws: VaultError.io(operation: "renaming the new file over", path: directory.path("out"), errno: EIO)) {
            try AtomicFileWriter(system: system).write([1], in: folder, name: "out", path: directory.path("out"))
        }
        #expect(try listing(directory).isEmpty)
    }
}
