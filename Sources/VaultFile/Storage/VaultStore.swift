#if canImport(Glibc)
import Glibc
#endif
import KDF
import SecureMemory

// MARK: - A vault file on disk

/// Reads, locks and atomically replaces one vault file.
///
/// Writes go to a temporary file in the same directory (exclusive create,
/// mode 0600, then the vault's own mode), which is written in full, synced,
/// checked against the vault on disk, renamed over it, and followed by a
/// sync of the directory. On any failure the vault is left byte-identical
/// and the temporary file is removed. A symlinked vault path replaces the
/// link's target. Never Foundation's `.atomic` writes (see swift-notes).
public struct VaultStore: Sendable {
    /// The path as the user gave it.
    public let path: String
    /// How long to wait for the lock, in seconds.
    public var lockTimeout: Double
    /// The system calls used for writing (replaced in tests).
    public var system: SystemCalls

    /// A store for the vault at `path`.
    public init(path: String, lockTimeout: Double = 10, system: SystemCalls = .live) {
        self.path = path
        self.lockTimeout = lockTimeout
        self.system = system
    }

    /// The file a write replaces: the symlink's target when `path` is a symlink.
    public var targetPath: String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The sidecar lock file held across read-modify-write: `<vault>.lock`.
    public var lockPath: String { targetPath + ".lock" }

    // MARK: Reading

    /// The bytes of the vault and the identity of the file they came from.
    public struct Snapshot: Sendable {
        /// Every byte of the file.
        public let bytes: [UInt8]
        /// Device, inode, size and modification time when read.
        let identity: FileIdentity
        /// The file's permission bits.
        let mode: mode_t
    }

    /// Reads the whole vault file, refusing files larger than the format allows.
    public func read() throws(VaultError) -> Snapshot {
        let file = try OpenedFile(path: path)
        return Snapshot(bytes: try file.read(file.size, at: 0), identity: file.identity, mode: file.mode)
    }

    /// Whether a file exists at `path` (following symlinks).
    public var exists: Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    // MARK: Writing

    /// Writes `bytes` as a new vault; never replaces an existing file.
    ///
    /// The temporary file is hard-linked into place, which fails if the name
    /// exists, so two `init`s cannot both succeed.
    public func create(_ bytes: [UInt8]) throws(VaultError) {
        try create { output throws(VaultError) in try output.write(bytes) }
    }

