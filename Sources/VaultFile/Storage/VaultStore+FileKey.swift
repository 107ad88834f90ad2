import KDF
import SecureMemory

// MARK: - Whole operations with a file key instead of a secret

/// The storage side of the agent (docs/AGENT.md): a command asks for the file key of the header it
/// just read, and opens or updates the vault with it, running no KDF. Writes happen here, under the
/// vault's lock, exactly as with a secret, and the rollback check runs as it does there; the agent
/// never touches the file.
extension VaultStore {
    /// Finds the file key of a vault from its parsed header (the agent's answer), or nil when none
    /// is known. A key it returns is used only if the header MAC verifies under it.
    public typealias FileKeyLookup = (VaultHeader) throws -> SecureBytes?

    /// Reads and opens the vault with a known file key (no lock, as `open(credentials:…)`); a key the
    /// header MAC does not verify under is refused (`VaultError.fileKeyRejected`).
    public func open(fileKey: SecureBytes, rollback: RollbackCheck? = nil) throws -> UnlockedVault {
        let opened = try openHeader()
        var payload = FileCiphertext(opened.file, from: opened.headerLength, entriesOnly: readsEntriesOnly)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, fileKey: fileKey)
        rollback?.opened(unlocked)
        rollback?.finished(onDisk: unlocked.header, path: path)
        return unlocked
    }

    /// Reads the header, asks `lookup` for its file key and opens the vault with it; nil when the
    /// lookup has no key or gives one the header MAC does not verify under (then nothing was
    /// decrypted, the rollback check saw nothing, and the caller falls back to the secrets).
    public func open(lookingUp lookup: FileKeyLookup, rollback: RollbackCheck? = nil) throws -> UnlockedVault? {
        let opened = try openHeader()
        guard let fileKey = try lookup(opened.header), VaultCodec.verifies(opened.header, fileKey: fileKey) else { return nil }
        var payload = FileCiphertext(opened.file, from: opened.headerLength, entriesOnly: readsEntriesOnly)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, authenticatedBy: fileKey, opened: nil)
        rollback?.opened(unlocked)
        rollback?.finished(onDisk: unlocked.header, path: path)
        return unlocked
    }

    /// Locks, reads the header, asks `lookup` for its file key, opens, runs `edit`, and re-seals the
    /// vault if its contents changed, as `update(credentials:…)` does (a write to a copy older than
    /// one seen here is refused by `rollback`). Returns nil, having read nothing but the header and
    /// written nothing, when the lookup has no key that verifies.
    ///
    /// The lookup runs under the lock, on the header that will be replaced, so a key rotated by
    /// a `passwd` that finished just before is never used on the new file.
    public func update<R>(
        lookingUp lookup: FileKeyLookup, rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R
    ) throws -> R? {
        // The header of the file on disk: the one unlocked, until a rename puts the new one there.
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        return try withLock { () throws -> R? in
            let opened = try openHeader()
            guard let fileKey = try lookup(opened.header), VaultCodec.verifies(opened.header, fileKey: fileKey) else { return nil }
            var payload = FileCiphertext(opened.file, from: opened.headerLength)
            let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, authenticatedBy: fileKey, opened: nil)
            onDisk = unlocked.header
            rollback?.opened(unlocked)
            let result = try edit(unlocked)
            if unlocked.hasChanges {
                try rollback?.willWrite(unlocked, path: path)
                try replace(expecting: opened.file.identity, mode: opened.file.mode) { output throws(VaultError) in
                    try unlocked.seal(to: output)
                }
                onDisk = unlocked.header
            }
            return result
        }
    }

    /// Unwraps the file key with the first of `credentials` that opens a slot and checks the
    /// header MAC under it, reading only the header (`vaultfile unlock`: the key goes to the
    /// agent, nothing is decrypted). Returns the header too, for its vault id and KDF settings.
    public func unlockFileKey(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> (header: VaultHeader, fileKey: SecureBytes) {
        let opened = try openHeader()
        let fileKey = try VaultCodec.unlockFileKey(opened.header, credentials: credentials, limits: limits, willDeriveKey: willDeriveKey)
        return (opened.header, fileKey)
    }

    /// As `unlockFileKey(credentials:…)` with a password alone.
    public func unlockFileKey(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> (header: VaultHeader, fileKey: SecureBytes) {
        try unlockFileKey(credentials: [UnlockCredential(.password(password), source: "the password")], limits: limits,
                          willDeriveKey: willDeriveKey)
    }
}
