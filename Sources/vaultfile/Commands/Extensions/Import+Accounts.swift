import VaultFormat
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

    /// What tells one account from another (recheck58 N3): the username case-folded (`AMY` is
    /// `amy`), the URL's host (`https://www.f.example/login` is `f.example`: the scheme, a user
    /// part, a leading `www.`, the path, query and fragment aside, the host in lower case; a port
    /// kept). Two accounts are the same when their keys are equal: a username or URL one has and
    /// the other lacks differs. Made once per entry, compared many times (`AccountSkips`).
    struct Key: Equatable {
        let username: String?
        let host: String?
    }

    /// This account's `Key`.
    var key: Key { Key(username: Self.folded(username), host: Self.host(url)) }

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
    /// The file's item's account (`ImportedAccount.brief`: username and host, never a secret).
    let account: String
    /// The item's title, as a skip matched by account names it: its name without its number
    /// (folders included), or for a name cut to fit its number, whose cut stem is no entry's
    /// name, its folders and whole title (its `title` field: att63 F7).
    let title: String

    /// The item compared with `existing`: the value (called `valueWord`) and each field but `title`, by name.
    init(name: String, matched: String, byName: Bool, incoming: Entry, existing: Entry, valueWord: String) {
        self.name = name
        self.matched = matched
        self.byName = byName
        account = ImportedAccount(incoming).brief
        let stem = AccountSkips.title(of: name)
        let slash = stem.utf8.lastIndex(of: UInt8(ascii: "/"))
        let leaf = slash.map { Array(stem.utf8[stem.utf8.index(after: $0)...]) } ?? Array(stem.utf8)
        let whole = ImportRenaming.importedTitle(of: incoming, name: name)
        // Cut: past the room a number leaves (`numberingKey`), the whole title going on where it stops.
        if ImportRenaming.numberingKey(of: stem) != stem, whole.count > leaf.count, whole.starts(with: leaf),
           let text = String(validating: whole, as: UTF8.self) {
            title = slash.map { String(stem[..<$0]) + "/" + text } ?? text
        } else {
            title = stem
        }
        valueDiffers = incoming.value == existing.value ? nil : valueWord
        // `title` is the import's own record of a title it numbered or cleaned (`Twitter` in
        // `Twitter (2)`): a matter of naming, not of the account.
        let fields = Set(incoming.fields.keys).union(existing.fields.keys).sorted()
        fieldsDiffering = fields.filter { $0 != "title" && !Self.same($0, incoming.fields[$0], existing.fields[$0]) }
    }

    /// Whether the values `a` and `b` of the field `name` are the same. A TOTP (`totp`, `otp`)
    /// whose both values are otpauth URIs is the same when what computes its codes is (secret,
    /// algorithm, digits, period, encoder) and its issuer: a bare secret is stored as a URI
    /// whose label is the username, so a new username changed the URI's text, and was said as
    /// a changed TOTP — "my 2FA secret was rotated" (cold62 L3).
    private static func same(_ name: String, _ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        if a == b { return true }
        guard name == "totp" || name == "otp", let a, let b,
              let one = try? TOTPParameters(uri: a), let other = try? TOTPParameters(uri: b) else { return false }
        return one.secret.constantTimeEquals(other.secret) && one.algorithm == other.algorithm && one.digits == other.digits
            && one.period == other.period && one.encoder == other.encoder && one.issuer == other.issuer
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
    ///
    /// The items are matched a title at a time, against the vault's entries of that title, each
    /// decoded (and its account key made) once for all the title's items and let go before the
    /// next title's: an item was once matched by decoding its title's entries anew, ten times over
    /// for a site of ten accounts. What is found is kept in file order.
    ///
    /// `byPath`: the names of items that are their source's path exactly (a pass or passage file
    /// not renamed): each is the vault's entry of that name when there is one, whatever its
    /// account or value, and is skipped by name (recheck62 N6: a changed `db.gpg` beside a
    /// look-alike `db .gpg` was added again as `db (3)`, another number at each change).
    init(_ entries: [(name: String, entry: Entry)], in vault: Vault, prefix: [String] = [], byPath: Set<[UInt8]> = []) {
        // The vault's entries by title: `Twitter` and `Twitter (2)` under `Twitter`; one pass over its
        // names. A title so long that its numbered names were cut to fit is grouped by the bytes
        // every such cut keeps (`ImportRenaming.numberingKey`).
        var titles: [String: [String]] = [:]
        for name in vault.names { titles[Self.key(of: name), default: []].append(name) }
        // The file's items by title (their indices, in file order), the titles in the order they come.
        var itemsOf: [String: [Int]] = [:]
        var order: [String] = []
        for index in entries.indices {
            let title = Self.key(of: entries[index].name)
            if itemsOf[title]?.append(index) == nil {
                itemsOf[title] = [index]
                order.append(title)
            }
        }
        var skippedAt: [(index: Int, item: SkippedItem)] = []
        var heldAt: [Int] = []
        for title in order {
            let items = itemsOf.removeValue(forKey: title) ?? []
            var group = TitleGroup(vault: vault, siblings: titles[title] ?? [])
            for index in items {
                let (name, entry) = entries[index]
                if !byPath.isEmpty, byPath.contains(Array(name.utf8)), let existing = group.decoded(name)?.entry {
                    skippedAt.append((index, SkippedItem(name: name, matched: name, byName: true, incoming: entry, existing: existing, valueWord: "password")))
                    continue
                }
                let title = ImportRenaming.importedTitle(of: entry, name: name), folders = ImportedFolders(entry, name: name)
                if Self.number(of: name) == nil, items.count == 1, group.siblings == [name], let existing = group.decoded(name),
                   Self.match(title: title, folders: folders, held: (existing.title, existing.folders), name: name) == .exact {
                    let existing = existing.entry
                    // The one item of its title, the vault's one entry of that name: the same entry.
                    skippedAt.append((index, SkippedItem(name: name, matched: name, byName: true, incoming: entry, existing: existing, valueWord: "password")))
                    continue
                }
                // By account: the entry of that name first, then the other entries of its title.
                // (Whether the vault holds the name, by its bytes: its entry, decoded once for the group.)
                let inVault = group.decoded(name) != nil
                let candidates = inVault ? [name] + group.siblings.filter { $0 != name } : group.siblings
                let account = ImportedAccount(entry)
                let key = account.key
                var matched: (name: String, entry: Entry)?
                var loose: (name: String, entry: Entry)?
                for candidate in candidates {
                    // The same username and URL host; for items with neither, which an import
                    // numbers by their values, the same value (recheck58 N2: a new password-only
                    // item skipped as another one).
                    guard let existing = group.decoded(candidate), existing.key == key,
                          account.isKnown || entry.value == existing.entry.value else { continue }
                    // Of the same title, whole (att63 F1: not two titles that share the bytes a
                    // cut keeps; att63 F3: not a look-alike cleaned to another file's name); an
                    // entry whose title is not kept (made by hand) only when no other is.
                    switch Self.match(title: title, folders: folders, held: (existing.title, existing.folders), name: candidate) {
                    case .exact?: matched = (candidate, existing.entry)
                    case .loose?: if loose == nil { loose = (candidate, existing.entry) }
                    case nil: break
                    }
                    if matched != nil { break }
                }
                matched = matched ?? loose
                if let matched {
                    skippedAt.append((index, SkippedItem(name: name, matched: matched.name, byName: matched.name == name, incoming: entry,
                                                         existing: matched.entry, valueWord: "password")))
                } else if inVault {
                    heldAt.append(index)
                }
            }
        }
        skippedAt.sort { $0.index < $1.index }
        skipped = skippedAt.map(\.item)
        // A new account under a name the vault holds for another: the next number free in the
        // vault and among the names this import writes (never one of the vault's names). The
        // highest number of each title among the names written is found in one pass (a pass over
        // them all for each such account was quadratic), then raised as numbers are given.
        guard !heldAt.isEmpty else { return }
        let left = Set(skipped.map(\.name))
        var highestWritten: [String: Int] = [:]
        for (name, _) in entries where !left.contains(name) {
            let title = Self.key(of: name)
            highestWritten[title] = max(highestWritten[title] ?? 1, Self.number(of: name) ?? 1)
        }
        var given: [String: Int] = [:]
        for index in heldAt.sorted() {
            let (name, entry) = entries[index]
            let key = Self.key(of: name)
            let highest = given[key] ?? (titles[key] ?? []).reduce(highestWritten[key] ?? 1) { max($0, Self.number(of: $1) ?? 1) }
            given[key] = highest + 1
            // Cut to fit as the import cuts a numbered name, only when its number passes the limit.
            renumbered.append((name, ImportRenaming.numbered(Self.title(of: name), highest + 1, prefix: prefix), ImportedAccount(entry)))
        }
    }

    /// The group of `name` (`title(of:)`, its numbering key: `ImportRenaming.numberingKey`).
    static func key(of name: String) -> String { ImportRenaming.numberingKey(of: title(of: name)) }

    /// The vault's entries of one title, each decoded from the vault (with its account key) the
    /// first time an item of that title asks for it, and kept for the title's other items.
    private struct TitleGroup {
        let vault: Vault
        /// The vault's names of the title.
        let siblings: [String]
        /// Each name asked for, by its bytes (as the vault finds it) → its entry, account key, kept
        /// title and folders, or nil when the vault has none.
        private var cache: [[UInt8]: (entry: Entry, key: ImportedAccount.Key, title: [UInt8]?, folders: ImportedFolders)?] = [:]

        init(vault: Vault, siblings: [String]) {
            self.vault = vault
            self.siblings = siblings
        }

        /// The vault's entry `name`, with its account key, kept title and folders (each made once); nil when there is none.
        mutating func decoded(_ name: String) -> (entry: Entry, key: ImportedAccount.Key, title: [UInt8]?, folders: ImportedFolders)? {
            let bytes = Array(name.utf8)
            if let cached = cache[bytes] { return cached }
            let found = vault.entry(name).map { (entry: $0, key: ImportedAccount($0).key, title: ImportRenaming.keptTitle(of: $0, name: name), folders: ImportedFolders($0, name: name)) }
            cache[bytes] = found
            return found
        }
    }

    /// The folders an imported name was made of, as `--skip-existing` tells one title from
    /// another within a group (`key(of:)`, which a cut name shares with every title and folders
    /// of the same first bytes): the kept `folder` field of a name whose folders were cut, else
    /// the name's own.
    struct ImportedFolders {
        /// The `folder` field, nil when the folders were not cut.
        let kept: [UInt8]?
        /// The name's folders (without its title), the prefix's included.
        let named: Substring

        init(_ entry: Entry, name: String) {
            kept = entry.fields["folder"]
            let unnumbered = AccountSkips.title(of: name)
            named = unnumbered.lastIndex(of: "/").map { unnumbered[..<$0] } ?? ""
        }

        /// Whether `other` may be the same folders: the kept ones compared when both were cut,
        /// the names' when neither was.
        func mayBe(_ other: ImportedFolders) -> Bool {
            switch (kept, other.kept) {
            case (let one?, let two?): return one == two
            case (nil, nil): return named.utf8.elementsEqual(other.named.utf8)
            default: return true
            }
        }
    }

    /// How the vault's entry `name` (the title it keeps, `held.title`: `ImportRenaming.keptTitle`,
    /// and its folders) is of the title `title` in the folders `folders` (an item's,
    /// `ImportRenaming.importedTitle`): `ImportRenaming.titleMatch`, nil when its title or
    /// folders are others.
    static func match(title: [UInt8], folders: ImportedFolders, held: (title: [UInt8]?, folders: ImportedFolders), name: String) -> ImportRenaming.TitleMatch? {
        guard folders.mayBe(held.folders) else { return nil }
        return ImportRenaming.titleMatch(title, kept: held.title, name: name)
    }

    /// The number an import gave `name` (`3` of `Twitter (3)`), nil for none.
    static func number(of name: String) -> Int? {
        guard let open = numberOpening(name) else { return nil }
        let bytes = Array(name.utf8)
        return Int(String(decoding: bytes[(open + 1)..<(bytes.count - 1)], as: UTF8.self))
    }

    /// `name` without a number an import gave it: `Twitter` of `Twitter (3)`.
    static func title(of name: String) -> String {
        guard let open = numberOpening(name) else { return name }
        return String(decoding: Array(name.utf8)[..<(open - 1)], as: UTF8.self)
    }

    /// The byte offset of the `(` of `name`'s ` (n)` ending, nil without one. By bytes, as an
    /// import numbers (`ForeignNaming.explains`), never by Characters: after a Prepend character
    /// (U+0D4E) the space joins it in one grapheme, and the number went unseen (att62 F4).
    private static func numberOpening(_ name: String) -> Int? {
        let bytes = Array(name.utf8)
        guard bytes.last == UInt8(ascii: ")"), let open = bytes.lastIndex(of: UInt8(ascii: "(")), open > 0,
              bytes[open - 1] == 0x20, open + 1 < bytes.count - 1 else { return nil }
        guard bytes[(open + 1)..<(bytes.count - 1)].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return open
    }
}

