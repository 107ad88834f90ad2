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
    /// Split on the byte of '/', as names are (`GitCredentialName.parse`): a combining mark after a
    /// '/' makes one Character of the two, which a split on Characters would not cut.
    static func pathComponents(_ path: String?) -> [Substring] {
        (path ?? "").utf8.split(separator: UInt8(ascii: "/")).map { Substring(String(decoding: $0, as: UTF8.self)) }
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
            guard let parts = GitCredentialName.parse(name) else { continue }
            var user = parts.user
            let entryProtocol = field("protocol", of: name, in: vault)?.lowercased() ?? "https"
            guard entryProtocol == protocolName, normalizedHost(parts.host, protocolName: protocolName) == wantedHost else { continue }
            let components = parts.path
            guard components.count <= wantedPath.count,
                  zip(components, wantedPath).allSatisfy({ sameComponent(Substring($0), $1) }) else { continue }
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
    /// incomplete), refuse (`why`: a user name, host or path its name could not hold so that it
    /// reads back the same), or set `password` and `fields` on `name` (one version of history).
    public enum StorePlan: Equatable, Sendable {
        case nothing
        case refused(String)
        case set(name: String, fields: [String: String])
    }

    /// Where `store` keeps `request`'s credential (it must have protocol, host, user name and
    /// password, as git sends after a success):
    /// - the entry that answers it at the request's own path depth (of its protocol, as every
    ///   answer): nothing when it holds that user and password, else its password; an entry without
    ///   a user is shared by every user and stays so: nothing when it holds the password, else a
    ///   new entry for the request's user (a store from another user, say through a URL naming
    ///   `mallory@`, never takes a shared entry over);
    /// - else a new entry, under the first free name of `git/HOST[/PATH]`, `git/USER@HOST[/PATH]`
    ///   and the same two with the protocol's default port written out (`HOST:443`, which reads back
    ///   as `HOST`): a name held by another user or another protocol is never reused.
    /// A user name or host that a name could not hold so that it reads back as the request
    /// (`GitCredentialName.refusal`), or a path that is no entry name, is refused.
    public static func storePlan(for request: GitCredentialRequest, in vault: Vault) -> StorePlan {
        guard let protocolName = request.protocolName, let host = request.host, !host.isEmpty,
              let username = request.username, let password = request.password else { return .nothing }
        if let why = GitCredentialName.refusal(user: username, host: host, protocolName: protocolName) { return .refused(why) }
        let path = pathComponents(request.path).map(String.init)
        if case .found(let match) = lookUp(request, in: vault), match.depth == path.count {
            let same = (try? vault.withValue(of: match.name) { constantTimeEqual($0, password) }) ?? false
            if match.username == username { return same ? .nothing : .set(name: match.name, fields: [:]) }
            if match.username == nil && same { return .nothing }
        }
        let hostPart = normalizedHost(host, protocolName: protocolName)
        var hosts = [hostPart]
        // Without a port (an IPv6 address in brackets holds ':' of its own): the default port written out.
        if let port = defaultPorts[protocolName], hostPart.hasSuffix("]") || !hostPart.contains(":") { hosts.append(hostPart + ":" + port) }
        let candidates = hosts.flatMap { host in [GitCredentialName(user: nil, host: host, path: path), GitCredentialName(user: username, host: host, path: path)] }
        // A name in the trash that held this user's credential of this protocol (git's erase of the
        // password that failed) first, to bring it back; then a name free of entries and of the
        // trash; then one in the trash with another credential (whose versions a new entry drops).
        func trashed(_ name: GitCredentialName) -> Entry? {
            guard !vault.contains(name.text), let newest = (try? vault.history(of: name.text))?.first else { return nil }
            return newest.entry
        }
        let chosen = candidates.first { name in trashed(name).map { holds($0, under: name, userOf: request) } == true }
            ?? candidates.first { !vault.contains($0.text) && trashed($0) == nil }
            ?? candidates.first { !vault.contains($0.text) }
        guard let free = chosen else {
            return .refused("every name it could have (\(candidates.map { "'\($0.text)'" }.joined(separator: ", "))) holds "
                            + "another user's or another protocol's credential")
        }
        do {
            _ = try EntryName.validate(free.text)
        } catch {
            return .refused("the path cannot be part of an entry name: \(error)")
        }
        var fields = ["username": username]
        if protocolName != "https" { fields["protocol"] = protocolName }
        return .set(name: free.text, fields: fields)
    }

    /// What `store` did.
    public enum StoreOutcome: Equatable, Sendable {
        /// Nothing was written (the credential is there, or the request is incomplete).
        case unchanged
        /// `name` was written; `fromTrash`: it was in the trash (an `erase` before), and came back
        /// with its history before the new password replaced it.
        case stored(name: String, fromTrash: Bool)
        /// Nothing was written, for the reason given.
        case refused(String)
    }

    /// Keeps `request`'s credential as `storePlan` says, in one edit of the entry (one version of
    /// history). A name in the trash (git's `erase` of a password that failed, then `store` of the
    /// one that worked) comes back from it first: its earlier versions stay as the new entry's
    /// history, and the value and fields it had become the newest of them.
    public static func store(_ request: GitCredentialRequest, in vault: inout Vault, now: Int64 = currentTimeMilliseconds()) throws(VaultError) -> StoreOutcome {
        guard let password = request.password else { return .unchanged }
        switch storePlan(for: request, in: vault) {
        case .nothing: return .unchanged
        case .refused(let why): return .refused(why)
        case .set(let name, let fields):
            var entry: Entry
            var fromTrash = false
            if let existing = vault.entry(name) {
                entry = existing
            } else if let versions = try? vault.history(of: name), let newest = versions.first,
                      let parsed = GitCredentialName.parse(name), holds(newest.entry, under: parsed, userOf: request) {
                try vault.restore(name, revision: 1, now: now)
                entry = vault.entry(name) ?? Entry(value: [], created: now, modified: now)
                // The request says whose credential it is and its protocol: none of the removed entry's.
                entry.fields["username"] = nil
                entry.fields["protocol"] = nil
                fromTrash = true
            } else {
                entry = Entry(value: [], created: now, modified: now)
            }
            entry.value = password
            for (field, value) in fields { entry.fields[field] = Array(value.utf8) }
            entry.modified = now
            try vault.put(entry, as: name, now: now)
            return .stored(name: name, fromTrash: fromTrash)
        }
    }

    /// Whether `entry`, kept under `name`, is the credential of `request`'s user and protocol (a
    /// removed one that `store` brings back with its history; another's is never restored).
    private static func holds(_ entry: Entry, under name: GitCredentialName, userOf request: GitCredentialRequest) -> Bool {
        let user = name.user ?? entry.fields["username"].map { String(decoding: $0, as: UTF8.self) }
        let entryProtocol = entry.fields["protocol"].map { String(decoding: $0, as: UTF8.self).lowercased() } ?? "https"
        return user != nil && user == request.username && entryProtocol == request.protocolName
    }

    /// The entry `erase` removes for `request`: the one that answers it, and only when the request's
    /// password (git sends the one that failed) is its value. A request without a password (newer
    /// git may send one) removes nothing: without it, git's failure says nothing about the entry.
    /// An entry without a user (shared by every user) is never removed for a request that names a
    /// user: the login may have failed for the user (a URL naming `mallory@`), not the password.
    public static func eraseTarget(for request: GitCredentialRequest, in vault: Vault) -> String? {
        guard let password = request.password, case .found(let match) = lookUp(request, in: vault) else { return nil }
        if match.username == nil && request.username != nil { return nil }
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