    /// Creates the vault from what `contents` writes, as `create(_:)` does.
    func create(_ contents: (any SealedOutput) throws(VaultError) -> Void) throws(VaultError) {
        let lock = try FileLock(path: lockPath, timeout: lockTimeout)
        defer { lock.release() }
        if exists { throw .vaultExists(path: path) }
        let place = placement()
        let temporary = try writeTemporary(mode: 0o600, in: place, contents)
        defer { _ = system.unlink(temporary) }
        if system.link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST { throw .vaultExists(path: path) }
            throw .io(operation: "creating", path: path, errno: code)
        }
        try syncDirectory(place)
    }

    /// Replaces the vault with `bytes` if it is still the file `snapshot` was read from.
    ///
    /// Call while holding the lock (see `withLock`).
    public func replace(_ bytes: [UInt8], expecting snapshot: Snapshot) throws(VaultError) {
        try replace(expecting: snapshot.identity, mode: snapshot.mode) { output throws(VaultError) in try output.write(bytes) }
    }

    /// Replaces the vault with what `contents` writes, with permission bits `mode`, if it is
    /// still the file `identity` names.
    func replace(
        expecting identity: FileIdentity, mode: mode_t, _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) {
        let place = placement()
        removeStaleTemporaries(place)
        let temporary = try writeTemporary(mode: mode, in: place, contents)
        var info = stat()
        guard stat(place.target, &info) == 0, FileIdentity(info) == identity else {
            _ = system.unlink(temporary)
            throw .changedOnDisk(path: path)
        }
        guard system.rename(temporary, place.target) == 0 else {
            let code = errno
            _ = system.unlink(temporary)
            throw .io(operation: "renaming the new vault over", path: place.target, errno: code)
        }
        try syncDirectory(place)
    }

    /// Writes `bytes` to `path` atomically with `mode` (default 0600), replacing any file there.
    ///
    /// For files that are not vaults (`export --out`, `inject --out`): the same temp file,
    /// fsync, rename and directory sync, without the lock or the identity check.
    public func writeAtomically(_ bytes: [UInt8], mode: mode_t = 0o600) throws(VaultError) {
        try writeAtomically(mode: mode) { output throws(VaultError) in try output.write(bytes) }
    }

    /// Writes what `contents` writes to `path` atomically, as `writeAtomically(_:mode:)` does.
    func writeAtomically(mode: mode_t, _ contents: (any SealedOutput) throws(VaultError) -> Void) throws(VaultError) {
        let place = placement()
        let temporary = try writeTemporary(mode: mode, in: place, contents)
        guard system.rename(temporary, place.target) == 0 else {
            let code = errno
            _ = system.unlink(temporary)
            throw .io(operation: "renaming the new file over", path: place.target, errno: code)
        }
        try syncDirectory(place)
    }

    /// Runs `body` while holding the vault's lock, waiting up to `lockTimeout` seconds for it.
    public func withLock<R>(_ body: () throws -> R) throws -> R {
        let lock = try FileLock(path: lockPath, timeout: lockTimeout)
        defer { lock.release() }
        return try body()
    }

    // MARK: Private

    /// Where one write happens: the file replaced, its folder, and the prefix of temporary files.
    /// Resolved once per write, so every step of it works on the same file even if a symlink changes.
    private struct Placement {
        let target: String
        let directory: String
        let temporaryPrefix: String
    }

    private func placement() -> Placement {
        let target = targetPath
        let slash = target.lastIndex(of: "/")
        let directory = slash.map { $0 == target.startIndex ? "/" : String(target[..<$0]) } ?? "."
        let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
        return Placement(target: target, directory: directory, temporaryPrefix: ".\(name).vaultfile-tmp-")
    }

    /// Creates a temporary file next to the vault, has `contents` write it, and syncs it; returns its path.
    private func writeTemporary(
        mode: mode_t, in place: Placement, _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) -> String {
        let suffix = randomBytes(count: 8).map { String($0, radix: 16) }.joined()
        let temporary = place.directory + "/" + place.temporaryPrefix + suffix
        let fd = system.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "creating a temporary file in", path: place.directory, errno: errno) }
        func discard(_ error: VaultError) -> VaultError {
            _ = system.close(fd)
            _ = system.unlink(temporary)
            return error
        }
        guard system.fchmod(fd, mode) == 0 else { throw discard(.io(operation: "setting the mode of", path: temporary, errno: errno)) }
        do throws(VaultError) {
            try contents(TemporaryFile(fd: fd, path: temporary, system: system))
        } catch {
            throw discard(error)
        }
        guard system.fsync(fd) == 0 else { throw discard(.io(operation: "syncing", path: temporary, errno: errno)) }
        guard system.close(fd) == 0 else {
            let code = errno
            _ = system.unlink(temporary)
            throw .io(operation: "closing", path: temporary, errno: code)
        }
        return temporary
    }

    private func syncDirectory(_ place: Placement) throws(VaultError) {
        let fd = system.open(place.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw .notDurable(path: path, errno: errno) }
        defer { _ = system.close(fd) }
        guard system.fsync(fd) == 0 else { throw .notDurable(path: path, errno: errno) }
    }

    /// Removes temporary files left by a crashed writer. Called under the lock, so no live writer owns them.
    private func removeStaleTemporaries(_ place: Placement) {
        guard let handle = opendir(place.directory) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(place.temporaryPrefix) { _ = Glibc.unlink(place.directory + "/" + name) }
        }
    }
}

// MARK: - Writing the temporary file

/// The temporary file of an atomic write, written as the bytes are produced.
private final class TemporaryFile: SealedOutput {
    private let fd: Int32
    private let path: String
    private let system: SystemCalls

