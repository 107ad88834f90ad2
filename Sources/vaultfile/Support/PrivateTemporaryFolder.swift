import CPlatform
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - A private folder in memory

/// A 0700 folder on tmpfs ($XDG_RUNTIME_DIR, else /dev/shm) for plaintext that must exist as a
/// file for a moment (`edit`).
///
/// For its whole life the folder's owner holds an exclusive `flock` on `lockName` inside it. A
/// later vaultfile run that finds such a folder unlocked knows its owner died (SIGKILL) and wipes
/// it (`sweepLeftovers`); a folder whose lock is held belongs to a live `edit` and is left alone.
final class PrivateTemporaryFolder: Sendable {
    /// The folder's path.
    let path: String
    /// The lock file's descriptor, open and locked until `remove`.
    private let lockFD: Int32

    /// Every private folder's name starts with this.
    static let namePrefix = "vaultfile-edit-"
    /// The lock file inside each folder.
    static let lockName = "vaultfile.lock"
    /// A folder with no lock file (a crash between its creation and its lock, or a release without
    /// locks) is wiped once it has not changed for this long.
    static let unlockedLeftoverAge = 3_600

    /// tmpfs's `f_type` (statfs(2)).
    private static let tmpfsMagic = 0x0102_1994

    /// Where a new folder goes: the first tmpfs among $XDG_RUNTIME_DIR and /dev/shm; with
    /// `allowDisk`, $TMPDIR or /tmp when there is none; else a refusal.
    static func base(allowDisk: Bool) throws -> String {
        if let tmpfs = tmpfsBase() { return tmpfs }
        guard allowDisk else {
            throw CLIError.refused("no tmpfs found ($XDG_RUNTIME_DIR, /dev/shm): the value would be written to a disk",
                                   hint: "pass --allow-disk-temp to accept that risk")
        }
        return environment("TMPDIR") ?? "/tmp"
    }

    /// Creates a new folder in `base`, and its locked lock file.
    init(base: String) throws {
        var template = Array((base + "/" + Self.namePrefix + "XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw CLIError.io(operation: "creating a private folder in", path: base, errno: errno)
        }
        path = String(cString: created)
        chmod(path, 0o700)
        // Locked under another name, then renamed: a sweep never sees the lock file unlocked.
        let fresh = path + "/" + Self.lockName + ".new"
        let fd = open(fresh, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0, rename(fresh, path + "/" + Self.lockName) == 0 else {
            let code = errno
            if fd >= 0 { close(fd) }
            unlink(fresh)
            rmdir(path)
            throw CLIError.io(operation: "locking the private folder", path: path, errno: code)
        }
        lockFD = fd
    }

    /// Writes `bytes` to a new 0600 file.
    func write(_ bytes: [UInt8], to file: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CLIError.io(operation: "creating", path: file, errno: errno) }
        defer { close(fd) }
        guard Stream.write(bytes, to: fd) else { throw CLIError.io(operation: "writing", path: file, errno: errno) }
    }

    /// Wipes everything in the folder (what the editor made too, subfolders included), then the
    /// lock file and the folder itself, and releases the lock.
    func remove() {
        let folder = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if folder >= 0 {
            Shredder.removeContents(of: folder, keeping: Self.lockName)
            unlinkat(folder, Self.lockName, 0)
            close(folder)
        }
        rmdir(path)
        close(lockFD)
    }

    // MARK: Leftovers

    /// Wipes the private folders in `base` (by default the tmpfs base) that no live `edit` holds: one
    /// `readdir` of the base, and for each `vaultfile-edit-*` folder of this user a lock taken
    /// without waiting. Every vaultfile run sweeps the tmpfs base at start-up; `edit` sweeps a disk base.
    static func sweepLeftovers(in base: String? = nil) {
        guard let base = base ?? tmpfsBase() else { return }
        let baseFD = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard baseFD >= 0 else { return }
        defer { close(baseFD) }
        for name in Shredder.names(in: baseFD) where name.hasPrefix(namePrefix) {
            var info = stat()
            guard fstatat(baseFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFDIR,
                  info.st_uid == geteuid() else { continue }
            let folder = openat(baseFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard folder >= 0 else { continue }
            defer { close(folder) }
            let lock = openat(folder, lockName, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
            if lock >= 0 {
                defer { close(lock) }
                guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            } else {
                guard errno == ENOENT, time(nil) - info.st_mtim.tv_sec > unlockedLeftoverAge else { continue }
            }
            Shredder.removeContents(of: folder, keeping: lockName)
            unlinkat(folder, lockName, 0)
            unlinkat(baseFD, name, AT_REMOVEDIR)
        }
    }

    /// The first tmpfs among $XDG_RUNTIME_DIR and /dev/shm that this user may write to.
    static func tmpfsBase() -> String? {
        var candidates: [String] = []
        if let runtime = environment("XDG_RUNTIME_DIR") { candidates.append(runtime) }
        candidates.append("/dev/shm")
        return candidates.first { access($0, W_OK) == 0 && vaultfile_filesystem_type($0) == tmpfsMagic }
    }
}

// MARK: - Wiping files

/// Overwrites files with zeros and removes them, folder by folder, through descriptors: a symbolic
/// link is removed, never followed.
enum Shredder {
    /// How deep folders are followed; deeper ones are left.
    private static let maxDepth = 32

    /// Wipes and removes everything in the open folder `folder` but `keeping`.
    static func removeContents(of folder: Int32, keeping: String? = nil, depth: Int = 0) {
        for name in names(in: folder) where name != keeping {
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                guard depth < maxDepth else { continue }
                let inner = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard inner >= 0 else { continue }
                removeContents(of: inner, depth: depth + 1)
                close(inner)
                unlinkat(folder, name, AT_REMOVEDIR)
            case S_IFREG:
                zero(name, in: folder, info: info)
                unlinkat(folder, name, 0)
            default:
                unlinkat(folder, name, 0)
            }
        }
    }

    /// The names in the open folder `folder`, "." and ".." left out; read whole before anything is removed.
    static func names(in folder: Int32) -> [String] {
        let copy = dup(folder)
        guard copy >= 0 else { return [] }
        _ = fcntl(copy, F_SETFD, FD_CLOEXEC)
        guard let handle = fdopendir(copy) else { close(copy); return [] }
        defer { closedir(handle) }
        rewinddir(handle)
        var result: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { result.append(name) }
        }
        return result
    }

    /// Overwrites a regular file with zeros to its length (a file with other links is only unlinked:
    /// its contents belong to the other name too).
    private static func zero(_ name: String, in folder: Int32, info: stat) {
        guard info.st_nlink == 1, info.st_size > 0 else { return }
        if info.st_mode & 0o200 == 0 { fchmodat(folder, name, 0o600, 0) }
        let fd = openat(folder, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var current = stat()
        guard fstat(fd, &current) == 0, current.st_mode & S_IFMT == S_IFREG else { return }
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        var left = Int(current.st_size)
        while left > 0 {
            let count = min(left, zeros.count)
            guard zeros.withUnsafeBytes({ Stream.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), to: fd) }) else { return }
            left -= count
        }
        _ = fsync(fd)
    }
}
