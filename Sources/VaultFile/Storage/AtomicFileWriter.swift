#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import KDF
import VaultFormat
import VaultModel

// MARK: - Writing a whole file atomically

/// Writes whole files so that a reader sees the old file or the new one, never a mix.
///
/// A temporary file is created in the destination's folder (exclusive create, no symlink
/// followed, mode 0600), given the replaced file's owner when asked, its final mode, written
/// in full and synced; it is then renamed over the destination (or hard-linked into place
/// when nothing may be replaced) and the folder is synced. On any failure the destination
/// is left as it was and the temporary file is removed. Never Foundation's `.atomic` writes,
/// which do not sync. While it exists, the temporary file's name is registered with
/// `TemporaryFiles`, so that the executable's signal handler can remove it (`SignalCleanup`).
///
/// One parameter says what a symbolic link at the destination means: vault writes follow it
/// (a symlinked vault path replaces the link's target), plain-text outputs replace the link
/// itself, so that a link planted by someone else never redirects a write.
public struct AtomicFileWriter: Sendable {
    /// What a write does when the last component of its path is a symbolic link.
    public enum FinalLink: Sendable {
        /// Replace the file the link points to; the link stays (vaults kept behind a link).
        case follow
        /// Replace the link itself; the file it points to is neither opened nor changed (plain-text outputs).
        case replace
    }

    /// The system calls used for writing (replaced in tests to inject failures).
    let system: SystemCalls

    /// A writer that makes the real system calls.
    public init() {
        self.init(system: .live)
    }

    /// A writer that makes the system calls of `system`.
    init(system: SystemCalls) {
        self.system = system
    }

    /// Writes `bytes` to `path` with permission bits `mode`.
    ///
    /// - Parameters:
    ///   - finalLink: whether a symbolic link at `path` is followed or replaced itself.
    ///   - replacingExisting: whether a file already at the destination may be replaced; when
    ///     not, an existing one (a dangling link included) fails the write with `vaultExists`.
    ///   - keepingOwner: give the new file the owner and group of the file it replaces. Root
    ///     always can; when root's `fchown` fails, nothing is written and `io` is thrown. Another
    ///     user cannot give a file away: the new file is theirs, with the old group when they
    ///     belong to it.
    public func write(
        _ bytes: [UInt8], to path: String, mode: mode_t = 0o600,
        finalLink: FinalLink, replacingExisting: Bool = true, keepingOwner: Bool = false
    ) throws(VaultError) {
        try write(
            to: Destination(path: path, finalLink: finalLink), mode: mode, replacing: replacingExisting ? .any : .none,
            keepingOwner: keepingOwner
        ) { output throws(VaultError) in try output.write(bytes) }
    }

    /// Writes `bytes` as the file `name` of the folder open as `folder` (a descriptor the caller
    /// keeps open, `O_PATH` will do), with permission bits `mode`: every step (the temporary file,
    /// the rename or hard link, the folder sync) is made relative to that descriptor, so a symbolic
    /// link swapped into the path after the caller checked the folder cannot redirect the write.
    /// A symbolic link at `name` is replaced itself, never followed. `path` names the file in errors.
    ///
    /// - Parameter replacingExisting: as in `write(_:to:mode:finalLink:replacingExisting:keepingOwner:)`.
    public func write(
        _ bytes: [UInt8], in folder: Int32, name: String, path: String, mode: mode_t = 0o600, replacingExisting: Bool = true
    ) throws(VaultError) {
        try write(to: Destination(folder: folder, name: name, path: path), mode: mode, replacing: replacingExisting ? .any : .none,
                  keepingOwner: false) { output throws(VaultError) in try output.write(bytes) }
    }

    /// `write(_:in:name:path:mode:replacingExisting:)` of what `contents` writes, in order, as it
    /// makes it (a KDBX export hands over one block at a time): the file is held nowhere whole.
    package func write(
        in folder: Int32, name: String, path: String, mode: mode_t = 0o600, replacingExisting: Bool = true,
        _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) {
        try write(to: Destination(folder: folder, name: name, path: path), mode: mode, replacing: replacingExisting ? .any : .none,
                  keepingOwner: false, contents)
    }

    // MARK: The steps of one write

    /// Which existing file a write may replace.
    enum Replacement {
        /// None: an existing file fails the write with `vaultExists` (a hard link never replaces a name).
        case none
        /// Whatever file is there.
        case any
        /// Only the version of the file that `identity` names; another fails the write with `changedOnDisk`.
        case only(FileIdentity)
    }

    /// Where one write lands: the file replaced, its folder, and the prefix of temporary files.
    ///
    /// Resolved once per write, so that every step works on the same file even if a symlink changes.
    struct Destination {
        /// The path as the caller gave it (errors name it).
        let path: String
        /// The name replaced: the symlink's target when `path` is a symlink that is followed, else `path`.
        let target: String
        /// The folder of `target`, where the temporary file is made.
        let directory: String
        /// The name every temporary file of this destination begins with.
        let temporaryPrefix: String
        /// The folder held open by the caller, when every step is made relative to it (nil: by path).
        let folder: Int32?
        /// The last component of `target`: the name replaced in `folder`.
        let name: String