// MARK: - --overwrite of another manager's export

extension VaultfileCommand.Import {
    /// A warning for each of `replaced` (the vault's names that `entries` replace, `--overwrite`)
    /// whose entry held another account than the file's item of that name: usernames both given
    /// and different (case-folded), or URL hosts both given and different (`ImportedAccount.Key`).
    /// `--overwrite` replaces by name (docs/INTERCHANGE.md); when a shared title gained an account
    /// the numbers move, and `Bank` would go to the new account with only `replace Bank` said (att62 F7).
    /// An entry of another title (a cut numbered name that two long titles share) is said too, with
    /// both titles (att63 F1).
    static func otherAccountsReplaced(_ replaced: [String], by entries: ImportedEntries, in vault: Vault) -> [ImportWarning] {
        let names = Set(replaced.map { Array($0.utf8) })
        var warnings: [ImportWarning] = []
        for (name, incoming) in entries.entries where names.contains(Array(name.utf8)) {
            guard let held = vault.entry(name) else { continue }
            let old = ImportedAccount(held), new = ImportedAccount(incoming)
            let (a, b) = (old.key, new.key)
            let users = a.username != nil && b.username != nil && a.username != b.username
            let hosts = a.host != nil && b.host != nil && a.host != b.host
            // Another title that a cut numbered name shares (att63 F1: `A{1020} (2)` of `A{1023}2`
            // replaced by the new account of `A{1023}1`): said with both titles.
            let newTitle = ImportRenaming.importedTitle(of: incoming, name: name)
            // (An entry without a kept title is of the title its name ends in, unless numbered.)
            let match = ImportRenaming.titleMatch(newTitle, kept: ImportRenaming.keptTitle(of: held, name: name), name: name)
            if match == nil || match == .loose && AccountSkips.number(of: name) == nil {
                let heldTitle = ImportRenaming.importedTitle(of: held, name: name)
                let titled = { (title: [UInt8], brief: String) in "title '\(EntryName.escapingFormatCharacters(String(decoding: title, as: UTF8.self)))', \(brief)" }
                warnings.append(.replacedOtherAccount(name: name, existing: titled(heldTitle, old.brief), incoming: titled(newTitle, new.brief)))
            } else if users || hosts {
                warnings.append(.replacedOtherAccount(name: name, existing: old.brief, incoming: new.brief))
            }
        }
        return warnings
    }
}
