import VaultInterchange
import VaultModel

// MARK: - --skip-existing by account, for other managers' exports

/// An account as an import tells one from another: its username and URL fields.
struct ImportedAccount {
    let username: [UInt8]?
    let url: [UInt8]?

    init(_ entry: Entry) {
        username = entry.fields["username"]
        url = entry.fields["url"]
    }

    /// Whether it has anything to be told by.
    var isKnown: Bool { username != nil || url != nil }

    /// Whether `other` is the same account (recheck58 N3): the usernames equal once case-folded
    /// (`AMY` is `amy`), the URLs' hosts equal (`https://www.f.example/login` is `f.example`:
    /// the scheme, a user part, a leading `www.`, the path, query and fragment aside, the host in
    /// lower case; a port kept). A username or URL one has and the other lacks differs.
    func isSame(as other: ImportedAccount) -> Bool {
        Self.folded(username) == Self.folded(other.username) && Self.host(url) == Self.host(other.url)
    }

    /// `username` case-folded, for a comparison only.
    static func folded(_ username: [UInt8]?) -> String? {
        username.map { String(decoding: $0, as: UTF8.self).lowercased() }
    }

    /// The host (and port) of `url`, lower case, without a leading `www.`; the whole text in
    /// lower case when it names no host (an `android://…` app, a bare word).
    static func host(_ url: [UInt8]?) -> String? {
        guard let url else { return nil }
        let text = String(decoding: url, as: UTF8.self).lowercased()
        var rest = Substring(text)
        while let first = rest.first, first == " " || first == "\t" { rest.removeFirst() }
        while let last = rest.last, last == " " || last == "\t" { rest.removeLast() }
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("www.") { rest = rest.dropFirst(4) }
        return rest.isEmpty ? text : String(rest)
    }

    /// "user NAME, URL", for a message (escaped there).
    var shown: String {
        let parts = [username.map { "user " + String(decoding: $0, as: UTF8.self) }, url.map { String(decoding: $0, as: UTF8.self) }].compactMap { $0 }
        return parts.isEmpty ? "no username or URL" : parts.joined(separator: ", ")
    }
}

/// What `--skip-existing` leaves out of another manager's export: the accounts the vault holds
/// already, and the names the vault holds for another account.
///
/// Titles that repeat are numbered by account (`TITLE (n)`), so a later export that adds an
/// account can give an old account's number to the new one: by name alone, the new account would
/// be skipped as "already in the vault" and an old one imported a second time (cold58 M3). So an
/// item is skipped when its account (username and URL; with neither, its value) is among the
/// vault's entries of its title, numbered or not; an item whose name the vault holds for another account is not imported
/// either (the vault's entry is kept, as the option says), and a warning names both accounts.
struct AccountSkips {
    /// Names not imported: their account is in the vault already.
    var skipped: [String] = []
    /// Names not imported: the vault's entry of that name holds another account.
    var otherAccount: [(name: String, incoming: ImportedAccount, existing: ImportedAccount)] = []

    /// Every name left out.
    var left: Set<[UInt8]> { Set((skipped + otherAccount.map(\.name)).map { Array($0.utf8) }) }

    /// A warning for each name the vault holds for another account.
    var warnings: [ImportWarning] {
        otherAccount.map { .otherAccountSkipped(name: $0.name, incoming: $0.incoming.shown, existing: $0.existing.shown) }
    }

    /// The skips of `entries` (another manager's export, in memory) against `vault`.
    init(_ entries: [(name: String, entry: Entry)], in vault: Vault) {
        // The vault's entries by title: `Twitter` and `Twitter (2)` under `Twitter`; one pass over its names.
        var titles: [String: [String]] = [:]
        for name in vault.names { titles[Self.title(of: name), default: []].append(name) }
        for (name, entry) in entries {
            let inVault = (titles[Self.title(of: name)] ?? []).contains { vault.entry($0).map { Self.same(entry, $0) } ?? false }
            if let existing = vault.entry(name) {
                if Self.same(entry, existing) || inVault {
                    skipped.append(name)
                } else {
                    otherAccount.append((name, ImportedAccount(entry), ImportedAccount(existing)))
                }
            } else if inVault {
                skipped.append(name)
            }
        }
    }

    /// Whether `incoming` is the account `existing` holds: the same username and URL host
    /// (`ImportedAccount.isSame(as:)`); for items
    /// with neither, which an import numbers by their values, the same value (recheck58 N2: a new
    /// password-only item skipped as another one).
    static func same(_ incoming: Entry, _ existing: Entry) -> Bool {
        let account = ImportedAccount(incoming)
        guard account.isSame(as: ImportedAccount(existing)) else { return false }
        return account.isKnown || incoming.value == existing.value
    }

    /// `name` without a number an import gave it: `Twitter` of `Twitter (3)`.
    static func title(of name: String) -> String {
        guard name.hasSuffix(")"), let open = name.lastIndex(of: "("), open > name.startIndex,
              name[name.index(before: open)] == " " else { return name }
        let digits = name[name.index(after: open)..<name.index(before: name.endIndex)]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return name }
        return String(name[..<name.index(before: open)])
    }
}
