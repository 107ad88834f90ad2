import SecureMemory
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The folder `export --format pass` writes

/// A pass store written as a whole or not at all: every file goes into a new folder beside the
/// target (`.NAME.vaultfile-XXXXXXXX`, mode 0700, files 0600), which is renamed to the target's
/// name at the end. Every step is relative to the target's parent folder, walked and held open as
/// for any `--out` file (`OutputFolder`), with no link followed.
///
/// The target may be missing or an empty folder; a folder that holds anything is replaced only
/// with `--overwrite`, and only when it is a pass store (it has a `.gpg-id`): what belongs to the
/// store rather than to its entries (`keptOnOverwrite`: its `.git` folder, `.gitattributes`,
/// `.extensions`) moves into the new store (the store's history stays, and `git status` shows the export),
/// the old folder is renamed aside, the new one takes its name, then the old one is removed.
/// On any failure the new folder is removed and the target is as it was; on a signal too, until
/// the store is put in place (`SignalCleanup`).
final class PassStoreFolder {
    /// What is at the target's name now.
    enum Existing {
        case nothing
        case emptyFolder
        /// A pass store: the key ids of its `.gpg-id` (comments after '#' and blanks dropped, as pass reads it).
        case store(gpgIDs: [String])
        /// A folder that holds files but no `.gpg-id`.
        case otherFolder
    }

    /// What `--overwrite` moves from the old store into the new one: the git repository and the
    /// `*.gpg diff=gpg` line `pass git init` writes, and pass's extensions folder. `.gpg-id` is
    /// written anew (with `.gpg-id.sig`, a signature of the old one, it is not kept), and the entries
    /// and their folders' own `.gpg-id` files are the export's.
    static let keptOnOverwrite = [".git", ".gitattributes", ".extensions"]

    /// The target as the user gave it (messages).
    let path: String
    private let parent: OutputFolder
    private let name: String
    private let temporaryName: String
    private var root: Int32 = -1
    private var folders: [String: Int32] = [:]
    private var finished = false

