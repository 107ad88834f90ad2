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

    /// Waits up to `timeout` seconds for the lock, polling; throws `busy` if it stays taken.
    ///
    /// With `owner`, the lock file is given that owner and group (the vault's) when it has
    /// others: a lock file root made, 0600, would otherwise lock the vault's owner out.
    init(path: String, timeout: Double, owner: FileOwner? = nil) throws(VaultError) {
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
