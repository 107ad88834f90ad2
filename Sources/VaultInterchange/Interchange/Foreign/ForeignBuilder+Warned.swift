// MARK: - Items named in a reader's warnings, by their entry names

/// The entry names (after numbering) of the first items each kind of reader's warning names
/// (`ForeignItem.warned`), noted as the builder names them. A reader names an item by its title
/// in the source (`Work/db01`), which may be another account's entry in the vault once repeated
/// titles are numbered (`Work/db01 (2)`): `naming(_:)` puts the entry names in (cold62 L5).
struct WarnedNames {
    /// How many names each kind keeps: as many as a reader's warning names.
    static let kept = 3
    /// The names noted, one list per kind (`ForeignItem.Warned.kinds`' order).
    private var names = Array(repeating: [String](), count: ForeignItem.Warned.kinds.count)

    /// Notes the entry `name` for each kind of `warned`.
    mutating func note(_ warned: ForeignItem.Warned, name: String) {
        for (index, kind) in ForeignItem.Warned.kinds.enumerated() where warned.contains(kind) && names[index].count < Self.kept {
            names[index].append(name)
        }
    }

    /// `warning` with the entry names noted for its kind in place of the reader's, when as many
    /// were noted (a build that noted fewer, or none, leaves the reader's).
    func naming(_ warning: ImportWarning) -> ImportWarning {
        switch warning {
        case .unprotectedStringsNotKept(let items, let count):
            return .unprotectedStringsNotKept(items: names(.unprotectedStrings, else: items), count: count)
        case .attachmentDataMissing(let items, let count):
            return .attachmentDataMissing(items: names(.attachmentDataMissing, else: items), count: count)
        case .datesKeptAsWritten(let count, let items, let itemCount):
            return .datesKeptAsWritten(count: count, items: names(.datesKeptAsWritten, else: items), itemCount: itemCount)
        case .timesReplaced(let count, let items, let itemCount):
            return .timesReplaced(count: count, items: names(.timesReplaced, else: items), itemCount: itemCount)
        case .referencesUnresolved(let count, let items, let itemCount):
            return .referencesUnresolved(count: count, items: names(.referencesUnresolved, else: items), itemCount: itemCount)
        default:
            return warning
        }
    }

    /// The names noted for `kind`, as many as `reader` holds; `reader` when fewer were noted.
    private func names(_ kind: ForeignItem.Warned, else reader: [String]) -> [String] {
        guard let index = ForeignItem.Warned.kinds.firstIndex(of: kind), names[index].count >= reader.count else { return reader }
        return Array(names[index].prefix(reader.count))
    }
}
