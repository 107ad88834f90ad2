import KDF

// MARK: - Whole operations: create, open, update, change password

extension VaultStore {
    /// Creates a new vault file holding `vault`; refuses to overwrite an existing file.
    public func create(_ vault: Vault = Vault(), password: SecureBytes, kdf: KDFParameters) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, password: password, kdf: kdf)
        try create(try unlocked.seal())
    }

    /// Reads and unlocks the vault without taking the lock (a reader sees the
    /// old or the new file, never a mix: writers rename whole files).
    public func open(password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil) throws -> UnlockedVault {
        let snapshot = try read()
        return try VaultCodec.open(snapshot.bytes, path: path, password: password, limits: limits, willDeriveKey: willDeriveKey)
    }

    /// Reads only the header (no password needed) and the file size.
    public func readHeader() throws -> (header: VaultHeader, fileSize: Int, headerLength: Int) {
        let snapshot = try read()
        let (header, length) = try VaultHeader.parse(snapshot.bytes, path: path)
        return (header, snapshot.bytes.count, length)
    }

    /// Locks, opens, runs `edit`, and re-seals the vault if its contents changed.
    ///
    /// An unchanged vault is not rewritten (no churn in git). Concurrent
    /// writers wait on the lock, so none loses an update.
    public func update<R>(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        try withLock {
            let snapshot = try read()
            let unlocked = try VaultCodec.open(snapshot.bytes, path: path, password: password, limits: limits, willDeriveKey: willDeriveKey)
            let result = try edit(unlocked)
            if unlocked.hasChanges {
                try replace(try unlocked.seal(), expecting: snapshot)
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
        willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> KDFParameters {
        try withLock {
            let snapshot = try read()
            let unlocked = try VaultCodec.open(snapshot.bytes, path: path, password: old, limits: limits, willDeriveKey: willDeriveKey)
            let parameters = kdf ?? unlocked.passwordKDF ?? .defaults
            let rotated = try unlocked.changePassword(to: new, kdf: parameters)
            try replace(try rotated.seal(), expecting: snapshot)
            return parameters
        }
    }
}
