import SecureMemory
import VaultModel

// MARK: - Entry names of foreign items

/// Names the items of one foreign import: folders and title cleaned as every import cleans them
/// (`ImportedNameCleaner`), a readable name for a title that cannot be one (the title then kept in
/// the field `title`), and repeated names numbered `TITLE (n)`: an item whose title is exactly
/// what the source held (`Exactness`) before every item whose title had to be cleaned (att58 F1:
/// a look-alike `db ` never takes `db` from the item titled `db`, whatever its folders or the
/// prefix needed: att60 F1), then exact folders before cleaned ones, then in the order of the
/// items' usernames, then first URLs, then values — never of the file, so that the same data in
/// another order gives each account the same name. A numbered name skips every name another item holds
/// as it is (a literal `t (2)` keeps its name).
enum ForeignNaming {
    /// One item's name, and its title when the name does not keep it.
    struct Named {
        var name: String
        /// The original title, to be kept in the field `title`; nil when the name keeps it.
        var title: String?
        /// The item's folders as the source named them, joined by '/', to be kept in the field
        /// `folder` when the name's were cut short (`ImportRenaming.Reason.foldersCut`); nil otherwise.
        var folders: String? = nil
    }

    /// One item's name before numbering: its folders and title cleaned and put in NFC, whether the
    /// title was made of the site, the username or "untitled", and why the name is not what the source holds.
    struct Base {
        var named: Named
        var derived: Bool
        var reasons: [ImportRenaming.Reason]
        /// Whether the name was made of the item's site (`Source.site`): a derived name of a
        /// source without titles (Firefox's) is listed unless it was.
        var afterSite = false

        /// Which parts of the name are exactly what the source held (`Exactness`), decided before
        /// numbering: it orders the items of one name (`SortKey`).
        var exact: Exactness

        /// Whether the import lists this item's name (a renaming): a name not what the source
        /// holds, and a name made of the site, the username or "untitled" — in a source without
        /// titles (Firefox's: `ForeignItem.sourceHasNoTitles`, every item named after its site)
        /// only one not made of its site. Every build path asks this.
        func isListed(sourceHasNoTitles: Bool) -> Bool {
            !reasons.isEmpty || derived && (!sourceHasNoTitles || !afterSite)
        }
    }

    /// Which parts of an item's name are exactly what the source held, each judged on its own
    /// (att60 F1): the title (for pass and passage, the file's name without `.gpg` or `.age`) not
    /// cleaned, put in NFC or made of the site or username; every folder not cleaned or put in
    /// NFC. The prefix is the user's own text, not the source's: it never counts. Among the items
    /// of one name, an exact title ranks first (att58 F1: a look-alike `db ` never takes `db` from
    /// the item titled `db`, whatever its folder needed: a KeePass group `Email/Web`, an NFD
    /// folder from macOS); among equal titles, exact folders before cleaned ones; then username,
    /// URL, value (`SortKey`).
    struct Exactness: Hashable {
        /// Two bits, the title's the more significant: 3 whole, 2 title, 1 folders, 0 neither.
        let rank: UInt8

        init(title: Bool, folders: Bool) { rank = (title ? 2 : 0) | (folders ? 1 : 0) }

        /// A title and folders both as the source held them.
        static let whole = Exactness(title: true, folders: true)

        /// Whether the title is exactly what the source held.
        var title: Bool { rank & 2 != 0 }
        /// Whether every folder is exactly what the source held.
        var folders: Bool { rank & 1 != 0 }

        /// Whether an item of this exactness ranks before one of `other`'s: an exact title first,
        /// then, among equal titles, exact folders.
        func ranksBefore(_ other: Exactness) -> Bool { rank > other.rank }
    }

