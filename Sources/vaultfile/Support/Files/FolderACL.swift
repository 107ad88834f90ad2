#if canImport(Glibc)
import Glibc
#endif
import CPlatform

// MARK: - A folder's access ACL

/// The POSIX access ACL of a folder (`system.posix_acl_access`), read for the one question
/// `FolderSharing` asks: does it let a user other than this one write the folder?
///
/// With an ACL, a folder's group permission bits show the ACL's mask, not who may write it: a
/// folder of mode 0770 can grant write to any named user or group. The kernel's layout (Linux's
/// `posix_acl_xattr.h`): a 4-byte little-endian version (2), then entries of a 2-byte tag, a
/// 2-byte permission set and a 4-byte id.
enum FolderACL {
    /// The tags of the entries (`acl_tag_t`).
    private enum Tag: UInt16 {
        case userObject = 1, user = 2, groupObject = 4, group = 8, mask = 16, other = 32
    }

    /// The write bit of an entry's permission set.
    private static let write: UInt16 = 2

    /// One entry: its tag, permission bits and user or group id.
    struct Entry: Equatable {
        var tag: UInt16
        var permissions: UInt16
        var id: UInt32
    }

    /// What lets another user write the folder open as `descriptor` (an `O_PATH` descriptor too)
    /// through its ACL, or nil when it has no ACL or its ACL grants no such write.
    static func otherWriters(ofDescriptor descriptor: Int32) -> String? {
        readFinding { buffer, size in getxattr("/proc/self/fd/\(descriptor)", "system.posix_acl_access", buffer, size) }
    }

    /// The same for the folder at `path`, without following a last symbolic link.
    static func otherWriters(atPath path: String) -> String? {
        readFinding { buffer, size in lgetxattr(path, "system.posix_acl_access", buffer, size) }
    }

    /// The entries of an ACL as the kernel stores it, or nil when it is malformed.
    static func parse(_ bytes: [UInt8]) -> [Entry]? {
        guard bytes.count >= 4, (bytes.count - 4) % 8 == 0, littleEndian(bytes, 0, 4) == 2 else { return nil }
        var entries: [Entry] = []
        for start in stride(from: 4, to: bytes.count, by: 8) {
            entries.append(Entry(tag: UInt16(littleEndian(bytes, start, 2)), permissions: UInt16(littleEndian(bytes, start + 2, 2)),
                                 id: UInt32(littleEndian(bytes, start + 4, 4))))
        }
        return entries
    }

    /// What in `entries` lets a user other than `me` write the folder ("lets user daemon (uid 1)
    /// write it"), or nil: a named user other than `me`, or a named group with another member
    /// (`hasOtherMembers`), whose write the mask lets through. An entry of an unknown tag, or
    /// named entries without a mask, make the ACL malformed.
    static func otherWriters(in entries: [Entry], me: uid_t, hasOtherMembers: (gid_t) -> Bool) -> String? {
        guard entries.allSatisfy({ Tag(rawValue: $0.tag) != nil }) else { return malformed }
        let named = entries.filter { $0.tag == Tag.user.rawValue || $0.tag == Tag.group.rawValue }
        guard !named.isEmpty else { return nil }
        guard let mask = entries.first(where: { $0.tag == Tag.mask.rawValue }) else { return malformed }
        guard mask.permissions & write != 0 else { return nil }
        for entry in named where entry.permissions & write != 0 {
            if entry.tag == Tag.user.rawValue, entry.id != me { return "has an access ACL that lets \(userName(entry.id)) write it" }
            if entry.tag == Tag.group.rawValue, hasOtherMembers(entry.id) {
                return "has an access ACL that lets \(groupName(entry.id)), which has other members, write it"
            }
        }
        return nil
    }

    // MARK: Private

    private static let malformed = "has an access ACL that vaultfile cannot read (see 'getfacl')"

    /// Reads the ACL with `get` (size 0 asks for its size) and judges it.
    private static func readFinding(_ get: (UnsafeMutableRawPointer?, Int) -> Int) -> String? {
        let size = get(nil, 0)
        guard size >= 0 else { return errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP ? nil : malformed }
        guard size <= 65_536 else { return malformed }
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { get($0.baseAddress, $0.count) }
        guard read >= 0, read <= size, let entries = parse(Array(bytes[..<read])) else { return malformed }
        return otherWriters(in: entries, me: geteuid(), hasOtherMembers: FolderSharing.groupHasOtherMembers)
    }

    private static func littleEndian(_ bytes: [UInt8], _ start: Int, _ count: Int) -> UInt64 {
        (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[start + $1]) << (8 * UInt64($1)) }
    }

    private static func userName(_ uid: uid_t) -> String {
        getpwuid(uid).map { "user \(String(cString: $0.pointee.pw_name)) (uid \(uid))" } ?? "user id \(uid)"
    }

    private static func groupName(_ gid: gid_t) -> String {
        getgrgid(gid).map { "group \(String(cString: $0.pointee.gr_name)) (gid \(gid))" } ?? "group id \(gid)"
    }
}
