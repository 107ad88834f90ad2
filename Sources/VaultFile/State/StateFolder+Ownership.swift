#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - Whose the state folder is

extension StateFolder {
    /// A state folder that another user owns or that group or others may write: whoever can write
    /// it can delete the records that refuse an older copy or a retired key (exit 7), so a write
    /// is refused and a read goes on without the rollback check (docs/SECURITY.md).
    public struct Unsafe: Error, Equatable, Sendable, CustomStringConvertible {
        /// The folder.
        public let folder: String
        /// Its owner's uid.
        public let owner: UInt32
        /// Its permission bits.
        public let mode: UInt32
        /// Whether another user owns it (else it is this user's, with group or other write).
        public let othersOwn: Bool

        /// The folder `folder`, owned by uid `owner`, with permission bits `mode`.
        public init(folder: String, owner: UInt32, mode: UInt32, othersOwn: Bool) {
            self.folder = folder
            self.owner = owner
            self.mode = mode
            self.othersOwn = othersOwn
        }

        /// The folder, as a message names it with its owner and mode.
        public var description: String {
            "the state folder \(folder) \(why): whoever else can write it can delete the records that refuse older copies"
        }

        /// What is wrong, for a `Problem`'s reason: "it belongs to uid 65534 (nobody), …".
        public var reason: String { "it \(why): whoever else can write it can delete the records that refuse older copies" }

        /// Its owner and mode, and which of them breaks the rule.
        private var why: String {
            let mode = PrivateFolderRule.octal(mode_t(self.mode))
            let owner = PrivateFolderRule.userName(uid_t(self.owner))
            if othersOwn { return "belongs to \(owner), not to you (uid \(geteuid())), and has mode \(mode)" }
            let whose = uid_t(self.owner) == geteuid() ? "owned by you, \(owner)" : "owner \(owner)"
            return "has mode \(mode), which lets group or others write it (\(whose))"
        }

        /// What to do about it.
        public var fix: String {
            let own = othersOwn ? "set VAULTFILE_STATE_DIR to a folder of your own, or (as its owner) " : ""
            return own + "run 'chmod 700 \(folder)'"
        }
    }

    /// Why the folder may not be used (`PrivateFolderRule`: this user's, no write for group or
    /// others), or nil when it may, or does not exist yet (it is then made 0700). Follows a
    /// symbolic link: what counts is the folder the records go to.
    public func ownershipProblem() -> Unsafe? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        return unsafe(info)
    }

    /// The same rule, checked on a descriptor of the folder (opened following links, as the
    /// records are written): the check of the write path, once the folder exists.
    func ownershipProblemOfFolder() throws(Problem) -> Unsafe? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Problem(folder: path, reason: "opening \(path) failed: \(errnoText(errno))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Problem(folder: path, reason: "reading the status of \(path) failed: \(errnoText(errno))") }
        return unsafe(info)
    }

    /// What breaks the rule in the folder `info` describes, or nil.
    private func unsafe(_ info: stat) -> Unsafe? {
        guard let breach = PrivateFolderRule.breach(of: info, forbidden: 0o022) else { return nil }
        let othersOwn: Bool
        switch breach {
        case .owner: othersOwn = true
        case .mode: othersOwn = false
        }
        return Unsafe(folder: path, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode & 0o7777), othersOwn: othersOwn)
    }
}
