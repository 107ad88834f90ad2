import ArgumentParser
import SecureMemory
import VaultFile
import VaultFormat
import VaultModel

// MARK: - What edit keeps while the editor runs

/// What `edit` keeps from the vault it opened before the editor ran, and nothing more: the file
/// key (in guarded memory, `SecureBytes`), the slot's seal signer, and the entry as it was (the
/// base of the three-way rule on save). The decrypted vault itself is let go before the editor starts.
struct EditStart {
    /// The key the vault opened with: tried first on save.
    let fileKey: SecureBytes
    /// Who signed for the slot that opened it (a signed vault), kept for a save under the same key.
    let signer: (any SealSigner)?
    /// The entry when the editor opened; nil when there was none.
    private(set) var entry: Entry?
    /// The bytes the editor was given (the part edited; empty for a new entry or field).
    private(set) var original: [UInt8]

    /// Takes what `edit` keeps from `opened` for `part` of `name`, checking first that `name` is
    /// one a new entry may have (an edit may create it).
    init(_ opened: UnlockedVault, name: String, part: EntryPart) throws {
        try opened.vault.checkNewName(name, allowingFormatCharacters: false)
        fileKey = opened.fileKey
        signer = opened.sealSigner
        entry = opened.vault.existingName(for: name).flatMap { opened.vault.entry($0) }
        original = (try? opened.vault.value(of: name, part: part)) ?? []  // a missing entry or field starts empty
    }

    /// Overwrites the kept value and fields (the key is wiped when its last holder lets it go).
    mutating func wipe() {
        SecureMemory.wipe(&original)
        guard var entry else { return }
        SecureMemory.wipe(&entry.value)
        for key in Array(entry.fields.keys) {
            var bytes = entry.fields[key] ?? []
            entry.fields[key] = nil
            SecureMemory.wipe(&bytes)
        }
        self.entry = nil
    }
}

// MARK: - Saving

/// A save of `edit` that failed (a copy older than one seen here, exit 7; a rotated key no source
/// opens, exit 3; …): reported as `underlying` is, saying that the edit was not saved and its
/// text is wiped, with `underlying`'s hint and exit status.
struct EditNotSavedError: Error {
    /// Why the save failed.
    let underlying: any Error
}

extension VaultfileCommand.Edit {
    /// Opens the vault again under its lock (the one unlock-and-seal path: the kept key first, then
    /// the agent and the unlock sources when a `passwd` rotated it meanwhile) and applies the edit
    /// with merge's three-way rule against the entry as it was (`VaultMerge.applyEdit`). A conflict
    /// leaves the edit in `NAME.conflict-edit` and exits 1, as a merge with conflicts does.
    func save(_ edited: [UInt8], part: EntryPart, start: EditStart) throws {
        let outcome: VaultMerge.EditOutcome
        do {
            outcome = try unlock.update(knownKey: start.fileKey) { unlocked in
                // Opened with the same key: the slot that opened it before the editor signs the seal.
                if let signer = start.signer, unlocked.fileKey.constantTimeEquals(start.fileKey) { unlocked.sealSigner = signer }
                return try VaultMerge.applyEdit(edited, part: part, of: name, base: start.entry, to: &unlocked.vault)
            }
        } catch let error where ErrorReport(error) != nil {
            throw EditNotSavedError(underlying: error)
        }
        switch outcome {
        case .applied, .unchanged:
            return
        case .restored:
            Messages.note("'\(name)' was removed while the editor ran; the edited entry was stored again under its name, "
                          + "as a merge keeps a changed entry against a removal")
        case .conflict(let parked, let parts):
            let what = parts.map { $0.fieldName.map { "field '\($0)'" } ?? "the value" }.joined(separator: ", ")
            Messages.error("'\(name)' was changed differently while the editor ran (\(what)); that change stays in '\(name)' "
                           + "and your edit was stored as '\(parked)'",
                           hint: "compare the two with 'vaultfile get', then drop yours ('vaultfile rm' of its name) or keep it in place "
                               + "of the other with: vaultfile mv --force \(shellWord(parked)) \(shellWord(name))")
            throw ExitCode(.conflicts)
        }
    }
}
