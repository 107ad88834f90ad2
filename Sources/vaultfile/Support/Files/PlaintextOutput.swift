import VaultFile
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Plain text written to a file

/// The `--out` file of `export` and `inject`: checked, then written atomically with mode 0600.
///
/// Its folder is reached one component at a time and held open (`OutputFolder`): a path through
/// a folder another user may change is refused (a sticky folder such as /tmp is fine when the
/// component in it is this user's or root's), and the write is made relative to the folder
/// checked, so a symbolic link swapped into the path afterwards cannot redirect it. Refused
/// whatever the flags: the vault being read (same device and inode), any file that begins with
/// the vault magic, and any path git treats as a vault (`GitAttributes`). A symbolic link at the
/// path is never followed: like any other existing file it is replaced only with `--overwrite`,
/// and then the link itself is replaced, never the file it points to.
final class PlaintextOutput {
    /// The path as given.
    let path: String
    /// The checked folder, open until the write.
    private let folder: OutputFolder
    /// The vault being read.
    private let vault: String
    /// Whether an existing file may be replaced.
    private let overwrite: Bool

    /// Walks and checks the path: cheap, made before the password is asked for. Throws
    /// `CLIError.refused`, saying why, unless plain text read from the vault at `vault` may go to `path`.
    init(_ path: String, vault: String, overwrite: Bool) throws {
        self.path = path
        self.vault = vault
        self.overwrite = overwrite
        folder = try OutputFolder(for: path)
        try check()
    }

    /// Checks the file again, in the folder held open, then writes `bytes` there: mode 0600,
    /// atomically, replacing a symbolic link itself.
    func write(_ bytes: [UInt8]) throws {
        try write { (output) throws(VaultError) in try output.write(bytes) }
    }

    /// `write(_:)` of what `contents` writes, in order, as it makes it: the file is never held whole.
    func write(_ contents: (any SealedOutput) throws(VaultError) -> Void) throws {
        try folder.check(writing: path)
        try check()
        do throws(VaultError) {
            try AtomicFileWriter().write(in: folder.descriptor, name: folder.name, path: path, mode: 0o600, replacingExisting: overwrite, contents)
        } catch {
            guard case .vaultExists = error else { throw error }
            // Made after the check: the hard link that puts the new file in place never replaces a name.
            throw Self.refusedToReplace(path, isLink: status(following: false).map { $0.st_mode & S_IFMT == S_IFLNK } ?? false)
        }
    }

    // MARK: Private

    /// The checks of the file itself, by its name in the folder held open.
    private func check() throws {
        let link = status(following: false)
        if let link {
            let target = status(following: true)
            var vaultFile = stat()
            if stat(vault, &vaultFile) == 0, Self.sameFile(link, vaultFile) || target.map({ Self.sameFile($0, vaultFile) }) == true {
                throw CLIError.refused("\(path) is the vault being read; refusing to write plain text over it", hint: "choose another --out file")
            }
            // A device, a named pipe or a link to one (/dev/null, /dev/stdout) is never replaced by a
            // file of secrets, whatever the flags: as root that would last until the next boot.
            let kind = (target ?? link).st_mode & S_IFMT
            if kind != S_IFREG && kind != S_IFLNK {
                throw CLIError.refused(
                    "\(path) is not a regular file (a device, a named pipe, a socket or a folder); refusing to replace it with plain text",
                    hint: "to write to standard output, leave out --out")
            }
            // The vault's lock file: documented as empty, held by every writer.
            var locked = stat()
            if stat(vault, &vaultFile) == 0, folder.name.hasSuffix(".lock"),
               fstatat(folder.descriptor, String(folder.name.dropLast(5)), &locked, 0) == 0, Self.sameFile(locked, vaultFile) {
                throw CLIError.refused("\(path) is the lock file of the vault being read; refusing to write plain text there",
                                       hint: "choose another --out file")
            }
            if let target, target.st_mode & S_IFMT == S_IFREG, beginsWithVaultMagic() {
                throw CLIError.refused(
                    "\(path) is a vaultfile vault; refusing to write plain text over it",
                    hint: "choose another --out file; no option replaces a vault with plain text")
            }
        }
        if let marking = GitAttributes.vaultMarking(of: path) {
            throw CLIError.refused(
                "\(path) is a vault for git (\(marking.file) gives it \(marking.attribute)); refusing to write plain text there",
                hint: "choose another --out file; git would take plain text there for an encrypted vault")
        }
        if let link, !overwrite { throw Self.refusedToReplace(path, isLink: link.st_mode & S_IFMT == S_IFLNK) }
    }

    /// The status of the file in the folder held open (of a link itself unless `following`), or nil.
    private func status(following: Bool) -> stat? {
        var info = stat()
        return fstatat(folder.descriptor, folder.name, &info, following ? 0 : AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    private static func refusedToReplace(_ path: String, isLink: Bool) -> CLIError {
        isLink
            ? .refused("\(path) is a symbolic link; refusing to replace it", hint: "pass --overwrite to replace the link itself (the file it points to is never written)")
            : .refused("\(path) exists already; refusing to replace it", hint: "pass --overwrite to replace it")
    }

    private static func sameFile(_ one: stat, _ other: stat) -> Bool {
        one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }

    /// Whether the regular file begins with `\x89VAULT\r\n`; never blocks on a FIFO swapped in.
    private func beginsWithVaultMagic() -> Bool {
        let fd = openat(folder.descriptor, folder.name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: VaultHeader.magic.count)
        let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, 0) }
        return count == head.count && head == VaultHeader.magic
    }
}