        init(path: String, finalLink: FinalLink) {
            // Only a link at the last component is in question: rename(2) and link(2) never follow
            // one there, so unless it is resolved here the name itself is replaced. Links in the
            // folders above lead to the folder the user named either way.
            let target = finalLink == .follow ? Self.resolved(path) : path
            let slash = target.lastIndex(of: "/")
            self.path = path
            self.target = target
            directory = slash.map { $0 == target.startIndex ? "/" : String(target[..<$0]) } ?? "."
            name = slash.map { String(target[target.index(after: $0)...]) } ?? target
            temporaryPrefix = ".\(name).vaultfile-tmp-"
            folder = nil
        }

        /// The file `name` of the folder open as `folder`; `path` names it in errors.
        init(folder: Int32, name: String, path: String) {
            self.path = path
            target = path
            let slash = path.lastIndex(of: "/")
            directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            self.name = name
            temporaryPrefix = ".\(name).vaultfile-tmp-"
            self.folder = folder
        }

        /// `path` with every symlink resolved, or `path` itself when it cannot be resolved (a new file).
        static func resolved(_ path: String) -> String {
            guard let resolved = realpath(path, nil) else { return path }
            defer { free(resolved) }
            return String(cString: resolved)
        }
    }

    /// Writes what `contents` writes to `destination` with permission bits `mode`, replacing what
    /// `replacing` allows; with `keepingOwner`, the new file gets the owner of the file it replaces.
    func write(
        to destination: Destination, mode: mode_t, replacing: Replacement, keepingOwner: Bool,
        _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) {
        let owner = keepingOwner ? destination.status(following: false).map(FileOwner.init) : nil
        let (temporary, registration) = try writeTemporary(mode: mode, owner: owner, in: destination, contents)
        // Withdrawn as soon as the name is gone (renamed into place, or removed), before the folder's
        // sync: until then a signal handler may remove it (`TemporaryFiles`). A signal after that
        // still ends the process with 128 + the signal, though the file is whole in place.
        do throws(VaultError) {
            try placeTemporary(temporary, at: destination, replacing: replacing)
        } catch {
            TemporaryFiles.withdraw(registration)
            throw error
        }
        TemporaryFiles.withdraw(registration)
        try syncDirectory(of: destination)
    }

    /// Puts the written temporary file in place as `replacing` allows: hard link (then the
    /// temporary name is unlinked) or rename.
    private func placeTemporary(_ temporary: String, at destination: Destination, replacing: Replacement) throws(VaultError) {
        switch replacing {
        case .none:
            // The temporary name goes whether the link worked or not: on success the file lives on under its new name.
            defer { _ = unlink(temporary, in: destination) }
            if link(temporary, in: destination) != 0 {
                let code = errno
                if code == EEXIST { throw .vaultExists(path: destination.path) }
                // A file system without hard links (FAT on a USB stick): look, then rename. Only a
                // file made in the instant between the two could be replaced.
                guard code == EPERM || code == EOPNOTSUPP else { throw .io(operation: "creating", path: destination.path, errno: code) }
                if destination.status(following: false) != nil { throw .vaultExists(path: destination.path) }
                try rename(temporary, over: destination, operation: "renaming the new file over")
            }
        case .any:
            try rename(temporary, over: destination, operation: "renaming the new file over")
        case .only(let identity):
            guard let info = destination.status(following: true), FileIdentity(info) == identity else {
                _ = unlink(temporary, in: destination)
                throw .changedOnDisk(path: destination.path)
            }
            try rename(temporary, over: destination, operation: "renaming the new vault over")
        }
    }