    /// Walks to the target's parent folder and looks at the target.
    init(_ path: String) throws {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = path
        parent = try OutputFolder(for: trimmed)
        name = parent.name
        temporaryName = "." + name + ".vaultfile-" + randomBytes(count: 4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    deinit {
        for fd in folders.values { close(fd) }
        if root >= 0 { close(root) }
        if !finished, root >= 0 { Self.removeTree(in: parent.descriptor, name: temporaryName) }
        SignalCleanup.withdrawFolder()
    }

    /// What the target holds now.
    func existing() throws -> Existing {
        var info = stat()
        guard fstatat(parent.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return .nothing }
            throw CLIError.io(operation: "looking at", path: path, errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw CLIError.refused("\(path) exists and is not a folder; --format pass writes a store folder there",
                                   hint: "name a new folder (it is created), or an empty one")
        }
        let fd = openat(parent.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0, let directory = fdopendir(fd) else { throw CLIError.io(operation: "reading the folder", path: path, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if entryName != "." && entryName != ".." { names.append(entryName) }
        }
        if names.isEmpty { return .emptyFolder }
        guard names.contains(".gpg-id") else { return .otherFolder }
        let idFile = openat(dirfd(directory), ".gpg-id", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard idFile >= 0 else { throw CLIError.io(operation: "reading", path: path + "/.gpg-id", errno: errno) }
        defer { close(idFile) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        let count = read(idFile, &bytes, bytes.count)
        guard count >= 0 else { throw CLIError.io(operation: "reading", path: path + "/.gpg-id", errno: errno) }
        let ids = String(decoding: bytes[0..<count], as: UTF8.self).textLines().compactMap { line -> String? in
            let id = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = id.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed()
            return trimmed.isEmpty ? nil : String(trimmed)
        }
        return .store(gpgIDs: ids)
    }

    /// Creates the new folder beside the target.
    func begin() throws {
        SignalCleanup.registerFolder(in: parent.descriptor, name: temporaryName)
        guard mkdirat(parent.descriptor, temporaryName, 0o700) == 0 else {
            let code = errno
            SignalCleanup.withdrawFolder()
            throw CLIError.io(operation: "creating the folder", path: shown(temporaryName), errno: code)
        }
        root = openat(parent.descriptor, temporaryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard root >= 0 else { throw CLIError.io(operation: "opening the folder", path: shown(temporaryName), errno: errno) }
    }

    /// Writes `bytes` (ciphertext, or `.gpg-id`) at `parts` (folders, then the file's name), mode
    /// 0600, synced; the folders on the way are made 0700.
    func write(_ bytes: [UInt8], at parts: [String]) throws {
        var folder = root, key = ""
        for part in parts.dropLast() {
            key += "/" + part
            if let open = folders[key] { folder = open; continue }
            if mkdirat(folder, part, 0o700) != 0 && errno != EEXIST { throw CLIError.io(operation: "creating the folder", path: shown(key), errno: errno) }
            let fd = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw CLIError.io(operation: "opening the folder", path: shown(key), errno: errno) }
            folders[key] = fd
            folder = fd
        }
        let file = key + "/" + parts[parts.count - 1]
        let fd = openat(folder, parts[parts.count - 1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError.io(operation: "creating", path: shown(file), errno: errno) }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Stream.write($0, to: fd) }
        guard written, fsync(fd) == 0 else { throw CLIError.io(operation: "writing", path: shown(file), errno: errno) }
    }

    /// Puts the new store in place of the target (see the type's summary); `replacing` says the
    /// target is a store that `--overwrite` replaces.
    func commit(replacing: Bool) throws {
        // From here the folder may hold the old store's .git: a signal leaves it rather than removing it.
        SignalCleanup.withdrawFolder()
        for fd in folders.values { _ = fsync(fd) }
        _ = fsync(root)
        if replacing {
            let old = "." + name + ".vaultfile-old-" + randomBytes(count: 4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            let store = openat(parent.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard store >= 0 else { throw CLIError.io(operation: "opening the folder", path: path, errno: errno) }
            defer { close(store) }
            let moved = Self.keptOnOverwrite.filter { renameat(store, $0, root, $0) == 0 }
            func moveBack() { for kept in moved { _ = renameat(root, kept, store, kept) } }
            guard renameat(parent.descriptor, name, parent.descriptor, old) == 0 else {
                let code = errno
                moveBack()
                throw CLIError.io(operation: "moving aside the old store", path: path, errno: code)
            }
            guard renameat(parent.descriptor, temporaryName, parent.descriptor, name) == 0 else {
                let code = errno
                _ = renameat(parent.descriptor, old, parent.descriptor, name)
                moveBack()
                throw CLIError.io(operation: "renaming the new store to", path: path, errno: code)
            }
            finished = true
            Self.removeTree(in: parent.descriptor, name: old)
        } else {
            guard renameat(parent.descriptor, temporaryName, parent.descriptor, name) == 0 else {
                throw CLIError.io(operation: "renaming the new store to", path: path, errno: errno)
            }
            finished = true
        }
        _ = fsync(parent.descriptor)
    }

    // MARK: Private

    private func shown(_ relative: String) -> String {
        let folder = parent.shown.hasSuffix("/") ? parent.shown : parent.shown + "/"
        return relative.hasPrefix("/") ? folder + temporaryName + relative : folder + relative
    }

    /// Removes `name` in `folder` and everything under it, following no link. Calls `unlinkat(2)`.
    static func removeTree(in folder: Int32, name: String) {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFDIR else { _ = unlinkat(folder, name, 0); return }
        let fd = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0, let directory = fdopendir(fd) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if entryName != "." && entryName != ".." { names.append(entryName) }
        }
        for entryName in names { removeTree(in: dirfd(directory), name: entryName) }
        closedir(directory)
        _ = unlinkat(folder, name, AT_REMOVEDIR)
    }
}
