import VaultModel

// MARK: - Fields found by the label an import kept

/// The labels an import of another password manager kept in the field `labels` (one line
/// `FIELD<TAB>LABEL` for each field stored under another name than the source's label:
/// `xn--r0a4cp<TAB>Пин`, `title_2<TAB>title`), read back: `get --field Пин` finds the field.
public enum ImportedLabels {
    /// The name of the field that holds the labels.
    public static let fieldName = ForeignBuilder.labelsField

    /// The field of `name` in `vault` that `field` names: `field` itself when the entry has a
    /// field of that name (or has no `labels`, or none of them is `field`), else the first field
    /// whose kept label is `field` (compared in NFC). The entry's lookup errors are left to the
    /// caller's own read.
    public static func resolve(_ field: String, of name: String, in vault: Vault) -> String {
        if (try? vault.withValue(of: name, part: .field(field)) { _ in true }) == true { return field }
        guard var kept = try? vault.value(of: name, part: .field(fieldName)) else { return field }
        defer { for index in kept.indices { kept[index] = 0 } }
        let wanted = EntryName.normalized(field)
        for line in kept.split(separator: 0x0A) {
            guard let tab = line.firstIndex(of: 0x09) else { continue }
            let stored = String(decoding: line[line.startIndex..<tab], as: UTF8.self)
            let label = String(decoding: line[(tab + 1)...], as: UTF8.self)
            guard sameUTF8(EntryName.normalized(label), wanted),
                  (try? vault.withValue(of: name, part: .field(stored)) { _ in true }) == true else { continue }
            return stored
        }
        return field
    }
}