    /// The names of `items` under `prefix`, in item order, and every renaming.
    ///
    /// Each item's name is made once (`base(of:prefix:)`) and its hash kept (`NameHashes`); only
    /// when a hash comes twice (a repeated name, or rarely two names of one hash) are the names
    /// looked up exactly and the repeated ones numbered (`number`), so that an import of distinct
    /// titles (most) builds no dictionary of every name.
    static func names(of items: [ForeignItem], prefix: [String]) -> (named: [Named], renamings: [ImportRenaming]) {
        var bases: [Base] = []
        bases.reserveCapacity(items.count)
        var hashes = NameHashes(expected: items.count)
        var repeated = false
        for index in items.indices {
            // Read in place: binding the whole item would copy (retain) every one of its arrays.
            let base = base(of: items[index], prefix: prefix)
            if !hashes.insert(base.named.name) { repeated = true }
            bases.append(base)
        }
        if repeated { number(&bases, items: items, prefixBytes: prefixBytes(prefix)) }
        var renamings: [ImportRenaming] = []
        // An item without a title, named after its site or username, is listed too (`Base.isListed`).
        for index in bases.indices where bases[index].isListed(sourceHasNoTitles: items[index].sourceHasNoTitles) {
            let renaming = renaming(of: items[index], bases[index], prefix: prefix)
            // A name that is what the file held is no renaming (att62 F8: `renamed 'X (4)' to 'X (4)'`).
            if bases[index].derived || !sameUTF8(renaming.original, renaming.name) { renamings.append(renaming) }
        }
        return (bases.map(\.named), renamings)
    }

    /// The name of `item` before numbering (`Base`).
    ///
    /// A plain title outside folders (`isPlain`: most titles) is its own name, with nothing to
    /// say: cleaning, NFC and `readable` keep it as it is (it holds no '/', so no "://"), and
    /// nothing else is computed; any other item is named by `cleanedBase(of:prefix:)`.
    /// `ForeignNamingTests.test_base_plainTitlesMatchTheCleaningSteps` ties the two.
    static func base(of item: ForeignItem, prefix: [String]) -> Base {
        if prefix.isEmpty, item.folders.isEmpty, item.title.utf8.count <= maxBaseLength, isPlain(item.title) {
            return Base(named: Named(name: item.title, title: nil), derived: false, reasons: [], exact: .whole)
        }
        return cleanedBase(of: item, prefix: prefix)
    }

    /// `base(of:prefix:)` by every cleaning step: the plain reference, and the way of any item
    /// that is not a plain title outside folders.
    static func cleanedBase(of item: ForeignItem, prefix: [String]) -> Base {
        let given = item.title
        let title: String, derived: Bool
        var afterSite = false
        // A title that cleaning leaves empty (only invisible format characters or controls) names
        // nothing: named as an item without a title is, its title kept in `title` (else the item
        // would take its folder's or the prefix's own name: recheck58 N1). The same holds for the
        // site and the username such an item is named after (`source(site:user:)`: recheck60 R0).
        if given.unicodeScalars.contains(where: { $0 != " " && $0 != "\t" }),
           !ImportedNameCleaner.entryName(fromParts: [readable(given)]).isEmpty {
            title = readable(given)
            derived = false
        } else {
            let from = Self.source(site: site(of: item.urls.first), user: item.username)
            title = from.text ?? "untitled"
            derived = true
            if case .site = from { afterSite = true }
        }
        let folders = item.folders
        let inFolders = !prefix.isEmpty || !folders.isEmpty
        let cleaned = ImportedNameCleaner.entryName(fromParts: inFolders ? prefix + folders + [title] : [title])
        var base = EntryName.normalized(cleaned)
        if base.isEmpty { base = "untitled" }
        var why: [ImportRenaming.Reason] = []
        if !derived && !sameUTF8(cleaned, original(given, folders: folders, prefix: prefix)) { why.append(.cleaned) }
        if !sameUTF8(base, cleaned) && !cleaned.isEmpty { why.append(.normalized) }
        // A name past the name limit is cut (title first, then folders), a cut title kept in
        // `title`, cut folders in `folder`, and no cut part is exact (att60 F6); folders cut are
        // said (att62 F3, F8). Room for a number is made only when one is given (`numberedFitting`).
        var cut: (title: Bool, folders: Bool) = (false, false)
        if base.utf8.count > maxBaseLength, let short = shortened(base, prefixBytes: prefixBytes(prefix)) {
            cut = (!sameUTF8(String(leaf(of: short.name)), String(leaf(of: base))), short.folders)
            base = short.name
            why += short.folders ? [.shortened, .foldersCut] : [.shortened]
        }
        // The title is kept when the name ends in it (up to NFC); else the field `title` holds it.
        // A plain title (most) is its own cleaned and NFC form: nothing to compute.
        let blank = given.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" }
        let keptTitle = derived && blank || !derived && !cut.title && sameUTF8(title, given)
            && (isPlain(given) || sameUTF8(EntryName.normalized(ImportedNameCleaner.entryName(fromParts: [title])), EntryName.normalized(given)))
        if !keptTitle { why.append(.titleKept) }
        var exact = derived || !why.isEmpty ? exactness(of: item, derived: derived) : .whole
        if cut.title || cut.folders { exact = Exactness(title: exact.title && !cut.title, folders: exact.folders && !cut.folders) }
        return Base(named: Named(name: base, title: keptTitle ? nil : given, folders: cut.folders ? item.folders.joined(separator: "/") : nil),
                    derived: derived, reasons: why, afterSite: afterSite, exact: exact)
    }