    /// Removes temporary files that a crashed writer left for `destination`.
    ///
    /// Call only where no live writer can own them (under the vault's lock).
    func removeStaleTemporaries(of destination: Destination) {
        guard let handle = opendir(destination.directory) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(destination.temporaryPrefix) { _ = Glibc.unlink(destination.directory + "/" + name) }
        }
    }

    // MARK: Private

    /// Creates a temporary file beside the destination, gives it `owner` and `mode`, has `contents`
    /// write it, and syncs it; returns its name and its registration with `TemporaryFiles`, made
    /// before the file exists (the caller withdraws it once the name is gone).
    private func writeTemporary(
        mode: mode_t, owner: FileOwner?, in destination: Destination, _ contents: (any SealedOutput) throws(VaultError) -> Void
    ) throws(VaultError) -> (name: String, registration: Int?) {
        let suffix = randomBytes(count: 8).map { String($0, radix: 16) }.joined()
        let temporary = destination.temporaryPrefix + suffix
        let shown = destination.directory + "/" + temporary
        let registration = destination.folder.map { TemporaryFiles.register(folder: $0, name: temporary) }
            ?? TemporaryFiles.register(folder: AT_FDCWD, name: shown)
        let fd = open(temporary, in: destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            TemporaryFiles.withdraw(registration)
            throw .io(operation: "creating a temporary file in", path: destination.directory, errno: code)
        }
        func discard(_ error: VaultError) -> VaultError {
            _ = system.close(fd)
            _ = unlink(temporary, in: destination)
            TemporaryFiles.withdraw(registration)
            return error
        }
        // The owner before the mode: changing the owner may clear the set-user-ID and set-group-ID bits.
        if let owner {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw discard(.io(operation: "reading the status of", path: shown, errno: errno)) }
            if FileOwner(info) != owner && system.fchown(fd, owner.user, owner.group) != 0 {
                let code = errno
                if code == EPERM && geteuid() != 0 {
                    // Only root can give a file away. Another user allowed to replace the file (a vault
                    // in a folder shared with a group) becomes its owner, as with every editor that
                    // saves by rename, and as before this check existed; the group is kept when the
                    // writer belongs to it.
                    _ = system.fchown(fd, uid_t.max, owner.group)
                } else {
                    // Root (or any other failure): refused rather than handing the file to whoever ran the command.
                    let operation = "keeping the owner (uid \(owner.user)) and group (gid \(owner.group)) of"
                    throw discard(.io(operation: operation, path: destination.target, errno: code))
                }
            }
        }
        guard system.fchmod(fd, mode) == 0 else { throw discard(.io(operation: "setting the mode of", path: shown, errno: errno)) }
        do throws(VaultError) {
            try contents(TemporaryFile(fd: fd, path: shown, system: system))
        } catch {
            throw discard(error)
        }
        guard system.fsync(fd) == 0 else { throw discard(.io(operation: "syncing", path: shown, errno: errno)) }
        guard system.close(fd) == 0 else {
            let code = errno
            _ = unlink(temporary, in: destination)
            TemporaryFiles.withdraw(registration)
            throw .io(operation: "closing", path: shown, errno: code)
        }
        return (temporary, registration)
    }

    /// Renames the temporary file `temporary` over the destination's target, removing it if that fails.
    private func rename(_ temporary: String, over destination: Destination, operation: String) throws(VaultError) {
        let renamed = destination.folder.map { system.renameat($0, temporary, destination.name) }
            ?? system.rename(destination.directory + "/" + temporary, destination.target)
        guard renamed == 0 else {
            let code = errno
            _ = unlink(temporary, in: destination)
            throw .io(operation: operation, path: destination.target, errno: code)
        }
    }

    /// Syncs the destination's folder, so that the rename survives a power loss.
    private func syncDirectory(of destination: Destination) throws(VaultError) {
        // A folder held open may be an O_PATH descriptor, which cannot be synced: "." through it can.
        let fd = destination.folder.map { system.openat($0, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }
            ?? system.open(destination.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw .notDurable(path: destination.path, errno: errno) }
        defer { _ = system.close(fd) }
        guard system.fsync(fd) == 0 else { throw .notDurable(path: destination.path, errno: errno) }
    }

    // MARK: Names in the destination's folder

    /// Opens the temporary file `name` of the destination's folder (mode 0600).
    private func open(_ name: String, in destination: Destination, _ flags: Int32) -> Int32 {
        destination.folder.map { system.openat($0, name, flags, 0o600) } ?? system.open(destination.directory + "/" + name, flags, 0o600)
    }

    /// Hard-links the temporary file `name` to the destination's target (never replacing a name).
    private func link(_ name: String, in destination: Destination) -> Int32 {
        destination.folder.map { system.linkat($0, name, destination.name) } ?? system.link(destination.directory + "/" + name, destination.target)
    }

    /// Removes the temporary file `name` of the destination's folder.
    private func unlink(_ name: String, in destination: Destination) -> Int32 {
        destination.folder.map { system.unlinkat($0, name) } ?? system.unlink(destination.directory + "/" + name)
    }
}

extension AtomicFileWriter.Destination {
    /// The status of the target (the link itself unless `following`), or nil when there is none.
    func status(following: Bool) -> stat? {
        var info = stat()
        let found = folder.map { fstatat($0, name, &info, following ? 0 : AT_SYMLINK_NOFOLLOW) == 0 }
            ?? (following ? stat(target, &info) == 0 : lstat(target, &info) == 0)
        return found ? info : nil
    }
}

// MARK: - Writing the temporary file

/// The temporary file of an atomic write, written as the bytes are produced.
private final class TemporaryFile: SealedOutput {
    private let fd: Int32
    private let path: String
    private let system: SystemCalls

    init(fd: Int32, path: String, system: SystemCalls) {
        self.fd = fd
        self.path = path
        self.system = system
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        var written = 0
        while written < bytes.count {
            let count = system.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "writing", path: path, errno: errno)
            }
            // A regular file that takes no bytes and reports no error: treat as an I/O error, never loop.
            if count == 0 { throw .io(operation: "writing", path: path, errno: EIO) }
            written += count
        }
    }

    /// `pwrite(2)` over bytes already written (a signed seal's header, written last).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(VaultError) {
        var written = 0
        while written < bytes.count {
            let count = pwrite(fd, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "writing", path: path, errno: errno)
            }
            if count == 0 { throw .io(operation: "writing", path: path, errno: EIO) }
            written += count
        }
    }
}
