import VaultModel

// MARK: - Custom fields past an entry's fields, kept in its notes

extension ForeignBuilder {
    /// Puts an item's (or a version's) custom `fields` in `set` when they fit in an entry with
    /// the fields put before them and `labels` (nil then); else puts as many as fit, room kept
    /// for `labels` and for `notes` when there are none yet, and returns the others, to become
    /// lines of the notes. Which ones stay fields follows their content, never the file's order
    /// (`ForeignField.numberedBefore`: by label, then section; then the file's order), so that an
    /// export listing them in another order keeps the same fields (cold63 F4); the moved ones
    /// come in that order too. An empty value takes no field and is no line.
    static func customFieldsKept(_ fields: [ForeignField], names: [Int: String] = [:], notes: String?, entry: String,
                                 in set: inout FieldSet, tally: inout FieldRenamingTally) -> [ForeignField]? {
        let limit = VaultLimits.maxFieldsPerEntry
        // Most items: they fit whatever the labels; counted only when they may not.
        let filled = fields.count > limit - 1 - set.count ? fields.reduce(0) { $0 + ($1.value.isEmpty ? 0 : 1) } : 0
        guard filled > limit - 1 - set.count else {
            set.putCustomFields(fields, names: names, entry: entry, tally: &tally)
            return nil
        }
        // Exactly the entry's fields: they fit when no label needs `labels`, which only putting them tells.
        if filled == limit - set.count {
            var all = set, allTally = tally
            all.putCustomFields(fields, names: names, entry: entry, tally: &allTally)
            if all.countWithLabels <= limit {
                (set, tally) = (all, allTally)
                return nil
            }
        }
        let room = max(limit - 1 - set.count - (notes?.isEmpty ?? true ? 1 : 0), 0)
        // Ties (equal fields) in file order: either order stores the same.
        let order = fields.indices.filter { !fields[$0].value.isEmpty }.sorted { first, second in
            ForeignField.numberedBefore(fields[first], fields[second]) || (!ForeignField.numberedBefore(fields[second], fields[first]) && first < second)
        }
        let kept = order.prefix(room)
        var keptNames: [Int: String] = [:]
        for (position, index) in kept.enumerated() { if let name = names[index] { keptNames[position] = name } }
        set.putCustomFields(kept.map { fields[$0] }, names: keptNames, entry: entry, tally: &tally)
        return order.dropFirst(room).map { fields[$0] }
    }

    /// The builder's own fields an entry always has room for: `username`, `url`, `notes`, `totp`,
    /// `title`, `folder` and `labels`.
    static let ownFields = 7

    /// The URLs and reader's facts (`extras`: tags, passkey members…) of an item (or a version)
    /// that fit in an entry beside the builder's own fields (`ownFields`): the first URL always,
    /// then the facts, then the further URLs, as many as the entry's fields leave room for; the
    /// rest `moved`, as fields to become `label: value` lines of the notes (`notes(_:with:)`): a
    /// further URL labelled as the source named it (`urlLabels`), else `url3`, `url4`… as an export
    /// names it. Most items: all of them, nothing moved.
    static func ownFieldsKept(urls: [String], urlLabels: [Int: String], extras: [(label: String, value: String)])
        -> (urls: [String], extras: [(label: String, value: String)], moved: [ForeignField]) {
        let spare = VaultLimits.maxFieldsPerEntry - ownFields
        guard max(urls.count - 1, 0) + extras.count > spare else { return (urls, extras, []) }
        let keptExtras = min(extras.count, spare)
        let keptURLs = min(urls.count, 1 + spare - keptExtras)
        var moved: [ForeignField] = []
        for extra in extras[keptExtras...] where !extra.value.isEmpty {
            moved.append(ForeignField(label: extra.label, value: Array(extra.value.utf8), protected: false))
        }
        for position in keptURLs..<urls.count where !urls[position].isEmpty {
            moved.append(ForeignField(label: urlLabels[position] ?? "url\(position + 1)", value: Array(urls[position].utf8), protected: false))
        }
        return (Array(urls[..<keptURLs]), Array(extras[..<keptExtras]), moved)
    }

    /// The item's notes followed by one `label: value` line per field in `moved` (a value's
    /// further lines indented by two spaces). Field values are text (every reader makes them of
    /// a string), so nothing is lost in the lines. A label that is the name of a field the entry
    /// holds (`set`: a kept `API_Key` that another label was cleaned to, the login's `username`)
    /// is marked `LABEL (not kept as a field): value`, so that no line reads as that field's
    /// value (cold63 F4).
    static func notes(_ notes: String?, with moved: [ForeignField], beside set: inout FieldSet) -> String {
        var text = notes ?? ""
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        for field in moved {
            let value = String(decoding: field.value, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
            text += set.holds(field.label) ? "\(field.label)\(Self.notAFieldMark): \(value)\n" : "\(field.label): \(value)\n"
        }
        return text
    }

    /// What follows a notes line's label that is also the name of one of the entry's fields.
    static let notAFieldMark = " (not kept as a field)"
}

// MARK: - Items counted by name

/// A count of things in how many items, with the names of the first few (a warning's).
struct NamedCount {
    /// How many names are kept.
    static let namedItems = 3
    private(set) var count = 0, items = 0
    private(set) var names: [String] = []

    /// Counts `count` things of the item called `name`.
    mutating func add(_ name: String, count: Int) {
        self.count += count
        items += 1
        if names.count < Self.namedItems { names.append(name) }
    }
}
