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
        url.flatMap { ImportRenaming.accountHost(of: String(decoding: $0, as: UTF8.self)) ?? "" }
    }

    /// "user NAME, HOST", as a renaming names an account (`ImportRenaming.account`).
    var brief: String {
        let parts = [username.map { "user " + String(decoding: $0, as: UTF8.self) }, Self.host(url)].compactMap { $0 }
        return parts.isEmpty ? "no username or URL" : parts.joined(separator: ", ")
    }
}

/// An item `--skip-existing` leaves out: the vault's entry it was matched to, and what of it the
/// file holds otherwise (cold60 M2: a changed password was dropped without a word).
struct SkippedItem {
    /// The item's name in the file (after the import's own renaming).
    let name: String
    /// The vault's entry it was matched to: by name, or by account among the entries of its title.
    let matched: String
    /// The word for the value when it differs ("password", "value"), nil when it does not.
    let valueDiffers: String?
    /// The names of the fields that differ (`title` aside), never a value.
    let fieldsDiffering: [String]
    /// Whether anything differs.
    var differs: Bool { valueDiffers != nil || !fieldsDiffering.isEmpty }
    /// Whether it was matched by its name (`--overwrite` would then replace that very entry).
    let byName: Bool

    /// The item compared with `existing`: the value (called `valueWord`) and each field but `title`, by name.
    init(name: String, matched: String, byName: Bool, incoming: Entry, existing: Entry, valueWord: String) {
        self.name = name
        self.matched = matched
        self.byName = byName
        valueDiffers = incoming.value == existing.value ? nil : valueWord
        // `title` is the import's own record of a title it numbered or cleaned (`Twitter` in
        // `Twitter (2)`): a matter of naming, not of the account.
        let fields = Set(incoming.fields.keys).union(existing.fields.keys).sorted()
        fieldsDiffering = fields.filter { $0 != "title" && incoming.fields[$0] != existing.fields[$0] }
    }

    /// "the file's password differs", "the file's password and fields 'url' and 'username'
    /// differ"; nil when nothing does.
    var change: String? {
        guard differs else { return nil }
        let quoted = fieldsDiffering.map { "'\($0)'" }
        let fields = quoted.isEmpty ? nil
            : quoted.count == 1 ? "field \(quoted[0])" : "fields " + quoted.dropLast().joined(separator: ", ") + " and " + quoted[quoted.count - 1]
        let parts = [valueDiffers, fields].compactMap { $0 }
        return "the file's \(parts.joined(separator: " and ")) \(parts.count == 1 && quoted.count <= 1 ? "differs" : "differ")"
    }
}

/// What `--skip-existing` does to another manager's export: the items whose account the vault
/// holds already (skipped, each with the vault entry it was matched to), and the new accounts
/// whose name the vault holds for another account (numbered after the vault's entries).
///
/// Titles that repeat are numbered by account (`TITLE (n)`), so a later export that adds an
/// account can give an old account's number to the new one: by name alone, the new account would
/// be skipped as "already in the vault" and an old one imported a second time (cold58 M3). So an
/// item of a repeated title is skipped when its account (username and URL; with neither, its
/// value) is among the vault's entries of its title, numbered or not. An item whose title the
/// file holds once, when the vault holds that name once (no numbered siblings), is that entry,
/// edited or not: skipped by name (cold60 M2 c: a pass file whose password changed, a row with a
/// URL added, were "another account"). A new account whose name the vault holds for another one
/// is given the next number free in both (`Twitter (3)`), never an existing name (cold60 M2 d).
struct AccountSkips {
    /// The items left out: their account is in the vault already.
    var skipped: [SkippedItem] = []
    /// The new accounts renumbered: the item's name → the name it gets, and its account.
    var renumbered: [(name: String, to: String, account: ImportedAccount)] = []

    /// Every name left out.
    var left: Set<[UInt8]> { Set(skipped.map { Array($0.name.utf8) }) }

    /// The skips of `entries` (another manager's export, in memory) against `vault`.
    init(_ entries: [(name: String, entry: Entry)], in vault: Vault) {
        // The vault's entries by title: `Twitter` and `Twitter (2)` under `Twitter`; one pass over its names.
        var titles: [String: [String]] = [:]
        for name in vault.names { titles[Self.title(of: name), default: []].append(name) }
        // How often each title comes in the file.
        var inFile: [String: Int] = [:]
        for (name, _) in entries { inFile[Self.title(of: name), default: 0] += 1 }
        var held: [(name: String, entry: Entry)] = []
        for (name, entry) in entries {
            let title = Self.title(of: name)
            let siblings = titles[title] ?? []
            if let existing = vault.entry(name), name == title, inFile[title] == 1, siblings == [name] {
                // The one item of its title, the vault's one entry of that name: the same entry.
                skipped.append(SkippedItem(name: name, matched: name, byName: true, incoming: entry, existing: existing, valueWord: "password"))
                continue
            }
            // By account: the entry of that name first, then the other entries of its title.
            let candidates = vault.contains(name) ? [name] + siblings.filter { $0 != name } : siblings
            if let matched = candidates.first(where: { vault.entry($0).map { Self.same(entry, $0) } ?? false }), let existing = vault.entry(matched) {
                skipped.append(SkippedItem(name: name, matched: matched, byName: matched == name, incoming: entry, existing: existing, valueWord: "password"))
            } else if vault.contains(name) {
                held.append((name, entry))
            }
        }
        // A new account under a name the vault holds for another: the next number free in the
        // vault and among the names this import writes (never one of the vault's names).
        let left = Set(skipped.map(\.name))
        var taken = Set(entries.map(\.name).filter { !left.contains($0) })
        for (name, entry) in held {
            let title = Self.title(of: name)
            var highest = 1
            for other in (titles[title] ?? []) + Array(taken) where Self.title(of: other) == title {
                highest = max(highest, Self.number(of: other) ?? 1)
            }
            let to = "\(title) (\(highest + 1))"
            taken.insert(to)
            renumbered.append((name, to, ImportedAccount(entry)))
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

    /// The number an import gave `name` (`3` of `Twitter (3)`), nil for none.
    static func number(of name: String) -> Int? {
        let title = title(of: name)
        guard title.utf8.count < name.utf8.count else { return nil }
        return Int(name.dropFirst(title.count + 2).dropLast())
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
