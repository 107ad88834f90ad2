#if canImport(Glibc)
import Glibc
#endif
import VaultFile

// MARK: - Where the agent listens

/// The agent's socket: `$VAULTFILE_AGENT_SOCK`, else `$XDG_RUNTIME_DIR/vaultfile/agent.sock`, else
/// `/tmp/vaultfile-$UID/agent.sock` (docs/AGENT.md). The client and the agent resolve it the same way.
///
/// The two default folders are made 0700 and refused when they exist with another owner, with
/// access for group or others, or as a symbolic link: in /tmp another user could have made the
/// folder first and watch or replace the socket. A folder named by `VAULTFILE_AGENT_SOCK` is the
/// user's choice and is only made when missing; the socket itself is always 0600, and both sides
/// check the peer's uid (`UnixSocket.peer`), which is what keeps keys from another user.
struct AgentSocketPath {
    /// Where the path came from.
    enum Origin {
        /// `VAULTFILE_AGENT_SOCK`.
        case variable
        /// `$XDG_RUNTIME_DIR/vaultfile/`.
        case runtimeDirectory
        /// `/tmp/vaultfile-$UID/`.
        case temporaryDirectory
    }

    /// The socket's absolute path.
    let path: String
    /// The folder that holds it.
    let directory: String
    let origin: Origin

    /// The longest socket path the kernel takes (`sun_path` holds 108 bytes with the final NUL).
    static let maxLength = 107

    /// The path in force for this process, resolved once (every verb, the client and the agent use it).
    static let current = resolve()

    /// Whether a socket exists at `path` (where the agent listens, if it runs).
    var socketExists: Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    /// The path from the environment (`current` keeps it for the process).
    private static func resolve() -> AgentSocketPath {
        if let given = environment("VAULTFILE_AGENT_SOCK") {
            let path = absolutePath(given)
            return AgentSocketPath(path: path, directory: parent(of: path), origin: .variable)
        }
        if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"), isDirectory(runtime) {
            let directory = (runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime) + "/vaultfile"
            return AgentSocketPath(path: directory + "/agent.sock", directory: directory, origin: .runtimeDirectory)
        }
        let directory = "/tmp/vaultfile-\(geteuid())"
        return AgentSocketPath(path: directory + "/agent.sock", directory: directory, origin: .temporaryDirectory)
    }

    // MARK: The folder

    /// Makes the folder (0700) when it is missing and checks it: the agent before it listens, and
    /// `unlock` before it starts one.
    func prepareDirectory() throws(CLIError) {
        try checkLength()
        if mkdir(directory, 0o700) == 0 { return }
        guard errno == EEXIST else { throw .io(operation: "creating the agent's folder", path: directory, errno: errno) }
        try checkDirectory()
    }

    /// Checks the folder when it exists (every verb before it asks the agent); false when it does not.
    func directoryExists() throws(CLIError) -> Bool {
        var info = stat()
        guard lstat(directory, &info) == 0 else { return false }
        try checkDirectory()
        return true
    }

    /// Refuses a default folder that is a symbolic link, not a folder, another user's, or open to
    /// group or others; a folder from `VAULTFILE_AGENT_SOCK` need only be a folder.
    private func checkDirectory() throws(CLIError) {
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw .io(operation: "checking the agent's folder", path: directory, errno: errno) }
        let kind = info.st_mode & S_IFMT
        if origin == .variable {
            guard kind == S_IFDIR || (kind == S_IFLNK && Self.isDirectory(directory)) else { throw refusal("is not a folder") }
            return
        }
        guard kind != S_IFLNK else { throw refusal("is a symbolic link, not a folder") }
        guard kind == S_IFDIR else { throw refusal("is not a folder") }
        switch PrivateFolderRule.breach(of: info, forbidden: 0o077) {
        case .owner(let uid)?: throw refusal("belongs to uid \(uid), not to you (uid \(geteuid()))")
        case .mode(let mode)?: throw refusal("has mode \(PrivateFolderRule.octal(mode)), which lets group or others in; it must be 0700")
        case nil: break
        }
    }

    private func refusal(_ problem: String) -> CLIError {
        let fix = origin == .variable ? "point VAULTFILE_AGENT_SOCK at a socket in a folder"
            : "remove \(directory) if it is not yours (or 'chmod 700' it if it is), or set VAULTFILE_AGENT_SOCK to a socket in a private folder"
        return .refused("refusing the agent's folder \(directory): it \(problem)",
                        hint: "\(fix); --no-agent or VAULTFILE_NO_AGENT=1 skips the agent")
    }

    private func checkLength() throws(CLIError) {
        guard path.utf8.count <= Self.maxLength else {
            throw .refused("the agent's socket path \(path) is \(path.utf8.count) bytes; a Unix socket path holds at most \(Self.maxLength)",
                           hint: "set VAULTFILE_AGENT_SOCK to a shorter path")
        }
    }

    // MARK: Private

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}

/// `path` made absolute against the working folder (the background agent works in `/`, and
/// `agent status` shows where a vault was seen; the agent never opens it).
func absolutePath(_ path: String) -> String {
    guard !path.hasPrefix("/") else { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    let cwd = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let relative = path.hasPrefix("./") ? String(path.dropFirst(2)) : path
    return (cwd == "/" ? "" : cwd) + "/" + relative
}
