import Foundation
import KDF
import SecureMemory
import TestSupport
import Synchronization
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The vault on disk: atomic replacement, locking, modes, symlinks, failure injection.
@Suite struct VaultStoreTests {
    private func makeVault(_ directory: TemporaryDirectory, name: String = "v.vault") throws -> VaultStore {
        let store = VaultStore(path: directory.path(name))
        try store.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        return store
    }

    private func mode(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! Int
    }

    private func listing(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    // MARK: - create

    @Test func test_create_writesA0600VaultThatOpens() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        #expect(try mode(store.path) == 0o600)
        #expect(try store.open(password: password("pw"), limits: testLimits).vault == (try sampleVault()))
        #expect(try listing(directory) == ["v.vault", "v.vault.lock"], "no temporary file is left")
    }

    @Test func test_create_refusesToOverwrite() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let before = try store.read().bytes
        #expect(throws: VaultError.vaultExists(path: store.path)) {
            try store.create(Vault(), password: password("other"), kdf: testKDF)
        }
        #expect(try store.read().bytes == before)
    }

    // MARK: - update

    @Test func test_update_replacesAtomicallyAndKeepsTheMode() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        chmod(store.path, 0o640)
        try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([9], for: "new") }
        #expect(try mode(store.path) == 0o640)
        #expect(try store.open(password: password("pw"), limits: testLimits).vault.entry("new")?.value == [9])
        #expect(try listing(directory) == ["v.vault", "v.vault.lock"])
    }

    @Test func test_update_unchangedVaultIsNotRewritten() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let before = try store.read()
        try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue(Array("hunter2".utf8), for: "db/password") }
        let after = try store.read()
        #expect(after.bytes == before.bytes)
        #expect(after.identity == before.identity)
    }

    @Test func test_update_throughASymlinkReplacesTheTarget() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let link = directory.path("link.vault")
        symlink(store.path, link)
        try VaultStore(path: link).update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([7], for: "via-link") }
        var info = stat()
        lstat(link, &info)
        #expect((info.st_mode & S_IFMT) == S_IFLNK, "the link stays a link")
        #expect(try store.open(password: password("pw"), limits: testLimits).vault.entry("via-link")?.value == [7])
    }

    @Test(.enabled(if: getuid() == 0, "needs root to give a file to another user: owner tests skipped"))
    func test_update_asRootKeepsTheOwnerOfTheVaultAndGivesItTheLock() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        #expect(chown(store.path, 65534, 65534) == 0)
        #expect(unlink(store.lockPath) == 0)
        try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([5], for: "by-root") }
        for path in [store.path, store.lockPath] {
            var info = stat()
            lstat(path, &info)
            #expect(info.st_uid == 65534 && info.st_gid == 65534, "\(path) keeps the vault owner's")
        }
    }

    @Test(.enabled(if: getuid() == 0, "needs root to give a file to another user: owner tests skipped"))
    func test_update_anOwnerThatCannotBeKeptLeavesTheVaultByteIdentical() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let created = try makeVault(directory)
        #expect(chown(created.path, 65534, 65534) == 0)
        let before = try created.read().bytes
        var system = SystemCalls.live
        system.fchown = { _, _, _ in failing(EPERM) }
        let store = VaultStore(path: created.path, system: system)
        #expect(throws: VaultError.io(operation: "keeping the owner (uid 65534) and group (gid 65534) of", path: created.path, errno: EPERM)) {
            try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "x") }
        }
        #expect(try created.read().bytes == before)
        #expect(try listing(directory) == ["v.vault", "v.vault.lock"])
    }

    @Test func test_update_wrongPasswordLeavesTheFileAlone() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let before = try store.read().bytes
        #expect(throws: VaultError.wrongPassword) {
            try store.update(password: password("bad"), limits: testLimits) { try $0.vault.setValue([1], for: "x") }
        }
        #expect(try store.read().bytes == before)
    }

    @Test func test_update_detectsAWriterThatBypassedTheLock() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        #expect(throws: VaultError.changedOnDisk(path: store.path)) {
            try store.update(password: password("pw"), limits: testLimits) { unlocked in
                // Another process replaces the file without taking the lock.
                let other = try VaultCodec.open(try store.read().bytes, path: store.path, password: password("pw"), limits: testLimits)
                try other.vault.setValue([1], for: "theirs")
                let theirs = try other.seal()
                let temporary = directory.path("other")
                _ = FileManager.default.createFile(atPath: temporary, contents: Data(theirs))
                rename(temporary, store.path)
                try unlocked.vault.setValue([2], for: "ours")
            }
        }
        let vault = try store.open(password: password("pw"), limits: testLimits).vault
        #expect(vault.entry("theirs") != nil, "the other writer's update is not lost")
    }

    @Test func test_update_removesStaleTemporaryFiles() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        _ = FileManager.default.createFile(atPath: directory.path(".v.vault.vaultfile-tmp-deadbeef"), contents: Data([1, 2, 3]))
        try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "x") }
        #expect(try listing(directory) == ["v.vault", "v.vault.lock"])
    }

    // MARK: - withLock

    @Test func test_withLock_timesOutWithBusyNamingTheLockFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let holder = try FileLock(path: store.lockPath, timeout: 0)
        defer { holder.release() }
        let waiting = VaultStore(path: store.path, lockTimeout: 0.2)
        let start = monotonicSeconds()
        // The holder is this process, as /proc/locks lists it (nil where /proc is not mounted).
        let probe = open(store.lockPath, O_RDONLY | O_CLOEXEC)
        defer { close(probe) }
        let expected = FileLock.holder(of: probe)
        #expect(expected?.pid == getpid(), "the kernel names this process as the holder")
        #expect(throws: VaultError.busy(lockPath: store.lockPath, seconds: 0.2, holder: expected)) {
            try waiting.update(password: password("pw"), limits: testLimits) { _ in }
        }
        #expect(monotonicSeconds() - start >= 0.2)
        #expect(VaultError.busy(lockPath: "x", seconds: 1).category == .busy)
    }

    @Test func test_withLock_tellsAWaitingWriterOnceWhoHoldsTheLock() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let holder = try FileLock(path: store.lockPath, timeout: 0)
        defer { holder.release() }
        var waiting = VaultStore(path: store.path, lockTimeout: 1.5)
        let told = Mutex<[LockHolder?]>([])
        waiting.onLockWait = { holder in told.withLock { $0.append(holder) } }
        #expect(throws: VaultError.self) { try waiting.update(password: password("pw"), limits: testLimits) { _ in } }
        let seen = told.withLock { $0 }
        #expect(seen.count == 1, "told once, after a second: \(seen)")
        #expect(seen.first??.pid == getpid() && seen.first??.description.contains("pid \(getpid())") == true, "\(seen)")
        // A lock that is free at once tells nothing.
        holder.release()
        told.withLock { $0 = [] }
        try waiting.update(password: password("pw"), limits: testLimits) { _ in }
        #expect(told.withLock { $0.isEmpty })
    }

    // MARK: - Failure injection: the original stays byte-identical, no temporary file is left

    enum Step: String, CaseIterable { case open, fchmod, shortWriteThenENOSPC, writeEIO, enospcInThirdChunk, fsync, close, rename }

    @Test(arguments: Step.allCases)
    func test_replace_failureLeavesTheVaultByteIdentical(step: Step) throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let created = try makeVault(directory)
        let before = try created.read().bytes
        var system = SystemCalls.live
        switch step {
        case .open: system.open = { path, flags, mode in path.contains("vaultfile-tmp") ? failing(EACCES) : Glibc.open(path, flags, mode) }
        case .fchmod: system.fchmod = { _, _ in failing(EPERM) }
        case .shortWriteThenENOSPC:
            let calls = Counter()
            system.write = { fd, buffer, count in calls.next() == 0 ? Glibc.write(fd, buffer, min(count, 100)) : failing(ENOSPC) }
        case .writeEIO: system.write = { _, _, _ in failing(EIO) }
        case .enospcInThirdChunk:
            // The header and two chunks reach the file; the seal goes on encrypting but writes nothing more.
            let calls = Counter()
            system.write = { fd, buffer, count in calls.next() < 3 ? Glibc.write(fd, buffer, count) : failing(ENOSPC) }
        case .fsync: system.fsync = { _ in failing(EIO) }
        case .close: system.close = { fd in Glibc.close(fd); return failing(EIO) }
        case .rename: system.rename = { _, _ in failing(EXDEV) }
        }
        let store = VaultStore(path: created.path, system: system)
        do {
            // 300,000 bytes: five payload chunks, so a write can fail after the first ones landed.
            try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue(randomBytes(count: 300_000), for: "x") }
            Issue.record("the injected \(step) failure was not reported")
        } catch let error as VaultError {
            guard case .io(_, _, let code) = error else { Issue.record("unexpected \(error)"); return }
            #expect(code != 0)
            #expect(!error.description.isEmpty)
        }
        #expect(try created.read().bytes == before)
        #expect(try listing(directory) == ["v.vault", "v.vault.lock"])
    }

    @Test func test_replace_directorySyncFailureIsReported() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let created = try makeVault(directory)
        var system = SystemCalls.live
        system.fsync = { fd in
            var info = stat()
            fstat(fd, &info)
            return (info.st_mode & S_IFMT) == S_IFDIR ? failing(EIO) : Glibc.fsync(fd)
        }
        let store = VaultStore(path: created.path, system: system)
        #expect(throws: VaultError.notDurable(path: created.path, errno: EIO)) {
            try store.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "x") }
        }
    }

    // MARK: - read

    // The hint ('vaultfile init') is the CLI's: ErrorReportTests.test_init_missingVaultSaysHowToCreateOne.
    @Test func test_read_missingVaultIsVaultMissing() {
        let error = VaultError.vaultMissing(path: "/nowhere/x.vault")
        #expect(throws: error) { try VaultStore(path: "/nowhere/x.vault").read() }
        #expect(error.description == "no vault at /nowhere/x.vault")
    }

    // MARK: - open (the payload read chunk by chunk)

    @Test func test_open_streamsAMultiChunkPayloadLikeTheBytesPath() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        var vault = try sampleVault()
        var generator = SplitMix(seed: 3)
        try vault.setValue((0..<200_000).map { _ in generator.nextByte() }, for: "bulk", now: 1)
        let store = VaultStore(path: directory.path("v.vault"))
        try store.create(vault, password: password("pw"), kdf: testKDF)
        let streamed = try store.open(password: password("pw"), limits: testLimits)
        let fromBytes = try VaultCodec.open(try store.read().bytes, path: store.path, password: password("pw"), limits: testLimits)
        #expect(streamed.vault == vault && fromBytes.vault == vault)
    }

    @Test func test_fileCiphertext_aFileCutShortWhileReadIsChangedOnDisk() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let store = try makeVault(directory)
        let file = try OpenedFile(path: store.path)
        var payload = FileCiphertext(file, from: 100)
        #expect(truncate(store.path, off_t(file.size - 10)) == 0)
        #expect(throws: VaultError.changedOnDisk(path: store.path)) {
            try payload.withBytes(0..<payload.count) { _ in Issue.record("the body ran on a short read") }
        }
    }
}
