import KDF
import SecureMemory

// MARK: - Whole operations with a file key instead of a password

/// The storage side of the agent (docs/AGENT.md): a command asks for the file key of the header it
/// just read, and opens or updates the vault with it, running no KDF. Writes happen here, under the
/// vault's lock, exactly as with a password; the agent never touches the file.
extension VaultStore {
    /// Finds the file key of a vault from its parsed header (the agent's answer), or nil when none
    /// is known. A key it returns is used only if the header MAC verifies under it.
    public typealias FileKeyLookup = (VaultHeader) throws -> SecureBytes?

    /// Reads and opens the vault with a known file key (no lock, as `open(password:…)`); a key the
    /// header MAC does not verify under is refused (`VaultError.fileKeyRejected`).
    public func open(fileKey: SecureBytes) throws -> UnlockedVault {
        let opened = try openHeader()
        var payload = FileCiphertext(opened.file, from: opened.headerLength)
        return try VaultCodec.open(header: opened.header, payload: &payload, fileKey: fileKey)
    }

    /// Reads the header, asks `lookup` for its file key and opens the vault with it; nil when the
    /// lookup has no key or gives one the header MAC does not verify under (then nothing was
    /// decrypted and the caller falls back to the password).
    public func open(lookingUp lookup: FileKeyLookup) throws -> UnlockedVault? {
        let opened = try openHeader()
        guard let fileKey = try lookup(opened.header), VaultCodec.verifies(opened.header, fileKey: fileKey) else { return nil }
        var payload = FileCiphertext(opened.file, from: opened.headerLength)
        return try VaultCodec.open(header: opened.header, payload: &payload, fileKey: fileKey)
    }

    /// Locks, reads the header, asks `lookup` for its file key, opens, runs `edit`, and re-seals the
    /// vault if its contents changed, as `update(password:…)` does. Returns nil, having read
    /// nothing but the header and written nothing, when the lookup has no key that verifies.
    ///
    /// The lookup runs under the lock, on the header that will be replaced, so a key rotated by
    /// a `passwd` that finished just before is never used on the new file.
    public func update<R>(lookingUp lookup: FileKeyLookup, _ edit: (UnlockedVault) throws -> R) throws -> R? {
        try withLock { () throws -> R? in
            let opened = try openHeader()
            guard let fileKey = try lookup(opened.header), VaultCodec.verifies(opened.header, fileKey: fileKey) else { return nil }
            var payload = FileCiphertext(opened.file, from: opened.headerLength)
            let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, fileKey: fileKey)
            let result = try edit(unlocked)
            if unlocked.hasChanges {
                try replace(expecting: opened.file.identity, mode: opened.file.mode) { output throws(VaultError) in
                    try unlocked.seal(to: output)
                }
            }
            return result
        }
    }

    /// Unwraps the file key with `password` and checks the header MAC under it, reading only the
    /// header (`vaultfile unlock`: the key goes to the agent, nothing is decrypted). Returns the
    /// header too, for its vault id and KDF settings.
    public func unlockFileKey(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> (header: VaultHeader, fileKey: SecureBytes) {
        let opened = try openHeader()
        let fileKey = try VaultCodec.unlockFileKey(opened.header, password: password, limits: limits, willDeriveKey: willDeriveKey)
        return (opened.header, fileKey)
    }
}
