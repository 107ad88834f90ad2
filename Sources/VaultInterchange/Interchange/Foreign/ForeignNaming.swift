import VaultModel

// MARK: - Entry names of foreign items

/// Names the items of one foreign import: folders and title cleaned as every import cleans them
/// (`ImportedNameCleaner`), a readable name for a title that cannot be one (the title then kept in
/// the field `title`), and repeated names numbered `TITLE (n)` in the order of the items'
/// usernames, then first URLs, then values — never of the file, so that the same data in another
/// order gives each account the same name. A numbered name skips every name another item holds
/// as it is (a literal `t (2)` keeps its name).
enum ForeignNaming {
    /// One item's name, and its title when the name does not keep it.
    struct Named {
        var name: String
        /// The original title, to be kept in the field `title`; nil when the name keeps it.
        var title: String?
    }

    /// The names of `items` under `prefix`, in item order, and every renaming.
    static func names(of items: [ForeignItem], prefix: [String]) -> (named: [Named], renamings: [ImportRenaming]) {
        var named: [Named] = []
        named.reserveCapacity(items.count)
        var originals: [String?] = []
        var reasons: [[ImportRenaming.Reason]] = []
        var groups: [String: [Int]] = [:]
        for item in items {
            let given = item.title
            let title: String, derived: Bool
            if given.unicodeScalars.contains(where: { $0 != " " && $0 != "\t" }) {
                title = readable(given)
                derived = false
            } else {
                title = site(of: item.urls.first) ?? item.username.flatMap { $0.isEmpty ? nil : $0 } ?? "untitled"
                derived = true
            }
            let parts = prefix + item.folders + [title]
            let cleaned = ImportedNameCleaner.entryName(fromParts: parts)
            var base = EntryName.normalized(cleaned)
            if base.isEmpty { base = "untitled" }
            var why: [ImportRenaming.Reason] = []
            let original = (prefix + item.folders + [given]).joined(separator: "/")
            if !sameUTF8(cleaned, original) && !derived { why.append(.cleaned) }
            if !sameUTF8(base, cleaned) && !cleaned.isEmpty { why.append(.normalized) }
            // The title is kept when the name ends in it (up to NFC); else the field `title` holds it.
            let keptTitle = derived || sameUTF8(EntryName.normalized(ImportedNameCleaner.entryName(fromParts: [title])), EntryName.normalized(given))
                && sameUTF8(title, given)
            if !keptTitle { why.append(.titleKept) }
            groups[base, default: []].append(named.count)
            named.append(Named(name: base, title: keptTitle ? nil : given))
            originals.append(derived ? nil : original)
            reasons.append(why)
        }
        number(&named, groups: groups, items: items, reasons: &reasons)
        var renamings: [ImportRenaming] = []
        for index in named.indices where !reasons[index].isEmpty {
            let original = originals[index] ?? (prefix + items[index].folders + [""]).joined(separator: "/")
            renamings.append(ImportRenaming(original: original, name: named[index].name, reasons: reasons[index]))
        }
        return (named, renamings)
    }

    /// Numbers each name that several items share, in the order of `key(of:)`.
    private static func number(_ named: inout [Named], groups: [String: [Int]], items: [ForeignItem], reasons: inout [[ImportRenaming.Reason]]) {
        var taken = Set(groups.keys)
        // Groups in the order of their names' bytes, so that the numbers given never depend on the
        // dictionary's order (two groups may compete for one numbered name).
        let shared = groups.filter { $0.value.count > 1 }.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        for (base, indices) in shared {
            let ordered = indices.sorted { precedes(items[$0], items[$1], $0, $1) }
            var number = 2
            for index in ordered.dropFirst() {
                var candidate = "\(base) (\(number))"
                while taken.contains(candidate) {
                    number += 1
                    candidate = "\(base) (\(number))"
                }
                taken.insert(candidate)
                number += 1
                named[index].name = candidate
                reasons[index].append(.numberedByAccount)
            }
        }
    }

    /// Whether item `a` comes before `b`: by username, then first URL, then a hash of the value,
    /// all compared by bytes; items equal in all three keep their file order (they are the same account).
    private static func precedes(_ a: ForeignItem, _ b: ForeignItem, _ indexA: Int, _ indexB: Int) -> Bool {
        let userA = Array((a.username ?? "").utf8), userB = Array((b.username ?? "").utf8)
        if userA != userB { return userA.lexicographicallyPrecedes(userB) }
        let urlA = Array((a.urls.first ?? "").utf8), urlB = Array((b.urls.first ?? "").utf8)
        if urlA != urlB { return urlA.lexicographicallyPrecedes(urlB) }
        let hashA = fnv1a(a.value), hashB = fnv1a(b.value)
        if hashA != hashB { return hashA < hashB }
        return indexA < indexB
    }

    /// FNV-1a, 64 bits: a fixed hash (never seeded per process), so the order is the same in every run.
    private static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    // MARK: Readable titles

    /// A title that names a site by its URL (`https://news.ycombinator.com/`) as the site's host
    /// and path (`news.ycombinator.com`): the scheme and its `//`, which would make an empty name
    /// segment, dropped; a path's '/' becomes '-' as in every title. Any other title as it is.
    static func readable(_ title: String) -> String {
        let trimmed = title.trimmedByCharacters
        guard let site = site(of: trimmed), trimmed.contains("://") else { return title }
        return site
    }

    /// The host and path of a URL (`https://x.example/a/` → `x.example/a`), without scheme,
    /// user, query or fragment; nil when `url` has no `scheme://` or no host.
    static func site(of url: String?) -> String? {
        guard let url, let schemeEnd = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<schemeEnd.lowerBound]
        guard !scheme.isEmpty, scheme.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || "+-.".unicodeScalars.contains($0) || ("0"..."9").contains($0) }) else {
            return nil
        }
        var rest = url[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let slash = rest.firstIndex(of: "/"), let at = rest[..<slash].lastIndex(of: "@") {
            rest = rest[rest.index(after: at)...]
        } else if !rest.contains("/"), let at = rest.lastIndex(of: "@") {
            rest = rest[rest.index(after: at)...]
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let text = String(rest).trimmedByCharacters
        guard !text.isEmpty, !text.hasPrefix("/") else { return nil }
        return text
    }
}
