#if canImport(Glibc)
import Glibc
#endif
import KDF
import VaultModel

// MARK: - The lock beside a vault

/// An exclusive `flock(2)` on a sidecar file, held until `release()`.
///
/// The lock is on a separate file because a rename swaps the vault's inode.
/// The descriptor is owned here for the lock's whole life: a temporary
/// FileHandle would close it, and so release the lock, too early.
final class FileLock {
    private var fd: Int32

    /// How long a writer waits before it says whom it waits for (`waiting`).
    static let waitNoticeDelay = 1.0

    /// Waits up to `timeout` seconds for the lock, polling; throws `busy` if it stays taken,
    /// naming the holder when the kernel lists it (`holder(of:)`).
    ///
    /// With `owner`, the lock file is given that owner and group (the vault's) when it has
    /// others: a lock file root made, 0600, would otherwise lock the vault's owner out.
    /// `waiting` is told once, after `waitNoticeDelay` seconds of waiting, who holds the lock
    /// (nil when not known), so that the command can say what it waits for.
    init(path: String, timeout: Double, owner: FileOwner? = nil, waiting: (@Sendable (LockHolder?) -> Void)? = nil) throws(VaultError) {
        fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "opening the lock file", path: path, errno: errno) }
        var info = stat()
        // Only an empty regular file with one name is given away: a hard link planted at the lock's
        // path (to /etc/shadow, say) must never change owner when root writes the vault.
        if let owner, fstat(fd, &info) == 0, FileOwner(info) != owner,
           (info.st_mode & S_IFMT) == S_IFREG, info.st_nlink == 1, info.st_size == 0 {
            // Only root may give a file away; anyone else keeps the lock file as it is, and it works the same.
            _ = fchown(fd, owner.user, owner.group)
        }
        let started = monotonicSeconds()
        let deadline = started + max(timeout, 0)
        var told = waiting == nil
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                Glibc.close(fd)
                throw .io(operation: "locking", path: path, errno: code)
            }
            let now = monotonicSeconds()
            guard now < deadline else {
                let holder = Self.holder(of: fd)
                Glibc.close(fd)
                throw .busy(lockPath: path, seconds: timeout, holder: holder)
            }
            if !told, now - started >= Self.waitNoticeDelay {
                told = true
                waiting?(Self.holder(of: fd))
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

    // MARK: Who holds it

    /// The process holding the `flock(2)` on the file open at `fd`, as the kernel lists it in
    /// `/proc/locks` (a line `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF`, matched by the
    /// file's device and inode); nil when /proc is not mounted, or the holder is in another pid
    /// namespace (listed there as pid 0, or not at all). Nothing is written to the lock file: the
    /// kernel's list is right about every holder, an older release or a killed writer's child too.
    static func holder(of fd: Int32) -> LockHolder? {
        var info = stat()
        guard fstat(fd, &info) == 0, let text = readSmallFile("/proc/locks", limit: 1 << 20) else { return nil }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        for line in text.split(separator: "\n") {
            // Waiters are listed as "N: -> FLOCK …": not holders.
            let words = line.split(separator: " ")
            guard words.count >= 6, words[1] == "FLOCK", let pid = Int32(words[4]), pid > 0 else { continue }
            let file = words[5].split(separator: ":")
            guard file.count == 3, UInt64(file[0], radix: 16) == major, UInt64(file[1], radix: 16) == minor,
                  UInt64(file[2]) == UInt64(info.st_ino) else { continue }
            let program = readSmallFile("/proc/\(pid)/comm", limit: 64).map { String($0.prefix { $0 != "\n" }) }
            return LockHolder(pid: pid, program: program.flatMap { $0.isEmpty ? nil : $0 })
        }
        return nil
    }

    /// The text of a small file of /proc (read in one go up to `limit` bytes), or nil.
    private static func readSmallFile(_ path: String, limit: Int) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
