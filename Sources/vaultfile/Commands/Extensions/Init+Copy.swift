import ArgumentParser
import VaultFile
import VaultFormat
import VaultModel

// MARK: - An independent copy (`init --copy-of SOURCE`)

extension VaultfileCommand.Init {
    /// `--copy-of` keeps the source's slots: the options that choose a new vault's slots, and
    /// `--unsigned`, do not go with it.
    func validateCopy() throws {
        // Never the default vault (VAULTFILE_PATH or the standard path): a copy lands where it is named.
        guard unlock.location.vault != nil else {
            throw ValidationError("--copy-of needs --vault NEW, the path of the copy to create: it is never written to "
                                  + "the default vault (VAULTFILE_PATH or the standard path)")
        }
        let chosen = [(!recipients.isEmpty, "--recipient"), (!recipientsFiles.isEmpty, "--recipients-file"), (withKeyfile != nil, "--with-keyfile"),
                      (askPassword, "--ask-password"), (allowClassical, "--allow-classical"), (unsigned, "--unsigned")].filter(\.0).map(\.1)
        if !chosen.isEmpty {
            throw ValidationError("--copy-of keeps the source's keyslots and signing; \(chosen.joined(separator: ", ")) cannot go with it "
                                  + "(change the copy's slots afterwards with 'vaultfile slot add' and 'slot rm')")
        }
    }

    /// Opens `source` with the unlock sources (a slot's secret, never the agent's key alone), makes
    /// its independent copy (`UnlockedVault.independentCopy`) and creates it at `--vault`, which
    /// must not exist; the source is only read.
    ///
    /// A source this machine does not trust as its members' is refused as a write to it is (exit
    /// 7, `--allow-untrusted` to take it): the copy is a new vault this machine trusts, so a planted
    /// copy would otherwise be laundered into one. A slot whose key this machine recorded as
    /// removed from the team (or that a tombstone of the source names) is never carried over.
    func createCopy(of source: String) throws {
        let store = unlock.location.store
        if store.exists { throw VaultError.vaultExists(path: store.path) }
        let missing = try Self.missingFolders(for: store.path)
        var from = unlock
        from.location.vault = source
        guard absolutePath(from.location.path) != absolutePath(store.path) else {
            throw ValidationError("--copy-of names the vault to create; give the new vault's path with --vault")
        }
        let opened = try from.open(handingValues: true, askingAgent: false)
        let removed = Self.removedSlots(of: opened)
        for slot in removed {
            Messages.warning("keyslot \(slot.position) of \(from.location.path) (\(slot.fingerprint)) is left out of the copy: "
                             + "its key was removed from this vault's members")
        }
        let copy = try opened.independentCopy(dropping: Set(removed.map(\.position)), now: currentTimeMilliseconds())
        try Self.createFolders(missing)
        try store.create(copy: copy)
        if copy.isSigned { Self.pinMembers(copy, path: store.path) }
        let kinds = copy.slots.map(\.kind)
        Messages.info("created \(store.path), an independent copy of \(from.location.path): a new vault id and file key, "
                      + "\(copy.vault.count) entr\(copy.vault.count == 1 ? "y" : "ies"), "
                      + "keyslots: \(kinds.joined(separator: ", ")); \(copy.isSigned ? "signed (format 1.3)" : "unsigned")")
        Messages.info("the two are separate vaults from now on: a write to one never makes the other look older, "
                      + "and 'vaultfile merge' refuses to combine them (move entries with export and import)")
    }

    /// The slots of `opened` whose key this machine's member trust records as removed, or that a
    /// tombstone of its seal names (none for an unsigned vault, or without a state folder).
    static func removedSlots(of opened: UnlockedVault) -> [(position: Int, fingerprint: String)] {
        guard let evidence = opened.sealEvidence else { return [] }
        var removed = Set(evidence.record.tombstones.map(\.removed))
        if let state = try? StateFolder.usable(writing: false), let record = try? MemberTrust(state: state).record(of: opened.header.vaultID) {
            removed.formUnion(record.removed.map(\.id))
        }
        return evidence.slots.filter { !$0.key.isEmpty }.compactMap { slot in
            let key = MemberKey(type: slot.type, bytes: slot.key)
            return removed.contains(key.id) ? (slot.position, key.fingerprint) : nil
        }
    }
}
