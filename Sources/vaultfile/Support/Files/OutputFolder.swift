import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The folder an --out file goes in, reached safely

/// The folder of an `--out` file, reached one path component at a time from a descriptor and held
/// open until the write, which is made relative to it (issue 39, item 6: only the last folder was
/// checked, following links, so a path through another user's folder that held a link to a
/// private folder passed, and the link could be swapped between the check and the write).
///
/// Each component is looked up in the folder reached so far with `fstatat` (no link followed) and
/// opened with `openat(Self.pathOnly | O_DIRECTORY | O_NOFOLLOW)`; before a name is looked up in a folder,
/// that folder must be one no other user can change the entries of (`FolderSharing.whoMayReplace`):
/// this user's or root's, and not writable by others or a shared group unless it has the sticky
/// bit, in which case the entry looked up must be this user's or root's (`/tmp/x.json` works,
/// `/tmp/theirs/x.json` does not). A symbolic link met on the way is followed by reading it
/// (`readlinkat`) and walking its target the same way, up to 40 links; the link itself sits in a
/// folder already checked, so nobody else can swap it. `..` goes to the parent of the folder
/// reached, as the kernel resolves it.
final class OutputFolder {
    /// The checked folder, open with `O_PATH`; closed when this goes.
    let descriptor: Int32
    /// The name of the file in it (the path's last component).
    let name: String
    /// The folder as messages name it: as the path spells it, or as the kernel names it once a
    /// link was followed.
    let shown: String

    /// `O_PATH`: a descriptor that names a folder without reading it (search permission is
    /// enough), for `openat`. Glibc declares it only under `_GNU_SOURCE`; `__O_PATH` is its value.
    private static let pathOnly = Int32(__O_PATH)

    /// The most symbolic links followed in one path, as the kernel's `MAXSYMLINKS`.
    private static let maxLinks = 40

    /// Walks the folders of `path` (an `--out` argument) and keeps the last one open. Throws a
    /// refusal naming the folder and what is wrong, or an I/O error for a folder that is missing.
    init(for path: String) throws {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !path.hasSuffix("/"), let last = parts.popLast(), last != ".", last != ".." else {
            var info = stat()
            if stat(path, &info) == 0 {
                // The refusal an existing folder always got (PlaintextOutput's, before the walk).
                throw CLIError.refused(
                    "\(path) is not a regular file (a device, a named pipe, a socket or a folder); refusing to replace it with plain text",
                    hint: "to write to standard output, leave out --out")
            }
            throw CLIError.refused("\(path) names a folder; --out takes a file", hint: "name a file, such as \(path.hasSuffix("/") ? path : path + "/")export.json")
        }
        let start = path.hasPrefix("/") ? "/" : "."
        var folder = try Self.open(start, shown: start)
        var shown: String? = start  // the user's spelling, while no link is followed
        var pending = parts[...]
        var links = 0
        do {
            while let part = pending.popFirst() {
                if part == "." { continue }
                let place = Self.joined(shown ?? Self.kernelPath(folder) ?? ".", part)
                if part == ".." {
                    folder = try Self.step(from: folder, to: "..", shown: place)
                    shown = shown.map { Self.joined($0, part) }
                    continue
                }
                try Self.checkFolder(folder, writing: path, shown: shown ?? Self.kernelPath(folder) ?? ".", entry: part)
                var entry = stat()
                guard fstatat(folder, part, &entry, AT_SYMLINK_NOFOLLOW) == 0 else {
                    throw CLIError.io(operation: "opening the folder", path: place, errno: errno)
                }
                if entry.st_mode & S_IFMT == S_IFLNK {
                    links += 1
                    guard links <= Self.maxLinks else { throw CLIError.io(operation: "opening the folder", path: place, errno: ELOOP) }
                    let target = try Self.readLink(part, in: folder, shown: place)
                    if target.hasPrefix("/") {
                        close(folder)
                        folder = try Self.open("/", shown: "/")
                    }
                    pending = (target.split(separator: "/", omittingEmptySubsequences: true).map(String.init) + pending)[...]
                    shown = nil
                    continue
                }
                folder = try Self.step(from: folder, to: part, shown: place)
                shown = shown.map { Self.joined($0, part) }
            }
            let here = shown ?? Self.kernelPath(folder) ?? "."
            try Self.checkFolder(folder, writing: path, shown: here, entry: nil)
            self.shown = here
        } catch {
            close(folder)
            throw error
        }
        descriptor = folder
        name = last
    }

