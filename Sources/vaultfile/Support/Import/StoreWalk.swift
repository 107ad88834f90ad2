import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The files of a pass or passage store

/// The encrypted files of a password store folder (pass, gopass: `.gpg`; passage: `.age`), found
/// without following a symbolic link out of the store, and what was skipped, by kind.
///
/// - `.gpg-id` (pass, gopass), `.age-recipients` and `.age-identities` (passage) say who a folder
///   is encrypted to: skipped and counted;
/// - the `.git` folder of a store kept in git, and every other hidden folder (gopass's
///   `.public-keys`), are skipped and counted;
/// - any other file that does not end in the store's extension is skipped and counted;
/// - a symbolic link is followed only when it resolves inside the store (pass allows linking one
///   entry to another); one that leaves the store, or names a folder, is skipped and counted;
/// - a file or folder whose name is not UTF-8 is skipped and counted, the first named escaped.
struct StoreWalk {
    /// One encrypted file: its path to open, its name in the store (folders, then the title),
    /// and the file the walk found there (its device and inode): the file opened for the tool
    /// must be that one, so that a link or folder swapped in after the walk reads nothing from
    /// outside the store (att58 F3).
    struct File {
        let path: String
        let name: [String]
        let device: UInt64
        let inode: UInt64
    }

    private(set) var files: [File] = []
    /// What was not read → how many, and why (the import's loss warnings say each).
    private(set) var skipped: [String: (count: Int, reason: NotKeptReason)] = [:]
    /// The first name found that is not UTF-8, escaped (the warning names it).
    private var skippedNonUTF8: String?

    /// The most files one store may hold (the most entries a vault holds).
    static let maxFiles = VaultLimits.maxEntries
    /// How deep folders may nest.
    static let maxDepth = 64

    /// Walks `root` for files ending in `suffix` (".gpg" or ".age").
    init(root: String, suffix: String) throws {
        var info = stat()
        guard stat(root, &info) == 0 else { throw CLIError.io(operation: "reading the store", path: root, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CLIError.invalidArgument("\(root) is not a folder; --format pass and passage read a password store folder (e.g. ~/.password-store)")
        }
        guard let real = realpath(root, nil) else { throw CLIError.io(operation: "resolving", path: root, errno: errno) }
        let realRoot = String(cString: real)
        free(real)
        try walk(folder: root, name: [], realRoot: realRoot, suffix: suffix, depth: 0)
        files.sort { $0.name.lexicographicallyPrecedes($1.name) }
    }

    private mutating func skip(_ what: String, reason: NotKeptReason = .noPlace) { skipped[what, default: (0, reason)].count += 1 }

    private mutating func walk(folder: String, name: [String], realRoot: String, suffix: String, depth: Int) throws {
        guard depth < Self.maxDepth else { throw CLIError.invalidArgument("\(folder): folders nest deeper than \(Self.maxDepth) levels") }
        guard let directory = opendir(folder) else { throw CLIError.io(operation: "reading the folder", path: folder, errno: errno) }
        defer { closedir(directory) }
        var entries: [String] = []
        while let entry = readdir(directory) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            // A name that is not UTF-8 cannot be an entry name (nor be opened again through a
            // String): skipped, and named with its other bytes escaped.
            guard let entryName = String(validating: raw, as: UTF8.self) else {
                let shown = raw.map { byte in
                    (0x20..<0x7F).contains(byte) && byte != 0x5C ? String(UnicodeScalar(byte))
                        : "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }.joined()
                if skippedNonUTF8 == nil { skippedNonUTF8 = shown }
                skip("files whose names are not UTF-8 (not read; e.g. '\(skippedNonUTF8!)')", reason: .statedInText)
                continue
            }
            if entryName != "." && entryName != ".." { entries.append(entryName) }
        }
        for entryName in entries.sorted() {
            let path = folder.hasSuffix("/") ? folder + entryName : folder + "/" + entryName
            var info = stat()
            guard lstat(path, &info) == 0 else { throw CLIError.io(operation: "reading", path: path, errno: errno) }
            var kind = info.st_mode & S_IFMT
            if kind == S_IFLNK {
                // Followed only when it stays inside the store and names a file.
                guard let target = realpath(path, nil) else { skip("broken symbolic links"); continue }
                let resolved = String(cString: target)
                free(target)
                guard resolved.hasPrefix(realRoot + "/"), stat(resolved, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    skip("symbolic links out of the store or to folders (not followed)", reason: .statedInText)
                    continue
                }
                kind = S_IFREG
            }
            if kind == S_IFDIR {
                if entryName.hasPrefix(".") { skip(entryName == ".git" ? "the store's .git folder" : "the hidden folder \(entryName)"); continue }
                try walk(folder: path, name: name + [entryName], realRoot: realRoot, suffix: suffix, depth: depth + 1)
                continue
            }
            if [".gpg-id", ".gpg-id.sig", ".age-recipients", ".age-identities"].contains(entryName) {
                skip("\(entryName) files (who the store is encrypted to)", reason: .statedInText)
                continue
            }
            guard kind == S_IFREG, entryName.hasSuffix(suffix), entryName.count > suffix.count else {
                skip("files that are not \(suffix) files")
                continue
            }
            guard files.count < Self.maxFiles else {
                throw CLIError.inputTooLarge(what: "the store (files)", limit: Self.maxFiles)
            }
            files.append(File(path: path, name: name + [String(entryName.dropLast(suffix.count))],
                              device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
    }
}