    init(fd: Int32, path: String, system: SystemCalls) {
        self.fd = fd
        self.path = path
        self.system = system
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        var written = 0
        while written < bytes.count {
            let count = system.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "writing", path: path, errno: errno)
            }
            // A regular file that takes no bytes and reports no error: treat as an I/O error, never loop.
            if count == 0 { throw .io(operation: "writing", path: path, errno: EIO) }
            written += count
        }
    }
}

// MARK: - Reading the vault file

/// The vault file open for reading: a regular file no larger than the format allows.
///
/// Read whole (`VaultStore.read`) or chunk by chunk as its payload is decrypted
/// (`FileCiphertext`), so that a large vault is not held in memory twice.
final class OpenedFile {
    let path: String
    let size: Int
    let identity: FileIdentity
    /// The permission bits.
    let mode: mode_t
    private let fd: Int32

    init(path: String) throws(VaultError) {
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .vaultMissing(path: path) }
            throw .io(operation: "opening", path: path, errno: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .io(operation: "reading the status of", path: path, errno: code)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            throw .io(operation: "reading", path: path, errno: EISDIR)
        }
        guard info.st_size <= VaultLimits.maxFileLength else {
            Glibc.close(fd)
            throw .limitExceeded("\(path) is \(info.st_size) bytes; the largest vault this build reads is \(VaultLimits.maxFileLength) bytes")
        }
        self.path = path
        size = Int(info.st_size)
        identity = FileIdentity(info)
        mode = info.st_mode & 0o7777
    }

    deinit { Glibc.close(fd) }

    /// Fills `buffer` from byte `offset` of the file; returns how many bytes were read (fewer only at the end of the file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(VaultError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = pread(fd, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "reading", path: path, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Reads exactly `count` bytes from `offset`; a file that ended early was changed while being read.
    func read(_ count: Int, at offset: Int) throws(VaultError) -> [UInt8] {
        var failure: VaultError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Not zero-filled first: every byte kept is one read from the file (a 100 MiB vault saves a pass).
            do throws(VaultError) { initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset) } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        guard bytes.count == count else { throw .changedOnDisk(path: path) }
        return bytes
    }
}

/// A payload read from the vault file one chunk at a time, into one reused buffer.
struct FileCiphertext: CiphertextSource {
    private let file: OpenedFile
    private let start: Int
    let count: Int
    private var buffer: [UInt8]

    /// The ciphertext from byte `start` of `file` to its end.
    init(_ file: OpenedFile, from start: Int) {
        self.file = file
        self.start = start
        count = file.size - start
        buffer = [UInt8](repeating: 0, count: min(count, Payload.chunkLength + Payload.chunkOverhead))
    }

    mutating func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError) {
        let file = file, offset = start + range.lowerBound
        var failure: VaultError?
        buffer.withUnsafeMutableBytes { buffer in
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<range.count])
            do throws(VaultError) {
                guard try file.read(into: chunk, at: offset) == range.count else { throw .changedOnDisk(path: file.path) }
                body(UnsafeRawBufferPointer(chunk))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}

// MARK: - File identity

/// What identifies one version of a file: device, inode, size and modification time.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}

// MARK: - The lock

/// An exclusive `flock(2)` on a sidecar file, held until `release()`.
///
/// The lock is on a separate file because a rename swaps the vault's inode.
/// The descriptor is owned here for the lock's whole life (swift-notes: a
/// temporary FileHandle released it early).
final class FileLock {
    private var fd: Int32

    /// Waits up to `timeout` seconds for the lock, polling; throws `busy` if it stays taken.
    init(path: String, timeout: Double) throws(VaultError) {
        fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "opening the lock file", path: path, errno: errno) }
        let deadline = monotonicSeconds() + max(timeout, 0)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                Glibc.close(fd)
                throw .io(operation: "locking", path: path, errno: code)
            }
            guard monotonicSeconds() < deadline else {
                Glibc.close(fd)
                throw .busy(lockPath: path, seconds: timeout)
            }
            usleep(10_000)
        }
    }

    /// Releases the lock (closing the descriptor drops it).
    func release() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    deinit { release() }
}
