import CPlatform
import SecureMemory
import VaultModel
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
    /// The folder's descriptor, open until `remove`: files in it are made and wiped through it.
    private let folderFD: Int32

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
    /// `allowDisk`, $TMPDIR or /tmp when there is none; else a refusal. A base that another user
    /// could change (`checkedBase`) is refused, naming it and why, rather than passed over.
    static func base(allowDisk: Bool) throws -> String {
        if let tmpfs = tmpfsBase() {
            close(try openCheckedBase(tmpfs))
            return tmpfs
        }
        guard allowDisk else {
            throw CLIError.refused("no tmpfs found ($XDG_RUNTIME_DIR, /dev/shm): the value would be written to a disk",
                                   hint: "pass --allow-disk-temp to accept that risk")
        }
        let disk = environment("TMPDIR") ?? "/tmp"
        close(try openCheckedBase(disk))
        return disk
    }

    /// Creates a new folder in `base`, and its locked lock file.
    ///
    /// Through descriptors from the base's check on: the base is opened and checked with `fstat`
    /// (`openCheckedBase`), the folder made with `mkdirat` and opened with `openat` without
    /// following a link, then checked with `fstat` (a folder of this user, mode 0700) before
    /// anything is written in it; files in it are made with `openat`. No name is looked up twice
    /// between a check and its use.
    init(base: String) throws {
        let baseFD = try Self.openCheckedBase(base)
        defer { close(baseFD) }
        let canonical = Self.pathOf(baseFD) ?? base
        var made: (name: String, fd: Int32)?
        for _ in 0..<16 where made == nil {
            let name = Self.namePrefix + Self.randomSuffix()
            guard mkdirat(baseFD, name, 0o700) == 0 else {
                if errno == EEXIST { continue }
                throw CLIError.io(operation: "creating a private folder in", path: canonical, errno: errno)
            }
            let fd = openat(baseFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw CLIError.io(operation: "opening the private folder in", path: canonical, errno: errno) }
            made = (name, fd)
        }
        guard let made else { throw CLIError.io(operation: "creating a private folder in", path: canonical, errno: EEXIST) }
        path = canonical + (canonical == "/" ? "" : "/") + made.name
        folderFD = made.fd
        var info = stat()
        // umask may have taken bits away, never added them; fchmod makes it exactly 0700.
        guard fchmod(made.fd, 0o700) == 0, fstat(made.fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
              info.st_uid == geteuid(), info.st_mode & 0o7777 == 0o700 else {
            close(made.fd)
            unlinkat(baseFD, made.name, AT_REMOVEDIR)
            throw CLIError.refused("the private folder \(path) is not this user's with mode 0700 after it was made", hint: "check the folder's file system")
        }
        // Locked under another name, then renamed: a sweep never sees the lock file unlocked.
        let fresh = Self.lockName + ".new"
        let fd = openat(made.fd, fresh, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0, flock(fd, LOCK_EX) == 0, renameat(made.fd, fresh, made.fd, Self.lockName) == 0 else {
            let code = errno
            if fd >= 0 { close(fd) }
            unlinkat(made.fd, fresh, 0)
            close(made.fd)
            unlinkat(baseFD, made.name, AT_REMOVEDIR)
            throw CLIError.io(operation: "locking the private folder", path: path, errno: code)
        }
        lockFD = fd
    }

    /// Writes `bytes` to a new 0600 file `file` of the folder (a path inside it; made through the folder's descriptor).
    func write(_ bytes: [UInt8], to file: String) throws {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        let fd = openat(folderFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CLIError.io(operation: "creating", path: file, errno: errno) }
        defer { close(fd) }
        guard Stream.write(bytes, to: fd) else { throw CLIError.io(operation: "writing", path: file, errno: errno) }
    }

    /// Wipes everything in the folder (what the editor made too, subfolders included), then the
    /// lock file and the folder itself, and releases the lock.
    func remove() {
        Shredder.removeContents(of: folderFD, keeping: Self.lockName)
        unlinkat(folderFD, Self.lockName, 0)
        close(folderFD)
        rmdir(path)
        close(lockFD)
    }

    // MARK: The base

    /// Opens the folder `base` and checks, on the descriptor, that no other user can change it:
    /// it and every folder above it belong to this user or root and are not writable by others
    /// (`FolderSharing`), unless they have the sticky bit (/tmp, /dev/shm). Throws a refusal
    /// naming the folder and what is wrong with it.
    static func openCheckedBase(_ base: String) throws -> Int32 {
        let fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.io(operation: "opening the folder for edit's private folder,", path: base, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw CLIError.io(operation: "checking", path: base, errno: code)
        }
        var problem = Self.problem(with: info, aclWriters: FolderACL.otherWriters(ofDescriptor: fd)).map { (base, $0) }
        // The folders above, by the path the descriptor has (links resolved): one another user could
        // rename would let them swap the whole base. Checked as they are; each can change only if one is unsafe.
        if problem == nil, let resolved = pathOf(fd) {
            var ancestor = resolved
            while ancestor != "/", let slash = ancestor.lastIndex(of: "/") {
                ancestor = slash == ancestor.startIndex ? "/" : String(ancestor[..<slash])
                var above = stat()
                guard lstat(ancestor, &above) == 0 else { break }
                if let found = Self.problem(with: above, aclWriters: FolderACL.otherWriters(atPath: ancestor)) { problem = (ancestor, found); break }
            }
        }
        guard let (folder, why) = problem else { return fd }
        close(fd)
        let named = folder == base ? base : "\(folder) (above \(base))"
        throw CLIError.refused(
            "refusing to put the value in \(named) for edit: it \(why), so another user could reach or swap the private folder",
            hint: "point $XDG_RUNTIME_DIR (or, with --allow-disk-temp, $TMPDIR) at a folder of yours with mode 0700")
    }

    /// What lets another user change the folder `info` describes, or nil.
    private static func problem(with info: stat, aclWriters: String?) -> String? {
        guard info.st_mode & S_IFMT == S_IFDIR else { return "is not a folder" }
        if info.st_uid != 0 && info.st_uid != geteuid() {
            return "belongs to " + (getpwuid(info.st_uid).map { "user \(String(cString: $0.pointee.pw_name)) (uid \(info.st_uid))" } ?? "user id \(info.st_uid)")
        }
        return FolderSharing.othersWhoMayReplaceFiles(in: info, aclWriters: aclWriters).map { $0 + " and has no sticky bit" }
    }

    /// The path the kernel has for the open folder `fd` (/proc/self/fd), or nil.
    private static func pathOf(_ fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0, buffer[0] == 0x2F else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Six random letters and digits for a folder's name.
    private static func randomSuffix() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        return String(decoding: randomBytes(count: 6).map { alphabet[Int($0) % alphabet.count] }, as: UTF8.self)
    }

    // MARK: Leftovers

    /// Wipes the private folders in `base` (by default the tmpfs base) that no live `edit` holds: one
    /// `readdir` of the base, and for each `vaultfile-edit-*` folder of this user a lock taken
    /// without waiting. Every vaultfile run sweeps the tmpfs base at start-up; `edit` sweeps a disk base.
    static func sweepLeftovers(in base: String? = nil) {
        guard let base = base ?? tmpfsBase(), let baseFD = try? openCheckedBase(base) else { return }
        defer { close(baseFD) }
        let prefix = Array(namePrefix.utf8).map { CChar(bitPattern: $0) }
        for name in Shredder.names(in: baseFD) where name.starts(with: prefix) {
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
/// link is removed, never followed. Names are handled as the kernel gives them, raw bytes and a
/// NUL: a name that is not UTF-8 (an editor's backup named `bak\377\376`) is removed by its own
/// bytes, never by a decoded (and so different) name that would leave the file behind.
enum Shredder {
    /// How deep folders are followed; deeper ones are left.
    private static let maxDepth = 32

    /// Wipes and removes everything in the open folder `folder` but `keeping`.
    static func removeContents(of folder: Int32, keeping: String? = nil, depth: Int = 0) {
        let kept = keeping.map { Array($0.utf8CString) }
        for name in names(in: folder) where name != kept {
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

    /// The names in the open folder `folder` as their bytes with a closing NUL (ready for `openat`,
    /// `unlinkat`), "." and ".." left out; read whole before anything is removed.
    static func names(in folder: Int32) -> [[CChar]] {
        let copy = dup(folder)
        guard copy >= 0 else { return [] }
        _ = fcntl(copy, F_SETFD, FD_CLOEXEC)
        guard let handle = fdopendir(copy) else { close(copy); return [] }
        defer { closedir(handle) }
        rewinddir(handle)
        var result: [[CChar]] = []
        let dot = CChar(bitPattern: 0x2E)
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.prefix { $0 != 0 }.map { CChar(bitPattern: $0) } + [0] }
            if name != [dot, 0] && name != [dot, dot, 0] { result.append(name) }
        }
        return result
    }

    /// Overwrites a regular file with zeros to its length (a file with other links is only unlinked:
    /// its contents belong to the other name too).
    private static func zero(_ name: [CChar], in folder: Int32, info: stat) {
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
