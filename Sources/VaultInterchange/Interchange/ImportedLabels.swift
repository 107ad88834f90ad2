import VaultModel

// MARK: - Fields found by the label an import kept

/// The labels an import of another password manager kept in the field `labels` (one line
/// `FIELD<TAB>LABEL` for each field stored under another name than the source's label:
/// `xn--r0a4cp<TAB>Пин`, `title_2<TAB>title`), read back: `get --field Пин` finds the field.
public enum ImportedLabels {
    /// The name of the field that holds the labels.
    public static let fieldName = ForeignBuilder.labelsField

    /// The field of `name` in `vault` that `field` names: `field` itself when the entry has a
    /// field of that name (or has no `labels`), else the one field whose kept label is exactly
    /// `field` (compared in NFC). A line counts only when its field exists, is not one an import
    /// never renames (`username`, `url`, `notes`, `totp`, `title`, `labels`… never need a label),
    /// and its label is not blank; when no line or more than one line matches, `field` is returned
    /// unchanged, so the caller's own read says the field is not found. The entry's lookup errors
    /// are left to the caller's own read. (References, `vf://NAME#FIELD`, name a field by its
    /// stored name only: docs/INTERCHANGE.md, "Fields".)
    public static func resolve(_ field: String, of name: String, in vault: Vault) -> String {
        if (try? vault.withValue(of: name, part: .field(field)) { _ in true }) == true { return field }
        let found = fields(labelled: field, of: name, in: vault)
        // Two fields kept under one label: neither is the one asked for.
        return found.count == 1 ? found[0] : field
    }

    /// The fields of `name` whose kept label is `label` (compared in NFC), in the order of
    /// `labels`, each once: the lines `resolve(_:of:in:)` counts. More than one when an import
    /// kept two fields under one label (`API Key` twice: `API_Key_2`, `API_Key_3`), which a
    /// message names so that each can be asked for by its name.
    public static func fields(labelled label: String, of name: String, in vault: Vault) -> [String] {
        guard !label.allSatisfy(\.isWhitespace) else { return [] }
        guard var kept = try? vault.value(of: name, part: .field(fieldName)) else { return [] }
        defer { for index in kept.indices { kept[index] = 0 } }
        let wanted = EntryName.normalized(label)
        var found: [String] = []
        for line in kept.split(separator: 0x0A) {
            guard let tab = line.firstIndex(of: 0x09) else { continue }
            let stored = String(decoding: line[line.startIndex..<tab], as: UTF8.self)
            let text = String(decoding: line[(tab + 1)...], as: UTF8.self)
            guard ForeignBuilder.reservedNames[stored] == nil, !text.allSatisfy(\.isWhitespace),
                  sameUTF8(EntryName.normalized(text), wanted), !found.contains(stored),
                  (try? vault.withValue(of: name, part: .field(stored)) { _ in true }) == true else { continue }
            found.append(stored)
        }
        return found
    }

    /// `label` as a line of `labels` can hold it: each control character (a newline or tab would
    /// start a line or a label of its own) becomes a space. The import's warning names the field
    /// the label's value was stored as.
    static func storable(_ label: String) -> String {
        guard label.unicodeScalars.contains(where: isControl) else { return label }
        return String(String.UnicodeScalarView(label.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
