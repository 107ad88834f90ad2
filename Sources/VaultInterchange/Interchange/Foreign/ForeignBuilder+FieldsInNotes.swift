import VaultModel

// MARK: - Custom fields past an entry's fields, kept in its notes

extension ForeignBuilder {
    /// Puts an item's (or a version's) custom `fields` in `set` when they fit in an entry with
    /// the fields put before them and `labels` (nil then); else puts none and returns where they
    /// stop being fields: the index of the first one moved to the notes, room kept for `labels`
    /// and for `notes` when there are none yet. An empty value takes no field.
    static func customFieldsKept(_ fields: [ForeignField], names: [Int: String] = [:], notes: String?, entry: String,
                                 in set: inout FieldSet, tally: inout FieldRenamingTally) -> Int? {
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
        var room = limit - 1 - set.count - (notes?.isEmpty ?? true ? 1 : 0)
        room = max(room, 0)
        var kept = 0
        for (index, field) in fields.enumerated() where !field.value.isEmpty {
            if kept == room { return index }
            kept += 1
        }
        set.putCustomFields(fields, names: names, entry: entry, tally: &tally)  // not reached: they did not fit
        return nil
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
    /// a string), so nothing is lost in the lines.
    static func notes(_ notes: String?, with moved: [ForeignField]) -> String {
        var text = notes ?? ""
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        for field in moved {
            let value = String(decoding: field.value, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n  ")
            text += "\(field.label): \(value)\n"
        }
        return text
    }
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
