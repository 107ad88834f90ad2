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

    /// Names the store keeps for itself, which no entry's folder may take: at the store's top,
    /// `keptOnOverwrite` and `.gpg-id` / `.gpg-id.sig` (pass's recipients and their signature);
    /// at any level, `.gpg-id` and `.gpg-id.sig` (pass reads them in every folder). An entry's own
    /// file ends in `.gpg`, so only a folder can collide: `.git/hooks` would be written into the
    /// repository's place, and the export's `.git` would take the place of the store's history.
    static let reservedAtTop = keptOnOverwrite + [".gpg-id", ".gpg-id.sig"]
    static let reservedEverywhere = [".gpg-id", ".gpg-id.sig"]

    /// The entries among `names` whose folders take a name the store reserves (`reservedAtTop`).
    static func entriesTakingReservedNames(_ names: [String]) -> [String] {
        names.filter { name in
            let folders = name.split(separator: "/", omittingEmptySubsequences: false).dropLast().map(String.init)
            guard let first = folders.first else { return false }
            return reservedAtTop.contains(first) || folders.contains(where: reservedEverywhere.contains)
        }
    }

    /// The target as the user gave it (messages).
    let path: String
    private let parent: OutputFolder
    private let name: String
    private let temporaryName: String
    private var root: Int32 = -1
    private var folders: [String: Int32] = [:]
    private var finished = false
    /// A kept item of the old store could not be moved back: the new folder is left, not removed.
    private var holdsKept = false

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
        if !finished, !holdsKept, root >= 0 { Self.removeTree(in: parent.descriptor, name: temporaryName) }
        SignalCleanup.withdrawFolder()
    }

    /// What the target holds now.
    func existing() throws -> Existing {
        var info = stat()
        guard fstatat(parent.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return .nothing }
            throw CLIError.io(operation: "looking at", path: path, errno: errno)
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw CLIError.refused("\(path) is a symbolic link; --format pass follows no link",
                                   hint: "name the store folder itself")
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
    ///
    /// The renames run with the fatal signals held back (`SignalCleanup.deferringSignals`): a
    /// signal takes effect before they start (the new folder is removed, the old store is whole) or
    /// once the new store is in place and the old one removed (the process then ends by the signal,
    /// the export done). A kept item that cannot be moved (other than missing) is an error: every
    /// item moved is moved back, the old store stays whole, and the new folder is removed.
    func commit(replacing: Bool) throws {
        for fd in folders.values { _ = fsync(fd) }
        _ = fsync(root)
        try SignalCleanup.deferringSignals {
            if replacing { try replaceStore() } else {
                guard renameat(parent.descriptor, temporaryName, parent.descriptor, name) == 0 else {
                    throw CLIError.io(operation: "renaming the new store to", path: path, errno: errno)
                }
                finished = true
                SignalCleanup.withdrawFolder()
            }
            _ = fsync(parent.descriptor)
        }
    }

    // MARK: Private

    /// `commit`'s part for `--overwrite`: kept items in, old store aside, new store in, old removed.
    private func replaceStore() throws {
        let old = "." + name + ".vaultfile-old-" + randomBytes(count: 4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let store = openat(parent.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard store >= 0 else { throw CLIError.io(operation: "opening the folder", path: path, errno: errno) }
        defer { close(store) }
        var moved: [String] = []
        // An item that cannot go back stays in the new folder, which is then kept (not removed) and named in the error.
        func moveBack() {
            for kept in moved where renameat(root, kept, store, kept) != 0 {
                holdsKept = true
                SignalCleanup.withdrawFolder()
            }
        }
        func failure(_ operation: String, _ code: Int32) -> CLIError {
            // The note follows the path: `io` reads "OPERATION PATH failed: REASON".
            guard holdsKept else { return .io(operation: operation, path: path + " (the old store is as it was)", errno: code) }
            return .io(operation: operation, path: path + " (\(moved.joined(separator: ", ")) could not be moved back: find them in \(shown(temporaryName)))",
                       errno: code)
        }
        for kept in Self.keptOnOverwrite {
            if renameat(store, kept, root, kept) == 0 { moved.append(kept); continue }
            let code = errno
            if code == ENOENT { continue }
            moveBack()
            throw failure("moving \(kept) into the new store from", code)
        }
        guard renameat(parent.descriptor, name, parent.descriptor, old) == 0 else {
            let code = errno
            moveBack()
            throw failure("moving aside the old store", code)
        }
        guard renameat(parent.descriptor, temporaryName, parent.descriptor, name) == 0 else {
            let code = errno
            _ = renameat(parent.descriptor, old, parent.descriptor, name)
            moveBack()
            throw failure("renaming the new store to", code)
        }
        finished = true
        SignalCleanup.withdrawFolder()
        Self.removeTree(in: parent.descriptor, name: old)
    }

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
