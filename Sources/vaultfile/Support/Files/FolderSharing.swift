#if canImport(Glibc)
import Glibc
#endif

// MARK: - Folders other users may change

/// Whether users other than this one may rename or replace files in a folder: the test that
/// `--out` and `edit`'s private folder apply before they put plain text there.
///
/// The sticky bit (as on /tmp and /dev/shm) lets only a file's owner rename or remove it, so a
/// folder that has it is safe to share; root's folders are trusted. A folder writable by its
/// group is safe when nobody else is in the group: the user's own private group, the default
/// of Debian, Ubuntu and Fedora, whose umask 002 makes every new folder group-writable.
enum FolderSharing {
    /// What lets other users replace files in the folder `info` describes ("is writable by every
    /// user", "is writable by group staff", "belongs to user alice"), or nil when nothing does.
    /// `aclWriters` is what its access ACL grants (`FolderACL`), read by the caller.
    static func othersWhoMayReplaceFiles(in info: stat, aclWriters: String?) -> String? {
        guard info.st_mode & S_ISVTX == 0 else { return nil }
        if info.st_mode & S_IWOTH != 0 { return "is writable by every user" }
        if info.st_uid != 0 && info.st_uid != geteuid() { return "belongs to \(userName(info.st_uid))" }
        if info.st_mode & S_IWGRP != 0, groupHasOtherMembers(info.st_gid) { return "is writable by \(groupName(info.st_gid)), which has other members" }
        return aclWriters
    }

    /// What lets another user replace an entry of a folder, for a walk that looks an entry up in it.
    enum Problem: Equatable {
        /// The folder belongs to another user (not root), who can always replace its entries: a
        /// sticky bit binds everyone but the folder's owner, and the owner can take it away.
        case ownedByAnotherUser(String)
        /// Others may write to the folder ("is writable by every user", "… by group staff …") and
        /// it has no sticky bit.
        case sharedWithoutStickyBit(String)
        /// The folder is shared with the sticky bit (as /tmp) and the entry belongs to another user.
        case entryOfAnotherUser(String)
    }

    /// What lets a user other than this one replace an entry of the folder `info` describes (the
    /// entry `entryOwner` owns, when it is known), or nil when nothing does: the rule of every
    /// folder on the way of an `--out` file (`OutputFolder`). `aclWriters` is what the folder's
    /// access ACL grants (`FolderACL`).
    static func whoMayReplace(in info: stat, aclWriters: String?, entryOwner: uid_t?) -> Problem? {
        if info.st_uid != 0 && info.st_uid != geteuid() { return .ownedByAnotherUser(userName(info.st_uid)) }
        let shared: String? = info.st_mode & S_IWOTH != 0 ? "is writable by every user"
            : info.st_mode & S_IWGRP != 0 && groupHasOtherMembers(info.st_gid) ? "is writable by \(groupName(info.st_gid)), which has other members"
            : aclWriters
        guard let shared else { return nil }
        guard info.st_mode & S_ISVTX != 0 else { return .sharedWithoutStickyBit(shared) }
        if let entryOwner, entryOwner != 0, entryOwner != geteuid() { return .entryOfAnotherUser(userName(entryOwner)) }
        return nil
    }

    /// Whether a user other than this one is in group `gid`: a listed member, or a user whose
    /// primary group it is. An unknown group counts as shared.
    static func groupHasOtherMembers(_ gid: gid_t) -> Bool {
        guard let group = getgrgid(gid) else { return true }
        let me = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) }
        var member = group.pointee.gr_mem
        while let name = member?.pointee {
            if String(cString: name) != me { return true }
            member = member?.advanced(by: 1)
        }
        setpwent()
        defer { endpwent() }
        while let user = getpwent() {
            if user.pointee.pw_gid == gid && user.pointee.pw_uid != geteuid() { return true }
        }
        return false
    }

    private static func userName(_ uid: uid_t) -> String {
        getpwuid(uid).map { "user \(String(cString: $0.pointee.pw_name)) (uid \(uid))" } ?? "user id \(uid)"
    }

    private static func groupName(_ gid: gid_t) -> String {
        getgrgid(gid).map { "group \(String(cString: $0.pointee.gr_name)) (gid \(gid))" } ?? "group id \(gid)"
    }
}
