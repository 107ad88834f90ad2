import KDF
import SecureMemory

// MARK: - Whole operations with any unlock source

extension VaultStore {
    /// Creates a format-1.1 vault opened by `slots` (recipients, keyfiles, passwords…); refuses
    /// to overwrite an existing file.
    public func create(_ vault: Vault = Vault(), slots: [(slot: NewSlot, label: String)], now: Int64) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, slots: slots, now: now)
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
    }

    /// Reads and unlocks the vault with the first of `credentials` that opens a slot, without the lock.
    /// With `rollback`, the vault is compared with what this machine has seen of it and the record raised.
    public func open(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil
    ) throws -> UnlockedVault {
        let unlocked = try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey, entriesOnly: readsEntriesOnly).unlocked
        rollback?.opened(unlocked)
        rollback?.finished(onDisk: unlocked.header, path: path)
        return unlocked
    }

    /// Locks, opens with `credentials`, runs `edit`, and re-seals the vault if anything changed
    /// (its entries, or its keyslots: `addSlot`).
    /// With `rollback`, a write to a copy older than one seen here is refused before anything is
    /// written, and the new generation is recorded after the rename (as `update(password:…)`).
    public func update<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        // The header of the file on disk: the one unlocked, until a rename puts the new one there.
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        return try withLock {
            let (unlocked, file) = try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey)
            onDisk = unlocked.header
            rollback?.opened(unlocked)
            let result = try edit(unlocked)
            if unlocked.hasChanges {
                try rollback?.willWrite(unlocked, path: path)
                try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try unlocked.seal(to: output) }
                onDisk = unlocked.header
            }
            return result
        }
    }

    /// Locks, opens with `credentials`, and writes the vault `change` makes of it (a rotation:
    /// `UnlockedVault.rotated`), all under the lock. Returns what `change` returns beside the vault.
    ///
    /// `rotated` receives the written header and its file key once the new file is in place, when
    /// the key changed (`passwd`, `slot rm`, `rekey`): an agent that holds the old key is handed
    /// the new one beside it (docs/AGENT.md).
    public func replaceKeys<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil, rotated: ((VaultHeader, SecureBytes) -> Void)? = nil,
        _ change: (UnlockedVault) throws -> (vault: UnlockedVault, result: R)
    ) throws -> R {
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        return try withLock {
            let (unlocked, file) = try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey)
            onDisk = unlocked.header
            rollback?.opened(unlocked)
            let (next, result) = try change(unlocked)
            try rollback?.willWrite(next, path: path)
            try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try next.seal(to: output) }
            onDisk = next.header
            if !next.fileKey.constantTimeEquals(unlocked.fileKey) { rotated?(next.header, next.fileKey) }
            return result
        }
    }

    /// Opens the vault reading its payload chunk by chunk, with any unlock source.
    private func openStreaming(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?, entriesOnly: Bool = false
    ) throws -> (unlocked: UnlockedVault, file: OpenedFile) {
        let opened = try openHeader()
        var payload = FileCiphertext(opened.file, from: opened.headerLength, entriesOnly: entriesOnly)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, credentials: credentials, limits: limits,
                                           willDeriveKey: willDeriveKey)
        return (unlocked, opened.file)
    }
}
