import KDF
import SecureMemory

// MARK: - Whole operations: create, open, update, change password

extension VaultStore {
    /// Creates a new vault file holding `vault`; refuses to overwrite an existing file.
    public func create(_ vault: Vault = Vault(), password: SecureBytes, kdf: KDFParameters) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, password: password, kdf: kdf)
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
    }

    /// Reads and unlocks the vault without taking the lock (a reader sees the
    /// old or the new file, never a mix: writers rename whole files).
    ///
    /// With `rollback`, the vault is compared with what this machine has seen of it and the record raised.
    public func open(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil
    ) throws -> UnlockedVault {
        let unlocked = try openStreaming(password: password, limits: limits, willDeriveKey: willDeriveKey, entriesOnly: readsEntriesOnly).unlocked
        rollback?.opened(unlocked)
        rollback?.finished(onDisk: unlocked.header, path: path)
        return unlocked
    }

    /// Opens the vault reading its payload chunk by chunk as it is decrypted, so that the
    /// ciphertext is never held whole beside the plaintext; returns the file's identity for the write.
    private func openStreaming(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?, entriesOnly: Bool = false
    ) throws -> (unlocked: UnlockedVault, file: OpenedFile) {
        let opened = try openHeader()
        var payload = FileCiphertext(opened.file, from: opened.headerLength, entriesOnly: entriesOnly)
        let unlocked = try VaultCodec.open(header: opened.header, payload: &payload, password: password, limits: limits, willDeriveKey: willDeriveKey)
        return (unlocked, opened.file)
    }

    /// Opens the vault file (its type and size checked before a byte is read) and parses its
    /// header from at most `VaultHeader.maxLength` bytes: nothing reads a whole vault file.
    func openHeader() throws(VaultError) -> (file: OpenedFile, header: VaultHeader, headerLength: Int) {
        let file = try OpenedFile(path: path)
        // The header is at most `VaultHeader.maxLength` bytes: parsed from the file's first bytes,
        // it gives the same verdicts and messages as when parsed from the whole file.
        let head = try file.read(min(file.size, VaultHeader.maxLength), at: 0)
        let (header, headerLength) = try VaultHeader.parse(head, path: path)
        return (file, header, headerLength)
    }

    /// Reads only the header (no password needed) and the file size.
    public func readHeader() throws -> (header: VaultHeader, fileSize: Int, headerLength: Int) {
        let opened = try openHeader()
        return (opened.header, opened.file.size, opened.headerLength)
    }

    /// Locks, opens, runs `edit`, and re-seals the vault if its contents changed.
    ///
    /// An unchanged vault is not rewritten (no churn in git). Concurrent
    /// writers wait on the lock, so none loses an update. With `rollback`, a write to a copy
    /// older than one seen here is refused before anything is written (`RollbackCheck`), and
    /// the new generation is recorded after the rename.
    public func update<R>(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil,
        _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        // The header of the file on disk: the one unlocked, until a rename puts the new one there.
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        return try withLock {
            let (unlocked, file) = try openStreaming(password: password, limits: limits, willDeriveKey: willDeriveKey)
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

    /// Changes the password: new keyslot, new file key, everything re-encrypted.
    ///
    /// With `kdf` nil, the vault keeps the KDF settings of its password slot. Returns the settings used.
    @discardableResult
    public func changePassword(
        from old: SecureBytes, to new: SecureBytes, kdf: KDFParameters?, limits: KDFLimits,
        willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil,
        rotated: ((VaultHeader, SecureBytes) -> Void)? = nil
    ) throws -> KDFParameters {
        try changePassword(from: old, kdf: kdf, limits: limits, willDeriveKey: willDeriveKey, rollback: rollback, rotated: rotated) { new }
    }

    /// Changes the password, asking `newPassword` for the new one only once `old` has unlocked
    /// the vault: a wrong old password fails before anyone types a new one twice.
    ///
    /// The lock is held from the unlock to the write, so no other writer changes the vault in
    /// between. With `kdf` nil, the vault keeps the KDF settings of its password slot. Returns the
    /// settings used. `rotated` receives the new header and file key once the new file is in
    /// place (an agent that holds the old key is handed the new one beside it).
    @discardableResult
    public func changePassword(
        from old: SecureBytes, kdf: KDFParameters?, limits: KDFLimits,
        willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil,
        rotated: ((VaultHeader, SecureBytes) -> Void)? = nil, newPassword: () throws -> SecureBytes
    ) throws -> KDFParameters {
        var onDisk: VaultHeader?
        defer { if let onDisk { rollback?.finished(onDisk: onDisk, path: path) } }
        return try withLock {
            let (unlocked, file) = try openStreaming(password: old, limits: limits, willDeriveKey: willDeriveKey)
            onDisk = unlocked.header
            rollback?.opened(unlocked)
            let new = try newPassword()
            let parameters = kdf ?? unlocked.passwordKDF ?? .defaults
            let next = try unlocked.changePassword(to: new, kdf: parameters)
            try rollback?.willWrite(next, path: path)
            try replace(expecting: file.identity, mode: file.mode) { output throws(VaultError) in try next.seal(to: output) }
            onDisk = next.header
            rotated?(next.header, next.fileKey)
            return parameters
        }
    }
}
