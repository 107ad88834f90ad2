import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What set and restore say about a lent entry

/// The notes of verbs that change a lent entry (`age-identity --lend`) behind the lend: its
/// identity lines work as long as the entry holds the `age-lent` field they were made under.
enum LentEntryNotes {
    /// The `age-lent` field of `name` as it is now, nil when the entry is missing or not lent.
    static func lendField(of vault: Vault, name: String) -> [UInt8]? {
        vault.entry(name)?.fields[VaultfilePluginIdentity.lentField]
    }

    /// Warns when `set` replaces the value of a lent entry: it stays lent, and its lines unwrap with the new key.
    static func warnIfValueReplaced(_ vault: Vault, name: String, part: EntryPart) {
        guard part == .value, lendField(of: vault, name: name) != nil else { return }
        Messages.warning("'\(name)' stays lent to age: the identity lines printed for it now unwrap with the new value's key; "
                         + "'vaultfile age-identity \(name) --unlend' retires them")
    }

    /// Notes when restoring `revision` of `name` brings back an `age-lent` field the entry does not
    /// hold now: identity lines retired by `--unlend` (or by a new lend key) work again.
    static func noteIfRestoreLends(_ vault: Vault, name: String, revision: Int) {
        guard let old = try? vault.version(of: name, revision: revision).entry.fields[VaultfilePluginIdentity.lentField] else { return }
        var now = lendField(of: vault, name: name) ?? []
        defer { wipe(&now) }
        guard old != now else { return }
        Messages.note("revision \(revision) of '\(name)' brings back its age-lent field: identity lines retired by "
                      + "'age-identity --unlend' work again; 'vaultfile age-identity \(name) --unlend' retires them")
    }
}
