import VaultFile
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Plain text written to a file

/// The `--out` file of `export` and `inject`: checked, then written atomically with mode 0600.
///
/// Refused whatever the flags: the vault being read (same device and inode), any file that
/// begins with the vault magic, any path git treats as a vault (`GitAttributes`), and a file
/// in a folder another user may change that has no sticky bit (`FolderSharing`: another user
/// could swap the file or plant a link between the check and the write). A symbolic link at the path is
/// never followed: like any other existing file it is replaced only with `--overwrite`, and
/// then the link itself is replaced, never the file it points to.
enum PlaintextOutput {
    /// Throws `CLIError.refused`, saying why, unless plain text read from the vault at `vault` may go to `path`.
    ///
    /// Cheap: called before the password is asked for, and again just before the write.
    static func check(_ path: String, vault: String, overwrite: Bool) throws {
        var link = stat()
        let exists = lstat(path, &link) == 0
        if exists {
            var target = stat(), vaultFile = stat()
            let followed = stat(path, &target) == 0
            if stat(vault, &vaultFile) == 0, sameFile(link, vaultFile) || (followed && sameFile(target, vaultFile)) {
                throw CLIError.refused("\(path) is the vault being read; refusing to write plain text over it", hint: "choose another --out file")
            }
            // A device, a named pipe or a link to one (/dev/null, /dev/stdout) is never replaced by a
            // file of secrets, whatever the flags: as root that would last until the next boot.
            let kind = (followed ? target : link).st_mode & S_IFMT
            if kind != S_IFREG && kind != S_IFLNK {
                throw CLIError.refused(
                    "\(path) is not a regular file (a device, a named pipe, a socket or a folder); refusing to replace it with plain text",
                    hint: "to write to standard output, leave out --out")
            }
            // The vault's lock file: documented as empty, held by every writer.
            var locked = stat()
            if stat(vault, &vaultFile) == 0, path.hasSuffix(".lock"),
               stat(String(path.dropLast(5)), &locked) == 0, sameFile(locked, vaultFile) {
                throw CLIError.refused("\(path) is the lock file of the vault being read; refusing to write plain text there",
                                       hint: "choose another --out file")
            }
            if followed, (target.st_mode & S_IFMT) == S_IFREG, beginsWithVaultMagic(path) {
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
        let folder = folder(of: path)
        var folderInfo = stat()
        if stat(folder, &folderInfo) == 0, let others = FolderSharing.othersWhoMayReplaceFiles(in: folderInfo) {
            throw CLIError.refused(
                "refusing to write \(path): its folder \(folder) \(others) and has no sticky bit, so another user could swap the file or plant a symbolic link there",
                hint: "write into a folder that other users cannot write to")
        }
        if exists && !overwrite { throw refusedToReplace(path, isLink: (link.st_mode & S_IFMT) == S_IFLNK) }
    }

    /// Checks `path` again, then writes `bytes` there: mode 0600, atomically, replacing a symbolic link itself.
    static func write(_ bytes: [UInt8], to path: String, vault: String, overwrite: Bool) throws {
        try check(path, vault: vault, overwrite: overwrite)
        do throws(VaultError) {
            try AtomicFileWriter().write(bytes, to: path, mode: 0o600, finalLink: .replace, replacingExisting: overwrite)
        } catch {
            guard case .vaultExists = error else { throw error }
            // Made after the check: the hard link that puts the new file in place never replaces a name.
            var link = stat()
            throw refusedToReplace(path, isLink: lstat(path, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK)
        }
    }

    // MARK: Private

    private static func refusedToReplace(_ path: String, isLink: Bool) -> CLIError {
        isLink
            ? .refused("\(path) is a symbolic link; refusing to replace it", hint: "pass --overwrite to replace the link itself (the file it points to is never written)")
            : .refused("\(path) exists already; refusing to replace it", hint: "pass --overwrite to replace it")
    }

    private static func sameFile(_ one: stat, _ other: stat) -> Bool {
        one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }

    /// The folder a file at `path` is written in.
    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether the regular file at `path` begins with `\x89VAULT\r\n`; never blocks on a FIFO swapped in.
    private static func beginsWithVaultMagic(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: VaultHeader.magic.count)
        let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, $0.count, 0) }
        return count == head.count && head == VaultHeader.magic
    }
}
