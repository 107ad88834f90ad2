import SecureMemory
import VaultModel

// MARK: - Which entry answers a git credential request

/// The entries of git credentials: `git/HOST` and `git/HOST/PATH…` (the value is the password,
/// the field `username` the user name), and `git/USER@HOST[/PATH…]` for several users of one host,
/// written as in a URL (`https://USER@HOST/PATH`). HOST carries `:PORT` when the port is not the
/// protocol's default (a default port written out is ignored); hosts compare without case. An entry
/// serves `https` unless its field `protocol` names another (`http`, sent in clear, only when said).
///
/// The answer to a request is its most specific match: the longest path (a request carries a
/// path only with git's `credential.useHttpPath`; a final `.git` is ignored on either side), then an
/// entry whose user is the request's over one without a user. A request with a `username` takes
/// only entries of that user or of no user; one without takes any, but when the best candidates
/// belong to different users none is chosen (`ambiguousUsers`), so git asks.
public enum GitCredentialEntries {
    /// Where git credentials live.
    public static let folder = "git/"

    /// An entry that answers a request.
    public struct Match: Equatable, Sendable {
        /// The entry's name.
        public var name: String
        /// Its user name: from the name (`USER@`), else its field `username`, else nil.
        public var username: String?
        /// How many path components it matched.
        var depth: Int
        /// Whether its user is the request's.
        var userMatched: Bool
    }

    /// What a lookup found.
    public enum Lookup: Equatable, Sendable {
        /// The entry that answers.
        case found(Match)
        /// Several users match equally and the request names none: these are their names.
        case ambiguousUsers([String])
        /// No entry matches.
        case none
    }

    /// The default port of each protocol git asks credentials for.
    static let defaultPorts: [String: String] = [
        "https": "443", "http": "80", "ftps": "990", "ftp": "21", "smtps": "465", "smtp": "25", "imaps": "993", "imap": "143",
    ]

    /// `host` lowercased, without `:PORT` when PORT is `protocolName`'s default.
    static func normalizedHost(_ host: String, protocolName: String) -> String {
        let lowered = host.lowercased()
        if let port = defaultPorts[protocolName], lowered.hasSuffix(":" + port) {
            return String(lowered.utf8.dropLast(port.utf8.count + 1))!
        }
        return lowered
    }

    /// The components of a request's path (empty ones dropped).
    static func pathComponents(_ path: String?) -> [Substring] {
        (path ?? "").split(separator: "/", omittingEmptySubsequences: true)
    }

    /// Whether two path components are one (a final `.git` ignored on either side).
    private static func sameComponent(_ entry: Substring, _ request: Substring) -> Bool {
        entry == request || entry + ".git" == request || entry == request + ".git"
    }

    // MARK: Lookup

    /// The entry that answers `request`, as the type's comment says.
    public static func lookUp(_ request: GitCredentialRequest, in vault: Vault) -> Lookup {
        guard let protocolName = request.protocolName, let host = request.host, !host.isEmpty else { return .none }
        let wantedHost = normalizedHost(host, protocolName: protocolName)
        let wantedPath = pathComponents(request.path)
        var candidates: [Match] = []
        for name in vault.names(withPrefix: folder) {
            var components = name.utf8.dropFirst(folder.utf8.count).split(separator: UInt8(ascii: "/")).map { Substring($0) }
            guard !components.isEmpty else { continue }
            let first = components.removeFirst()
            var user: String?, hostPart = first
            // USER@HOST: a user name may hold '@' itself (an e-mail address); a host never does.
            if let at = first.lastIndex(of: "@") {
                user = String(first[..<at])
                hostPart = first[first.index(after: at)...]
            }
            let entryProtocol = field("protocol", of: name, in: vault)?.lowercased() ?? "https"
            guard entryProtocol == protocolName, normalizedHost(String(hostPart), protocolName: protocolName) == wantedHost else { continue }
            guard components.count <= wantedPath.count,
                  zip(components, wantedPath).allSatisfy({ sameComponent($0, $1) }) else { continue }
            if user == nil { user = field("username", of: name, in: vault) }
            if let wanted = request.username, let user, user != wanted { continue }
            candidates.append(Match(name: name, username: user, depth: components.count,
                                    userMatched: request.username != nil && user == request.username))
        }
        return best(of: candidates, requestHasUser: request.username != nil)
    }

