#if canImport(Glibc)
import Glibc
#endif

// MARK: - The system-call seam of the storage layer

/// The system calls the storage layer makes, as replaceable functions.
///
/// `live` calls Glibc directly. Tests replace single calls to inject
/// failures (ENOSPC from `write`, EIO from `fsync`, a failing `rename` or `fchown`)
/// without a real full disk. Every function returns what the system call
/// returns and leaves `errno` set on failure.
struct SystemCalls: Sendable {
    /// `open(2)` with flags and mode.
    var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32
    /// `write(2)`: may write fewer bytes than asked.
    var write: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    /// `fsync(2)`.
    var fsync: @Sendable (_ fd: Int32) -> Int32
    /// `fchmod(2)`.
    var fchmod: @Sendable (_ fd: Int32, _ mode: mode_t) -> Int32
    /// `fchown(2)`: gives a new version the owner and group of the file it replaces.
    var fchown: @Sendable (_ fd: Int32, _ owner: uid_t, _ group: gid_t) -> Int32
    /// `close(2)`.
    var close: @Sendable (_ fd: Int32) -> Int32
    /// `rename(2)`.
    var rename: @Sendable (_ from: String, _ to: String) -> Int32
    /// `link(2)`: used to create a new vault without ever replacing an existing file.
    var link: @Sendable (_ from: String, _ to: String) -> Int32
    /// `unlink(2)`.
    var unlink: @Sendable (_ path: String) -> Int32
    /// `openat(2)`: files made in a folder held open (`AtomicFileWriter.write(_:in:name:path:)`).
    var openat: @Sendable (_ folder: Int32, _ name: String, _ flags: Int32, _ mode: mode_t) -> Int32
    /// `renameat(2)` within one folder held open.
    var renameat: @Sendable (_ folder: Int32, _ from: String, _ to: String) -> Int32
    /// `linkat(2)` within one folder held open, never following a link.
    var linkat: @Sendable (_ folder: Int32, _ from: String, _ to: String) -> Int32
    /// `unlinkat(2)` of a file in a folder held open.
    var unlinkat: @Sendable (_ folder: Int32, _ name: String) -> Int32

    /// The real system calls.
    static let live = SystemCalls(
        open: { path, flags, mode in Glibc.open(path, flags, mode) },
        write: { fd, buffer, count in Glibc.write(fd, buffer, count) },
        fsync: { Glibc.fsync($0) },
        fchmod: { Glibc.fchmod($0, $1) },
        fchown: { Glibc.fchown($0, $1, $2) },
        close: { Glibc.close($0) },
        rename: { Glibc.rename($0, $1) },
        link: { Glibc.link($0, $1) },
        unlink: { Glibc.unlink($0) },
        openat: { folder, name, flags, mode in Glibc.openat(folder, name, flags, mode) },
        renameat: { folder, from, to in Glibc.renameat(folder, from, folder, to) },
        linkat: { folder, from, to in Glibc.linkat(folder, from, folder, to, 0) },
        unlinkat: { folder, name in Glibc.unlinkat(folder, name, 0) })

    /// Creates a set of system calls; see `live`.
    init(
        open: @escaping @Sendable (String, Int32, mode_t) -> Int32,
        write: @escaping @Sendable (Int32, UnsafeRawPointer, Int) -> Int,
        fsync: @escaping @Sendable (Int32) -> Int32,
        fchmod: @escaping @Sendable (Int32, mode_t) -> Int32,
        fchown: @escaping @Sendable (Int32, uid_t, gid_t) -> Int32,
        close: @escaping @Sendable (Int32) -> Int32,
        rename: @escaping @Sendable (String, String) -> Int32,
        link: @escaping @Sendable (String, String) -> Int32,
        unlink: @escaping @Sendable (String) -> Int32,
        openat: @escaping @Sendable (Int32, String, Int32, mode_t) -> Int32,
        renameat: @escaping @Sendable (Int32, String, String) -> Int32,
        linkat: @escaping @Sendable (Int32, String, String) -> Int32,
        unlinkat: @escaping @Sendable (Int32, String) -> Int32
    ) {
        self.open = open
        self.write = write
        self.fsync = fsync
        self.fchmod = fchmod
        self.fchown = fchown
        self.close = close
        self.rename = rename
        self.link = link
        self.unlink = unlink
        self.openat = openat
        self.renameat = renameat
        self.linkat = linkat
        self.unlinkat = unlinkat
    }
}
