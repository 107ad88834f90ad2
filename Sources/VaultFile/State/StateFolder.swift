#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - The state folder

/// The folder where vaultfile keeps small records about the vaults this machine has opened:
/// `$VAULTFILE_STATE_DIR`, else `$XDG_STATE_HOME/vaultfile`, else `~/.local/state/vaultfile`.
///
/// One small file per record (man/vaultfile.1, FILES), so that each is replaced whole and no
/// record shares a file with another. The folder is created 0700 on the first write, records
/// are 0600 and written by `AtomicFileWriter` while the folder's lock (`state.lock`) is held,
/// so several vaultfile processes at once never lose a record. Nothing secret is stored.
///
/// A folder that cannot be created, read or written never stops a command: every operation
/// reports a `Problem`, which the command line shows once as a warning.
public struct StateFolder: Sendable, Equatable {
    /// The folder.
    public let path: String

    /// The name of the lock file inside the folder.
    static let lockName = "state.lock"
    /// The largest record read; a longer file is not a record this build wrote.
    public static let maxRecordLength = 4096
    /// How long a write waits for another vaultfile process to release the folder's lock, in seconds.
    static let lockTimeout = 10.0

    /// The folder at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The folder the environment names: `stateDirectory` (`$VAULTFILE_STATE_DIR`), else
    /// `xdgStateHome/vaultfile` when that is absolute (the XDG rule), else `home/.local/state/vaultfile`;
    /// nil when none of them is known.
    public static func resolve(stateDirectory: String?, xdgStateHome: String?, home: String?) -> StateFolder? {
        if let stateDirectory, !stateDirectory.isEmpty { return StateFolder(path: stateDirectory) }
        if let xdgStateHome, xdgStateHome.hasPrefix("/") { return StateFolder(path: xdgStateHome + "/vaultfile") }
        if let home, !home.isEmpty { return StateFolder(path: home + "/.local/state/vaultfile") }
        return nil
    }

    // MARK: Problems

    /// Why the folder could not be used; a warning, never a failure of the command.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The state folder.
        public let folder: String
        /// What failed, with the system's reason.
        public let reason: String

        /// The problem `reason` with the folder `folder`.
        public init(folder: String, reason: String) {
            self.folder = folder
            self.reason = reason
        }

        public var description: String { "the state folder \(folder) cannot be used: \(reason)" }
    }

    private func problem(_ operation: String, _ path: String, errno code: Int32) -> Problem {
        Problem(folder: self.path, reason: "\(operation) \(path) failed: \(errnoText(code))")
    }

    private func problem(_ error: VaultError) -> Problem {
        Problem(folder: path, reason: error.description)
    }

    // MARK: Records

    /// The bytes of record `name` (at most `limit` + 1 of them), or nil when there is none.
    ///
    /// Takes no lock: records are replaced whole by rename, so a reader sees an old or a new one.
    public func read(_ name: String, limit: Int = maxRecordLength) throws(Problem) -> [UInt8]? {
        let file = recordPath(name)
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            // No folder or no record yet (or a file where the folder should be, which the next
            // write reports): nothing recorded.
            if code == ENOENT || code == ENOTDIR { return nil }
            throw problem("reading", file, errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw problem("reading the status of", file, errno: errno) }
        // Anything but a regular file (a FIFO someone made, say) is not a record.
        guard info.st_mode & S_IFMT == S_IFREG else { return [] }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                throw problem("reading", file, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// Replaces record `name` with what `change` makes of its current bytes (nil: no record yet);
    /// `change` returns nil to leave it as it is. Returns whether the record was written.
    ///
    /// Creates the folder when missing, then holds its lock from the read to the rename, so that
    /// two processes updating one record each see the other's result.
    @discardableResult
    public func update(_ name: String, limit: Int = maxRecordLength, _ change: ([UInt8]?) -> [UInt8]?) throws(Problem) -> Bool {
        try createIfMissing()
        // Checked again on the folder written into, once it exists: one that was missing at the
        // command's check may have been made since by another user (during a password prompt).
        if let unsafe = try ownershipProblemOfFolder() { throw Problem(folder: path, reason: unsafe.reason + "; nothing was recorded there") }
        let lock: FileLock
        do {
            lock = try FileLock(path: path + "/" + Self.lockName, timeout: Self.lockTimeout)
        } catch {
            throw problem(error)
        }
        defer { lock.release() }
        guard let bytes = change(try read(name, limit: limit)) else { return false }
        let writer = AtomicFileWriter()
        let destination = AtomicFileWriter.Destination(path: recordPath(name), finalLink: .replace)
        // Under the lock no other writer owns a temporary file of this record: one left is a killed writer's.
        writer.removeStaleTemporaries(of: destination)
        do {
            try writer.write(to: destination, mode: 0o600, replacing: .any, keepingOwner: false) { output throws(VaultError) in
                try output.write(bytes)
            }
        } catch {
            throw problem(error)
        }
        return true
    }

    /// The names of the records in the folder that end in `suffix` (none when there is no folder).
    func recordNames(endingIn suffix: String) throws(Problem) -> [String] {
        guard let folder = opendir(path) else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return [] }
            throw problem("listing", path, errno: code)
        }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(suffix) { names.append(name) }
        }
        return names.sorted()
    }

    /// The path of record `name`.
    func recordPath(_ name: String) -> String { path + "/" + name }

    // MARK: Creating the folder

    /// Creates the folder and any missing folder above it, each 0700 (as the XDG base directory
    /// specification asks); an existing folder is left as it is.
    func createIfMissing() throws(Problem) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw problem("using", path, errno: ENOTDIR) }
            return
        }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 {
                // A umask may have taken bits away; the folder is meant to be the user's alone, no less usable.
                _ = chmod(prefix, 0o700)
            } else {
                let code = errno
                guard code == EEXIST else { throw problem("creating", prefix, errno: code) }
            }
        }
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw problem("using", path, errno: ENOTDIR) }
    }
}
