#if canImport(Glibc)
import Glibc
#endif

// MARK: - Finding a command as a shell does

/// Looks a command up the way `posix_spawnp(3)` will run it, before anything else happens, so
/// that `exec` can answer as shells do: 127 for a command that is not there, 126 for one that is
/// there but cannot be run. (`posix_spawnp` only returns an errno, after the vault is unlocked.)
enum CommandSearch {
    /// What the search found.
    enum Outcome {
        /// An executable regular file.
        case found(String)
        /// No such file, or no such command in any folder of PATH.
        case notFound
        /// A file that exists but is not executable, or a folder.
        case notExecutable(String)
    }

    /// Where `command` runs from: a path with a '/' as it is; a bare name in each folder of PATH
    /// in turn (an empty folder is the current one; with PATH unset, glibc's `/bin:/usr/bin`).
    /// A file there that cannot be run is passed over, as `execvp` does, and reported only when
    /// no folder has a runnable one.
    static func find(_ command: String, path: String? = environment("PATH")) -> Outcome {
        guard !command.isEmpty else { return .notFound }
        if command.contains("/") { return check(command) ?? .notFound }
        var blocked: String?
        for folder in (path ?? "/bin:/usr/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + command
            switch check(candidate) {
            case .found(let found)?: return .found(found)
            case .notExecutable(let file)?: blocked = blocked ?? file
            case .notFound?, nil: continue
            }
        }
        return blocked.map(Outcome.notExecutable) ?? .notFound
    }

    /// The outcome for one path, or nil when nothing is there.
    private static func check(_ file: String) -> Outcome? {
        var status = stat()
        guard stat(file, &status) == 0 else { return nil }
        let isRegular = status.st_mode & S_IFMT == S_IFREG
        return isRegular && access(file, X_OK) == 0 ? .found(file) : .notExecutable(file)
    }
}
