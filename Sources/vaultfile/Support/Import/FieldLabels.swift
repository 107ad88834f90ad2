import VaultInterchange
import VaultModel

// MARK: - --field by a label an import kept

extension ImportedLabels {
    /// `resolve(_:of:in:)` for `get`/`share --field`, which says when the label names several
    /// fields: an import that met `API Key` twice (and an `API_Key`) kept them as `API_Key_2` and
    /// `API_Key_3`, each line of `labels` saying `API Key`; the label then finds neither, and the
    /// error names both and how to get each (cold58 L7) rather than "has no field". Otherwise
    /// what `resolve` returns, whose own read says a field is not found.
    static func field(_ field: String, of name: String, in vault: Vault) throws(CLIError) -> String {
        let resolved = resolve(field, of: name, in: vault)
        guard resolved == field, (try? vault.withValue(of: name, part: .field(field)) { _ in true }) != true else { return resolved }
        let shared = fields(labelled: field, of: name, in: vault)
        guard shared.count > 1 else { return resolved }
        throw .fieldLabelShared(entry: name, label: field, fields: shared)
    }
}
