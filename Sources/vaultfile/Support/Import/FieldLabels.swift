import VaultInterchange
import VaultModel

// MARK: - --field by a label an import kept

extension ImportedLabels {
    /// `resolve(_:of:in:)` for `get`/`share --field`, which says when the label names several
    /// fields: an import that met `API Key` twice (and an `API_Key`) kept them as `API_Key_2` and
    /// `API_Key_3`, each line of `labels` saying `API Key`; the label then finds neither, and the
    /// error names both and how to get each (cold58 L7) rather than "has no field". Otherwise
    /// what `resolve` returns, whose own read says a field is not found. With `note`, a field
    /// found by its stored name whose name is also the kept label of other fields (1pux `Extra`
    /// twice: `Extra`, and `Extra_2` labelled `Extra`) is returned with a note on stderr naming
    /// them (cold60 L2): the stored name comes first, and the note says so. `note` is what the
    /// command does with the field (`printed` for `get`, `shared` for `share`), so the note
    /// tells the truth for each (cold62 L4).
    static func field(_ field: String, of name: String, in vault: Vault, note: String? = nil) throws(CLIError) -> String {
        let resolved = resolve(field, of: name, in: vault)
        let stored = (try? vault.withValue(of: name, part: .field(field)) { _ in true }) == true
        if let note, stored {
            let others = fields(labelled: field, of: name, in: vault).filter { $0 != field }
            if !others.isEmpty {
                let named = others.map { "'\(EntryName.escapingFormatCharacters($0))'" }.joined(separator: ", ")
                Messages.note("the field '\(EntryName.escapingFormatCharacters(field))' is \(note); the label '\(EntryName.escapingFormatCharacters(field))' "
                              + "also names \(others.count == 1 ? "the field" : "the fields") \(named) (ask for \(others.count == 1 ? "it" : "each") by that name)")
            }
        }
        guard resolved == field, !stored else { return resolved }
        let shared = fields(labelled: field, of: name, in: vault)
        guard shared.count > 1 else { return resolved }
        throw .fieldLabelShared(entry: name, label: field, fields: shared)
    }
}
