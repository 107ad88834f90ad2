import VaultModel

// MARK: - Names of items without a usable title

extension ForeignNaming {
    /// What the name of an item without a usable title is made of (`source(site:user:)`).
    enum Source: Equatable {
        case site(String)
        case username(String)
        /// Neither names anything: the item is `untitled`.
        case nothing

        /// The text the name is made of; nil for `nothing`.
        var text: String? {
            switch self {
            case .site(let site): site
            case .username(let user): user
            case .nothing: nil
            }
        }
    }

    /// What an item without a usable title is named after: its first URL's site (`site`), else its
    /// username, each only when cleaning leaves it something (`namesSomething`), else nothing
    /// (`untitled`). A site or username of only blank or invisible characters (`https://<U+200B>/`)
    /// names nothing: joined to its folders it would add no part, and the item would take its
    /// folder's or the prefix's own name (recheck60 R0; recheck58 N1 for titles).
    static func source(site: String?, user: String?) -> Source {
        if let site, namesSomething(site) { return .site(site) }
        if let user, !user.isEmpty, namesSomething(user) { return .username(user) }
        return .nothing
    }

    /// Whether cleaning (`ImportedNameCleaner.entryName(fromParts:)`) leaves `part` anything: not
    /// when it is only spaces, controls and invisible format characters. A printable ASCII
    /// character other than a space is never taken away ('/' becomes '-'), so a part holding
    /// one (most) is not cleaned to find out; `ForeignNamingSiteTests` ties the two.
    static func namesSomething(_ part: String) -> Bool {
        var text = part
        let visible = text.withUTF8 { bytes in bytes.contains { $0 > 0x20 && $0 < 0x7F } }
        return visible || !ImportedNameCleaner.entryName(fromParts: [part]).isEmpty
    }
}
