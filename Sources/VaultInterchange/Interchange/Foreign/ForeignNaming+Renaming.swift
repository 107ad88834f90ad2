import VaultModel

// MARK: - Renamings of foreign items

extension ForeignNaming {
    /// The renaming of `item`, named `base` (whose reasons are not empty).
    static func renaming(of item: ForeignItem, _ base: Base, prefix: [String]) -> ImportRenaming {
        let user = item.username.flatMap { $0.isEmpty ? nil : $0 }, site = site(of: item.urls.first)
        return ImportRenaming(original: original(base.derived ? "" : item.title, folders: item.folders, prefix: prefix),
                              name: base.named.name, reasons: base.reasons,
                              account: saysAccount(base) ? account(user: user, site: site, host: site == nil ? accountHost(of: item.urls.first) : nil) : nil,
                              madeOf: base.derived ? madeOf(user: user, site: site) : nil)
    }

    /// `renaming(of:_:prefix:)` of `item`, named `base` before numbering and `number` (0: not
    /// numbered), added to `renamings` as its facts (`PackedRenamings`): the texts are made when printed.
    static func addRenaming(of item: ForeignItem, _ base: Base, unnumbered: String, number: UInt32, prefix: [String],
                            to renamings: inout PackedRenamings.Builder) {
        let original = original(base.derived ? "" : item.title, folders: item.folders, prefix: prefix)
        // A name that is what the file held is no renaming (att62 F8: `renamed 'X (4)' to 'X (4)'`).
        guard base.derived || !sameUTF8(original, base.named.name) else { return }
        let site = renamings.site(of: item.urls.first), says = saysAccount(base)
        renamings.add(original: original, base: unnumbered, number: number,
                      reasons: base.reasons, user: item.username.flatMap { $0.isEmpty ? nil : $0 }, site: site,
                      host: says && site == nil ? accountHost(of: item.urls.first) : nil, account: says, derived: base.derived)
    }

    /// Whether the renaming of `base` says which account it is: a name numbered among others.
    static func saysAccount(_ base: Base) -> Bool {
        base.reasons.contains { $0 == .numberedByAccount || $0 == .yieldedToExactTitle || $0 == .yieldedToExactFolders }
    }

    /// Why an item of exactness `exact` is numbered after `first`, the item that keeps their name:
    /// an exact title against a cleaned one (`yieldedToExactTitle`); equally exact titles, exact
    /// folders against cleaned ones (`yieldedToExactFolders`: two source folders met, att62 F2);
    /// else the accounts' order (`numberedByAccount`). Every build path asks this.
    static func numberingReason(first: Exactness, _ exact: Exactness) -> ImportRenaming.Reason {
        if first.title && !exact.title { return .yieldedToExactTitle }
        if first.title == exact.title && first.folders && !exact.folders { return .yieldedToExactFolders }
        return .numberedByAccount
    }

    /// Which account a numbered item is: `user USERNAME, HOST` (either alone when the other is
    /// missing, `no username or URL` without both), from its username (nil when empty) and its first
    /// URL's site, else `host`: a URL written without a scheme (`db.example`) named as
    /// `--skip-existing`'s lines name it (`accountHost(of:)`, cold60 L9).
    static func account(user: String?, site: String?, host given: String? = nil) -> String {
        var account = ""
        if let user { account = "user " + user }
        if let shown = site.map(host(ofSite:)) ?? given { account += account.isEmpty ? shown : ", " + shown }
        return account.isEmpty ? "no username or URL" : account
    }

    /// The host of a URL as an account is told by (`--skip-existing`'s, `ImportedAccount.host`):
    /// spaces at the ends, the scheme, a user part, the path, query and fragment and a leading
    /// `www.` aside, in lower case; the whole text in lower case when that leaves nothing; nil
    /// without a URL.
    static func accountHost(of url: String?) -> String? {
        guard let url, !url.isEmpty else { return nil }
        let text = url.lowercased()
        var rest = Substring(text)
        while let first = rest.first, first == " " || first == "\t" { rest.removeFirst() }
        while let last = rest.last, last == " " || last == "\t" { rest.removeLast() }
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("www.") { rest = rest.dropFirst(4) }
        return rest.isEmpty ? text : String(rest)
    }

    /// What the name of an item without a title was made of (`ForeignNaming.source(site:user:)`):
    /// its site, else its username (nil when empty), and a site or username passed over because it
    /// is only blank or invisible characters (recheck60 R0: said, so that the name is explained).
    static func madeOf(user: String?, site: String?) -> String {
        let blank = "only blank or invisible characters"
        switch source(site: site, user: user) {
        case .site(let site):
            return "its site \(site)"
        case .username(let user):
            guard let site else { return "its username \(user)" }
            return "its username \(user) (its site \(site) is \(blank))"
        case .nothing:
            switch (site, user.flatMap { $0.isEmpty ? nil : $0 }) {
            case (nil, nil): return "nothing: it has no site or username"
            case (let site?, nil): return "nothing: its site \(site) is \(blank), and it has no username"
            case (nil, let user?): return "nothing: its username \(user) is \(blank), and it has no site"
            case (let site?, let user?): return "nothing: its site \(site) and its username \(user) are \(blank)"
            }
        }
    }

    /// The host of a site (`x.example/a` → `x.example`): its characters up to the first '/';
    /// an ASCII site by its bytes (one byte, one character).
    static func host(ofSite site: String) -> String {
        var text = site
        let cut: Int?? = text.withUTF8 { bytes in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            return .some(bytes.firstIndex(of: UInt8(ascii: "/")))
        }
        switch cut {
        case .some(.none): return site
        case .some(.some(let end)): return String(decoding: site.utf8.prefix(end), as: UTF8.self)
        case .none: return String(site.prefix { $0 != "/" })
        }
    }
}