    /// The `Exactness` of `item`'s title and folders, each part judged on its own, the prefix left
    /// out: for an item whose joined name needed something (a name with nothing cleaned, put in
    /// NFC or made is `.whole`: its parts are its name's, each as given).
    static func exactness(of item: ForeignItem, derived: Bool) -> Exactness {
        /// Whether cleaning and NFC keep `part` as it is (an empty one is dropped: not kept).
        func kept(_ part: String) -> Bool {
            isPlain(part) || !part.isEmpty && sameUTF8(EntryName.normalized(ImportedNameCleaner.entryName(fromParts: [part])), part)
        }
        let title = !derived && sameUTF8(readable(item.title), item.title) && kept(item.title)
        return Exactness(title: title, folders: item.folders.allSatisfy(kept))
    }

    /// The name as the source has it: prefix, folders and title joined with '/'.
    static func original(_ title: String, folders: [String], prefix: [String]) -> String {
        prefix.isEmpty && folders.isEmpty ? title : (prefix + folders + [title]).joined(separator: "/")
    }

    /// Whether cleaning and NFC keep `title` as it is, by its bytes: printable ASCII without '/',
    /// no space or tab at either end, not empty, `.` or `..` (ImportedNameCleaner's plain titles).
    static func isPlain(_ title: String) -> Bool {
        var title = title
        return title.withUTF8 { bytes in
            guard let first = bytes.first, let last = bytes.last, first != 0x20, first != 0x09, last != 0x20, last != 0x09 else { return false }
            if bytes.count <= 2 && bytes.allSatisfy({ $0 == UInt8(ascii: ".") }) { return false }
            for byte in bytes where byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "/") { return false }
            return true
        }
    }

    /// Numbers each name that several items share, in `SortKey`'s order (an exact title first). A
    /// numbered name skips every name some item has as given (each one's first item in `given`).
    private static func number(_ bases: inout [Base], items: [ForeignItem], prefixBytes: Int) {
        // Each name's first item; the items of a name given more than once (few: no array per name).
        var given: [String: Int] = [:]
        given.reserveCapacity(bases.count)
        var groups: [String: [Int]] = [:]
        for index in bases.indices {
            let base = bases[index].named.name
            if let earlier = given[base] {
                groups[base, default: [earlier]].append(index)
            } else {
                given[base] = index
            }
        }
        // The numbered names given so far; with `given`, every name taken.
        var taken: Set<String> = []
        // Groups in the order of their names' bytes, so that the numbers given never depend on the
        // dictionary's order (two groups may compete for one numbered name).
        let shared = groups.filter { $0.value.count > 1 }.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        for (base, indices) in shared {
            // Each item's key made once (not at each of the sort's n log n comparisons); the
            // values' hashes in a store wiped when the group is numbered (`TieHashes`).
            let ties = TieHashes(capacity: indices.count)
            let keys = Dictionary(uniqueKeysWithValues: indices.map { ($0, SortKey(items[$0], exact: bases[$0].exact, ties: ties)) })
            let ordered = indices.sorted { keys[$0]!.precedes(keys[$1]!, $0, $1, ties: ties) }
            ties.wipe()
            // When an exact title or folders keep the name, each cleaned one says so (`numberingReason`).
            let first = bases[ordered[0]].exact
            var number = 2
            for index in ordered.dropFirst() {
                // Cut only when the name and its number pass the limit: a cut one may meet any name.
                var candidate = numberedFitting(base, UInt32(number), prefixBytes: prefixBytes)
                while taken.contains(candidate.name) || given[candidate.name] != nil {
                    number += 1
                    candidate = numberedFitting(base, UInt32(number), prefixBytes: prefixBytes)
                }
                taken.insert(candidate.name)
                number += 1
                numbered(&bases[index], candidate.name, cut: candidate.cut, item: items[index], reason: numberingReason(first: first, bases[index].exact))
            }
        }
    }

    /// What orders the items of one name: an exact title before a cleaned one, then exact folders
    /// before cleaned ones (`Exactness`), then username, then first URL (their bytes), then a hash
    /// of the value, which lies in a `TieHashes` (the key holds only where). Exactness comes first
    /// because the attacker of att58 F1 picks the rest: a look-alike title's username, URL and
    /// value are its own.
    private struct SortKey {
        let exact: Exactness
        let user: [UInt8]
        let url: [UInt8]
        let tie: Int

        init(_ item: ForeignItem, exact: Exactness, ties: TieHashes) {
            self.exact = exact
            user = Array((item.username ?? "").utf8)
            url = Array((item.urls.first ?? "").utf8)
            tie = ties.append(hashOf: item.value)
        }

        /// The key of the item an export of `entry` makes (its username, `url`, value), whose
        /// title and folders are `exact` as far as an import keeps them as they are.
        init(_ entry: Entry, exact: Exactness, ties: TieHashes) {
            self.exact = exact
            user = entry.fields["username"] ?? []
            url = entry.fields["url"] ?? []
            tie = ties.append(hashOf: entry.value)
        }

        /// Whether this item comes before `other`: an exact title first, then exact folders, then
        /// by username, then first URL, then a hash of the value, all compared by bytes; items
        /// equal in all of them keep their file order (they are the same account).
        func precedes(_ other: SortKey, _ index: Int, _ otherIndex: Int, ties: TieHashes) -> Bool {
            if exact != other.exact { return exact.ranksBefore(other.exact) }
            if user != other.user { return user.lexicographicallyPrecedes(other.user) }
            if url != other.url { return url.lexicographicallyPrecedes(other.url) }
            let order = ties.compare(tie, other.tie)
            if order != 0 { return order < 0 }
            return index < otherIndex
        }
    }

    // MARK: The title an export gives back

    /// The `title` field of `entry` when it is the title its name was made of: the name's last
    /// part `leaf` is the title cleaned as an import cleans it (`A / B` → `A - B`, a URL its site),
    /// perhaps numbered (`Dup (2)`); nil otherwise (a field `title` made by hand, or one a rename
    /// with `mv` left behind: an export then writes it as an ordinary field), and for a title
    /// that is not text.
    static func title(of entry: Entry, leaf: String) -> [UInt8]? {
        guard let bytes = entry.fields["title"], let title = String(validating: bytes, as: UTF8.self) else { return nil }
        return explains(title, leaf: leaf) ? bytes : nil
    }

    /// The names among `names` (in `vault`) whose kept title an export must not write, writing
    /// their name's last part instead (`GitHub (2)`): the numbered entries of a title whose
    /// re-import would number them otherwise than their names are. An import numbers a title's
    /// items by username, then first URL, then value (`SortKey`); when one of those changed since
    /// (a username edited, a `GitHub` made by hand), writing the bare title `GitHub` for each would
    /// let the next import give the name `GitHub` to another account (an exported title that an
    /// import would clean, `db ` of `db (2)`, ranks after an exact one: `SortKey`). Issue 44's promise — an
    /// import never swaps which account a name holds — then holds for the round trip too.
    /// Only the folders holding a numbered name (`T (n)`) are read.
    static func unstableTitles(names: [String], vault: Vault) -> Set<String> {
        // Folder → leaves; and the folders with a numbered leaf.
        var leaves: [Substring: [String]] = [:]
        var numbered: Set<Substring> = []
        for name in names {
            let slash = name.lastIndex(of: "/")
            let folder = slash.map { name[..<$0] } ?? ""
            let leaf = slash.map { String(name[name.index(after: $0)...]) } ?? name
            leaves[folder, default: []].append(leaf)
            if leaf.hasSuffix(")"), leaf.contains(" (") { numbered.insert(folder) }
        }
        var unstable: Set<String> = []
        for folder in numbered {
            let inFolder = leaves[folder] ?? []
            func full(_ leaf: String) -> String { folder.isEmpty ? leaf : "\(folder)/\(leaf)" }
            // Each entry's exported title (its kept title, else its leaf), grouped by that title.
            var groups: [String: [(leaf: String, key: SortKey, kept: Bool)]] = [:]
            var given: Set<String> = []
            let ties = TieHashes()
            defer { ties.wipe() }
            for leaf in inFolder {
                guard var entry = vault.entry(full(leaf)) else { continue }
                defer {
                    for index in entry.value.indices { entry.value[index] = 0 }
                    for key in Array(entry.fields.keys) { for index in entry.fields[key]!.indices { entry.fields[key]![index] = 0 } }
                }
                let kept = title(of: entry, leaf: leaf).flatMap { String(validating: $0, as: UTF8.self) }
                let base = kept.map { EntryName.normalized(ImportedNameCleaner.entryName(fromParts: [readable($0)])) } ?? leaf
                if kept == nil { given.insert(leaf) }
                // The exported title (kept, else the leaf) is exact when an import keeps it as it
                // is; its folders are the vault's (clean and NFC, one folder for the whole group).
                let exact = Exactness(title: sameUTF8(base, kept ?? leaf), folders: true)
                groups[base, default: []].append((leaf, SortKey(entry, exact: exact, ties: ties), kept != nil))
            }
            for (base, members) in groups where members.count > 1 && members.contains(where: \.kept) {
                // The names a re-import would give, in its order.
                let ordered = members.indices.sorted { members[$0].key.precedes(members[$1].key, $0, $1, ties: ties) }
                var number = 2, stable = sameUTF8(members[ordered[0]].leaf, base)
                for index in ordered.dropFirst() where stable {
                    var candidate = "\(base) (\(number))"
                    while given.contains(candidate) && !sameUTF8(candidate, members[index].leaf) { number += 1; candidate = "\(base) (\(number))" }
                    number += 1
                    stable = sameUTF8(candidate, members[index].leaf)
                }
                if !stable { for member in members where member.kept { unstable.insert(full(member.leaf)) } }
            }
        }
        return unstable
    }

    /// Whether an import names an item titled `title` `leaf` (up to its folders), numbered or not.
    static func explains(_ title: String, leaf: String) -> Bool {
        guard title.unicodeScalars.contains(where: { $0 != " " && $0 != "\t" }) else { return false }
        let cleaned = EntryName.normalized(ImportedNameCleaner.entryName(fromParts: [readable(title)]))
        let base = cleaned.isEmpty ? "untitled" : cleaned
        if sameUTF8(base, leaf) || isShortened(base, to: Substring(leaf)) { return true }
        // A numbered leaf: `T (n)`, T the base or the base shortened (att60 F6).
        let bytes = leaf.utf8
        guard leaf.hasSuffix(")"), let open = bytes.lastIndex(of: UInt8(ascii: "(")), open > bytes.startIndex,
              bytes[bytes.index(before: open)] == 0x20 else { return false }
        let number = bytes[bytes.index(after: open)...].dropLast()
        let unnumbered = leaf[..<bytes.index(before: open)]
        return !number.isEmpty && number.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            && (sameUTF8(String(unnumbered), base) || isShortened(base, to: unnumbered))
    }
}
