import VaultModel

// MARK: - 1pux: values that are not text as they are stored, keys the reader does not know

extension OnePUXReader {
    /// The keys of an item that the reader knows besides those it reads (1Password's 1PUX format
    /// page and the exports it describes): `uuid` (read for references), `trashed` (older
    /// exports' trash mark: `state` says it now). Any other key of an item, or of its `details`
    /// (beyond `loginFields`, `password`, `notesPlain`, `sections`, `passwordHistory`,
    /// `documentAttributes` and `htmlForm`), is counted in a warning `not kept: unknown key 'X' of
    /// 1Password items` (a later format's: a passkey, say), as for Bitwarden (cold58 L2).
    static let knownItemKeys: [StaticString] = ["trashed", "item"]

    /// The name of the loss of an unknown key `key` (its JSON text, at most 64 bytes shown) at `path`.
    /// The start of what an item of a `state` the reader does not know loses (cold60 L10): the
    /// state, which the warning (`NotKeptReason.unknownState`) says the item was imported without, as an active item.
    static let unknownStateLoss = "1Password's unknown item state "

    static func unknownKeyLoss(_ key: UnsafeBufferPointer<UInt8>, in path: String) -> String {
        "unknown key '\(path)\(String(decoding: key.prefix(64), as: UTF8.self))' of 1Password items"
    }

    /// The text of a section field's number whose kind says what it is (cold58 L9): a `date` (Unix
    /// seconds; 1Password stores a day as a time on it) as its day in ISO 8601, `2000-01-01`; a
    /// `monthYear` (`YYYYMM`, a card's expiry) as `2030-12`. Nil for any other kind, or a number
    /// that is no such thing (kept as the number it is).
    static func dateText(kind: String, _ number: Int64) -> String? {
        switch kind {
        case "date":
            // Within the years 0000–9999: a day ISO 8601 writes with four digits.
            guard (-62_167_219_200...253_402_300_799).contains(number) else { return nil }
            return String(UTCTime.rfc3339(seconds: number).prefix(10))
        case "monthYear":
            let (year, month) = number.quotientAndRemainder(dividingBy: 100)
            guard (1...9999).contains(year), (1...12).contains(month) else { return nil }
            return UTCTime.year(year) + "-" + (month < 10 ? "0" : "") + String(month)
        default:
            return nil
        }
    }

    /// Points each field of kind `reference` (its value another item's uuid) at the item of
    /// `items` with that uuid (`ids`, in the items' order), whose entry name the build puts in
    /// its place; one naming an item the export does not hold (deleted, in the trash, in another
    /// account's export) keeps the uuid as its value, counted in `notKept`.
    static func resolveReferences(_ result: inout ForeignImport, ids: [String]) {
        guard result.items.contains(where: { $0.fields.contains { $0.reference != nil } }) else { return }
        var indexOf: [String: Int] = [:]
        for (index, id) in ids.enumerated() where !id.isEmpty && index < result.items.count { indexOf[id] = indexOf[id] ?? index }
        // Counted as references, in items, the first items named (att60 F8: two in one item were "2 items").
        var unresolved = 0, inItems = 0, names: [String] = []
        for item in result.items.indices {
            let before = unresolved
            for field in result.items[item].fields.indices where result.items[item].fields[field].reference != nil {
                let id = String(decoding: result.items[item].fields[field].value, as: UTF8.self)
                result.items[item].fields[field].reference = indexOf[id]
                if indexOf[id] == nil { unresolved += 1 }
            }
            if unresolved > before {
                result.items[item].warned.insert(.referencesUnresolved)
                inItems += 1
                if names.count < namedItems { names.append((result.items[item].folders + [result.items[item].title]).joined(separator: "/")) }
            }
        }
        if unresolved > 0 { result.warnings.append(.referencesUnresolved(count: unresolved, items: names, itemCount: inItems)) }
    }

    /// How many items a warning names (then "and N more").
    static let namedItems = 3

    /// The last second a date can be written as (9999-12-31T23:59:59Z): an item's time past it is left out (cold62 L2).
    static let latestTime: Int64 = 253_402_300_799
}
