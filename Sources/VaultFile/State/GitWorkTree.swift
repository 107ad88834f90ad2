#if canImport(Glibc)
import Glibc
#endif

// MARK: - Whether git manages a file

/// Finds the git work tree a file lies in, as git itself finds it, with a few `stat` calls and
/// never a git process: a `.git` in the file's folder or a folder above it, on the same file system.
///
/// A `.git` counts only when it is a folder holding `HEAD`, or a gitfile (`gitdir: PATH`, as in
/// linked work trees and submodules) naming a folder that holds `HEAD`; an empty `.git` folder or
/// a stray file of that name does not. Inside a work tree git keeps the history and merges forks,
/// so the rollback check is off there (docs/SECURITY.md says who can turn it off this way).
public enum GitWorkTree {
    /// The largest gitfile read; git's own are one short line.
    static let maxGitfileLength = 4096

    /// The folder whose `.git` makes the file at `path` part of a work tree, or nil.
    ///
    /// The walk starts at the folder of the file `path` names (a symbolic link is followed to
    /// the file it points to, where writes land) and stops at the root or where the file system
    /// changes, as git does by default.
    public static func root(containing path: String) -> String? {
        guard var folder = folder(of: path) else { return nil }
        var info = stat()
        guard stat(folder, &info) == 0 else { return nil }
        let device = info.st_dev
        while true {
            if holdsRepository(folder + (folder == "/" ? ".git" : "/.git"), folder: folder) { return folder }
            guard folder != "/" else { return nil }
            let parent = parentFolder(of: folder)
            guard stat(parent, &info) == 0, info.st_dev == device else { return nil }
            folder = parent
        }
    }

    // MARK: Private

    /// The absolute, resolved folder of the file at `path` (which need not exist yet).
    private static func folder(of path: String) -> String? {
        let target = AtomicFileWriter.Destination(path: path, finalLink: .follow).directory
        guard let resolved = realpath(target, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func parentFolder(of folder: String) -> String {
        guard let slash = folder.lastIndex(of: "/"), slash != folder.startIndex else { return "/" }
        return String(folder[..<slash])
    }

    /// Whether `dotGit` (in `folder`) is a repository folder holding `HEAD`, or a gitfile naming one.
    private static func holdsRepository(_ dotGit: String, folder: String) -> Bool {
        var info = stat()
        guard stat(dotGit, &info) == 0 else { return false }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return exists(dotGit + "/HEAD")
        case S_IFREG:
            guard let target = gitfileTarget(dotGit) else { return false }
            return exists((target.hasPrefix("/") ? target : folder + "/" + target) + "/HEAD")
        default:
            return false
        }
    }

    /// The folder a gitfile names (`gitdir: PATH`), or nil when the file is not one.
    private static func gitfileTarget(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxGitfileLength)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        guard text.hasPrefix("gitdir: ") else { return nil }
        let target = text.dropFirst("gitdir: ".count).prefix { $0 != "\n" && $0 != "\r" }
        return target.isEmpty ? nil : String(target)
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}