    /// The most specific of `candidates`: the deepest path, then the request's user; among equals,
    /// one user's entries (the first by name), or `ambiguousUsers` when they belong to several.
    private static func best(of candidates: [Match], requestHasUser: Bool) -> Lookup {
        guard let depth = candidates.map(\.depth).max() else { return .none }
        var top = candidates.filter { $0.depth == depth }
        if top.contains(where: \.userMatched) { top = top.filter(\.userMatched) }
        let users = Set(top.map { $0.username ?? "" })
        guard users.count == 1 || requestHasUser else {
            return .ambiguousUsers(top.map(\.name))
        }
        // One user: an entry named for the user (USER@HOST) before one that carries it in a field.
        let named = top.first { $0.name.utf8.dropFirst(folder.utf8.count).prefix(while: { $0 != UInt8(ascii: "/") }).contains(UInt8(ascii: "@")) }
        return .found(named ?? top[0])
    }

    // MARK: store and erase

    /// What `store` does to the vault: nothing (the credential is there already, or the request is
    /// incomplete), or set `password` (and the fields) on `name`.
    public enum StorePlan: Equatable, Sendable {
        case nothing
        case set(name: String, fields: [String: String])
    }

    /// Where `store` keeps `request`'s credential (it must have protocol, host, user name and
    /// password, as git sends after a success): the entry that answers it at the request's own path
    /// depth, when it is of the same user (then only a changed password is written), else a new entry
    /// `git/HOST[/PATH]`, or `git/USER@HOST[/PATH]` when that name is another user's.
    /// Throws `invalidName` when the host or path cannot be part of an entry name.
    public static func storePlan(for request: GitCredentialRequest, in vault: Vault) throws(VaultError) -> StorePlan {
        guard let protocolName = request.protocolName, let host = request.host, !host.isEmpty,
              let username = request.username, let password = request.password else { return .nothing }
        let path = pathComponents(request.path)
        if case .found(let match) = lookUp(request, in: vault), match.depth == path.count {
            let same = (try? vault.withValue(of: match.name) { constantTimeEqual($0, password) }) ?? false
            if same && match.username == username { return .nothing }
            if match.username == username { return .set(name: match.name, fields: [:]) }
        }
        let hostPart = normalizedHost(host, protocolName: protocolName)
        let tail = path.isEmpty ? "" : "/" + path.joined(separator: "/")
        var name = folder + hostPart + tail
        if vault.contains(name) {
            if field("username", of: name, in: vault) != username { name = folder + username + "@" + hostPart + tail }
        }
        _ = try EntryName.validate(name)
        var fields = ["username": username]
        if protocolName != "https" { fields["protocol"] = protocolName }
        return .set(name: name, fields: fields)
    }

    /// The entry `erase` removes for `request`: the one that answers it, and only when the request's
    /// password (git sends the one that failed) is its value, or the request has none.
    public static func eraseTarget(for request: GitCredentialRequest, in vault: Vault) -> String? {
        guard case .found(let match) = lookUp(request, in: vault) else { return nil }
        guard let password = request.password else { return match.name }
        let same = (try? vault.withValue(of: match.name) { constantTimeEqual($0, password) }) ?? false
        return same ? match.name : nil
    }

    /// The text of field `field` of `name`, or nil (read where it lies: no entry, and no value, is copied).
    private static func field(_ field: String, of name: String, in vault: Vault) -> String? {
        try? vault.withValue(of: name, part: .field(field)) { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether two byte strings are equal, in time that depends only on their lengths.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in b.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
