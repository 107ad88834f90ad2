#if canImport(Glibc)
import Glibc
#endif

// MARK: - Folders that must be this user's

/// The rule for a folder whose contents decide what vaultfile allows (the agent's socket folder,
/// the state folder): it belongs to this user (the effective uid), and its mode gives group and
/// others none of the bits `forbidden`. Whoever else may change it could replace the agent's
/// socket, or delete the records that refuse an older copy (docs/SECURITY.md).
package enum PrivateFolderRule {
    /// What breaks the rule in a folder that `info` (`stat`) describes.
    package enum Breach: Equatable, Sendable {
        /// Another user owns it.
        case owner(uid_t)
        /// Its mode (the permission bits) has some of the forbidden bits.
        case mode(mode_t)
    }

    /// What breaks the rule in the folder `info` describes, the owner first; nil when nothing does.
    /// `forbidden` is `0o077` for the agent's folder (no access at all) and `0o022` for the state
    /// folder (no write).
    package static func breach(of info: stat, forbidden: mode_t) -> Breach? {
        if info.st_uid != geteuid() { return .owner(info.st_uid) }
        if info.st_mode & forbidden != 0 { return .mode(info.st_mode & 0o7777) }
        return nil
    }

    /// `mode` as `chmod` takes it: `0755`, `01777`.
    package static func octal(_ mode: mode_t) -> String { "0" + String(mode & 0o7777, radix: 8) }

    /// The user `uid` as a message names them: `uid 1001 (alice)`, or `uid 1001` when unknown.
    package static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
        return "uid \(uid) (\(String(cString: name)))"
    }
}
