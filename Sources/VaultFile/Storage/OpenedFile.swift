#if canImport(Glibc)
import Glibc
#endif
import VaultFormat
import VaultModel

// MARK: - Reading the vault file

/// The vault file open for reading: a regular file no larger than the format allows.
///
/// Read whole (`VaultStore.read`) or chunk by chunk as its payload is decrypted
/// (`FileCiphertext`), so that a large vault is not held in memory twice.
final class OpenedFile {
    /// The path it was opened by (errors name it).
    let path: String
    /// Its size in bytes when opened.
    let size: Int
    /// The version of the file that was opened.
    let identity: FileIdentity
    /// The permission bits.
    let mode: mode_t
    private let fd: Int32

    /// Opens `path` (following symlinks); refuses what is not a regular file or is larger than a
    /// vault can be, before a byte is read.
    init(path: String) throws(VaultError) {
        // O_NONBLOCK: opening a named pipe without a writer would otherwise wait forever (while
        // `set` holds the vault's lock). The type is checked on the descriptor, then the flag cleared.
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
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
            throw .notARegularFile(path: path, kind: VaultError.FileKind(mode: info.st_mode))
        }
        guard info.st_size <= VaultLimits.maxFileLength else {
            Glibc.close(fd)
            throw .limitExceeded("\(path) is \(info.st_size) bytes; the largest vault this build reads is \(VaultLimits.maxFileLength) bytes")
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw .io(operation: "opening", path: path, errno: code)
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
    let readsEntriesOnly: Bool

    /// The ciphertext from byte `start` of `file` to its end; `entriesOnly` for a reader that
    /// never looks at history (`VaultStore.readsEntriesOnly`).
    init(_ file: OpenedFile, from start: Int, entriesOnly: Bool = false) {
        self.file = file
        self.start = start
        readsEntriesOnly = entriesOnly
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

// MARK: - File identity and owner

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

/// The owner and group of a file, which a new version of it keeps.
struct FileOwner: Equatable, Sendable {
    let user: uid_t
    let group: gid_t

    /// The owner of the file at `path` itself (a symlink's own owner when `path` is one), or nil when there is none.
    init?(ofFileAt path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The owner that `info` names.
    init(_ info: stat) {
        user = info.st_uid
        group = info.st_gid
    }
}
