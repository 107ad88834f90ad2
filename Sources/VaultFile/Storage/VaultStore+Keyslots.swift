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
    public func open(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> UnlockedVault {
        try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey).unlocked
    }

    /// Locks, opens with `credentials`, runs `edit`, and re-seals the vault if anything changed
    /// (its entries, or its keyslots: `addSlot`).
    public func update<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        try withLock {
            let (unlocked, file) = try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey)
            let result = try edit(unlocked)
            if unlocked.hasChanges {
                try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try unlocked.seal(to: output) }
            }
            return result
        }
    }

    /// Locks, opens with `credentials`, and writes the vault `change` makes of it (a rotation:
    /// `UnlockedVault.rotated`), all under the lock. Returns what `change` returns beside the vault.
    public func replaceKeys<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        _ change: (UnlockedVault) throws -> (vault: UnlockedVault, result: R)
    ) throws -> R {
        try withLock {
            let (unlocked, file) = try openStreaming(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey)
            let (next, result) = try change(unlocked)
            try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try next.seal(to: output) }
            return result
        }
    }

    /// Opens the vault reading its payload chunk by chunk, with any unlock source.
    private func openStreaming(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?
    ) throws -> (unlocked: UnlockedVault, file: OpenedFile) {
        let opened = try openHeader()
        var payload = FileCiphertext(opened.file, from: opened.headerLength)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, credentials: credentials, limits: limits,
                                           willDeriveKey: willDeriveKey)
        return (unlocked, opened.file)
    }
}