    deinit { close(descriptor) }

    /// Checks the folder again, on its descriptor (just before the write).
    func check(writing path: String) throws {
        try Self.checkFolder(descriptor, writing: path, shown: shown, entry: nil)
    }

    // MARK: Private

    /// Refuses to look `entry` up in (or, nil, to write a file in) the open folder `folder` when
    /// another user could replace what is there.
    private static func checkFolder(_ folder: Int32, writing path: String, shown: String, entry: String?) throws {
        var info = stat()
        guard fstat(folder, &info) == 0 else { throw CLIError.io(operation: "checking the folder", path: shown, errno: errno) }
        var owner: uid_t? = nil
        if let entry, info.st_mode & S_ISVTX != 0 {
            var entryInfo = stat()
            if fstatat(folder, entry, &entryInfo, AT_SYMLINK_NOFOLLOW) == 0 { owner = entryInfo.st_uid }
        }
        guard let problem = FolderSharing.whoMayReplace(in: info, aclWriters: FolderACL.otherWriters(ofDescriptor: folder), entryOwner: owner) else { return }
        let hint = "write into a folder that other users cannot write to"
        switch (problem, entry) {
        case (.sharedWithoutStickyBit(let who), nil):
            throw CLIError.refused(
                "refusing to write \(path): its folder \(shown) \(who) and has no sticky bit, so another user could swap the file or plant a symbolic link there",
                hint: hint)
        case (.sharedWithoutStickyBit(let who), let entry?):
            throw CLIError.refused(
                "refusing to write \(path): the folder \(shown) on its way \(who) and has no sticky bit, so another user could replace "
                    + "\(joined(shown, entry)) with a symbolic link to another folder", hint: hint)
        case (.ownedByAnotherUser(let who), _):
            throw CLIError.refused(
                "refusing to write \(path): the folder \(shown) belongs to \(who), who can replace anything in it (sticky bit or not): "
                    + "the file, or a folder on its way, with a symbolic link", hint: hint)
        case (.entryOfAnotherUser(let who), let entry):
            throw CLIError.refused(
                "refusing to write \(path): \(joined(shown, entry ?? "")) in the shared folder \(shown) belongs to \(who), who could "
                    + "replace it with a symbolic link to another folder", hint: hint)
        }
    }

    /// Opens the folder `name` of `folder` (`..` included) without following a link, and closes `folder`.
    private static func step(from folder: Int32, to name: String, shown: String) throws -> Int32 {
        let next = openat(folder, name, Self.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        let code = errno
        close(folder)
        guard next >= 0 else { throw CLIError.io(operation: "opening the folder", path: shown, errno: code) }
        return next
    }

    /// Opens the folder at `path` (`/` or `.`).
    private static func open(_ path: String, shown: String) throws -> Int32 {
        let fd = Glibc.open(path, Self.pathOnly | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.io(operation: "opening the folder", path: shown, errno: errno) }
        return fd
    }

    /// The target of the symbolic link `name` of `folder`.
    private static func readLink(_ name: String, in folder: Int32, shown: String) throws -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBytes { readlinkat(folder, name, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard count >= 0 else { throw CLIError.io(operation: "reading the link", path: shown, errno: errno) }
        guard count < buffer.count, count > 0 else { throw CLIError.io(operation: "reading the link", path: shown, errno: ENAMETOOLONG) }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// The path the kernel has for the open folder `fd` (/proc/self/fd), or nil.
    private static func kernelPath(_ fd: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard count > 0, buffer[0] == 0x2F else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `folder/name`, without doubling the slash of `/`.
    private static func joined(_ folder: String, _ name: String) -> String {
        folder == "/" ? "/" + name : folder == "." ? name : folder + "/" + name
    }
}
