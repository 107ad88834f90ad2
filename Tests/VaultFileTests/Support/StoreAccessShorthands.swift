import KDF
import SecureMemory
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

// MARK: - Shorthands of the one pipeline, for tests

/// The ways in that only tests use: each builds an `Unlocker` and goes through the one pipeline
/// (`VaultStore.read`, `edit`, `replaceKeys`, `unlockFileKey`; `VaultCodec.open`), so that a test
/// of a password, a credential list or a file key exercises the code every command runs.
extension VaultStore {
    /// Reads and unlocks the vault with `password`, without the lock.
    func open(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil
    ) throws -> UnlockedVault {
        try read(with: .password(password, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback)
    }

    /// Locks, opens with `password`, runs `edit`, and re-seals the vault if anything changed.
    func update<R>(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil,
        _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        try self.edit(with: .password(password, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback, edit)
    }

    /// Reads and unlocks the vault with the first of `credentials` that opens a slot, without the lock.
    func open(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil
    ) throws -> UnlockedVault {
        try read(with: Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback)
    }

    /// Locks, opens with `credentials`, runs `edit`, and re-seals the vault if anything changed.
    func update<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R
    ) throws -> R {
        try self.edit(with: Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback, edit)
    }

    /// Locks, opens with `credentials`, and writes the vault `change` makes of it.
    func replaceKeys<R>(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
        rollback: RollbackCheck? = nil, rotated: ((VaultHeader, SecureBytes, SecureBytes) -> Void)? = nil,
        _ change: (UnlockedVault) throws -> (vault: UnlockedVault, result: R)
    ) throws -> R {
        try replaceKeys(with: Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback,
                        rotated: rotated, change)
    }

    /// Reads and opens the vault with a known file key (no lock); a key the header MAC does not
    /// verify under is refused (`VaultError.fileKeyRejected`).
    func open(fileKey: SecureBytes, rollback: RollbackCheck? = nil) throws -> UnlockedVault {
        try read(with: Unlocker(fileKey: fileKey), rollback: rollback)
    }

    /// Opens the vault with the key `lookup` finds for its header; nil when it finds none that verifies.
    func open(lookingUp lookup: @escaping Unlocker.FileKeyLookup, rollback: RollbackCheck? = nil) throws -> UnlockedVault? {
        do {
            return try read(with: Unlocker(lookup: lookup), rollback: rollback)
        } catch VaultError.fileKeyRejected {
            return nil
        }
    }

    /// Locks, opens with the key `lookup` finds, runs `edit`, and re-seals; nil, having written
    /// nothing, when it finds none that verifies.
    func update<R>(
        lookingUp lookup: @escaping Unlocker.FileKeyLookup, rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R
    ) throws -> R? {
        do {
            return try self.edit(with: Unlocker(lookup: lookup), rollback: rollback, edit)
        } catch VaultError.fileKeyRejected {
            return nil
        }
    }

    /// Changes the password: new keyslot, new file key, everything re-encrypted; with `kdf` nil the
    /// vault keeps the KDF settings of its password slot. Returns the settings used.
    @discardableResult
    func changePassword(
        from old: SecureBytes, to new: SecureBytes, kdf: KDFParameters?, limits: KDFLimits,
        willDeriveKey: ((KDFParameters) -> Void)? = nil, rollback: RollbackCheck? = nil,
        rotated: ((VaultHeader, SecureBytes, SecureBytes) -> Void)? = nil
    ) throws -> KDFParameters {
        try replaceKeys(with: .password(old, limits: limits, willDeriveKey: willDeriveKey), rollback: rollback, rotated: rotated) { unlocked in
            let parameters = kdf ?? unlocked.passwordKDF ?? .defaults
            return (try unlocked.changePassword(to: new, kdf: parameters), parameters)
        }
    }

    /// The file key, unwrapped with `credentials`, and the header, reading only the header.
    func unlockFileKey(
        credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> (header: VaultHeader, fileKey: SecureBytes) {
        let unlocked = try unlockFileKey(with: Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey))
        return (unlocked.header, unlocked.fileKey)
    }

    /// As `unlockFileKey(credentials:…)` with a password alone.
    func unlockFileKey(
        password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> (header: VaultHeader, fileKey: SecureBytes) {
        try unlockFileKey(credentials: [.password(password)], limits: limits, willDeriveKey: willDeriveKey)
    }
}

// MARK: - Merges

extension VaultStore {
    /// Merges three files of one vault, opening each side with `password`.
    static func mergeFiles(
        base: String, ours: String, theirs: String, password: SecureBytes, limits: KDFLimits, allowLowerKDF: Bool = false
    ) throws -> [VaultMerge.Conflict] {
        try mergeFiles(base: base, ours: ours, theirs: theirs, with: .password(password, limits: limits), allowLowerKDF: allowLowerKDF)
    }

    /// Merges three files of one vault, opening each side with the first of `credentials` that opens it.
    static func mergeFiles(
        base: String, ours: String, theirs: String, credentials: [UnlockCredential], limits: KDFLimits, allowLowerKDF: Bool = false,
        retiredKeys: RetiredKeys? = nil
    ) throws -> [VaultMerge.Conflict] {
        try mergeFiles(base: base, ours: ours, theirs: theirs, with: Unlocker(credentials: credentials, limits: limits),
                       allowLowerKDF: allowLowerKDF, retiredKeys: retiredKeys)
    }

    /// Merges the copy at `theirs` into this vault, opening each copy with the first of `credentials` that opens it.
    func mergeCopy(
        theirs: String, base: String? = nil, credentials: [UnlockCredential], limits: KDFLimits, allowLowerKDF: Bool = false,
        rollback: RollbackCheck? = nil
    ) throws -> (conflicts: [VaultMerge.Conflict], generation: UInt64) {
        try mergeCopy(theirs: theirs, base: base, with: Unlocker(credentials: credentials, limits: limits), allowLowerKDF: allowLowerKDF,
                      rollback: rollback)
    }

    /// Merges the copy at `theirs` into this vault, opening each copy with `password`.
    func mergeCopy(
        theirs: String, base: String? = nil, password: SecureBytes, limits: KDFLimits, allowLowerKDF: Bool = false,
        rollback: RollbackCheck? = nil
    ) throws -> (conflicts: [VaultMerge.Conflict], generation: UInt64) {
        try mergeCopy(theirs: theirs, base: base, with: .password(password, limits: limits), allowLowerKDF: allowLowerKDF, rollback: rollback)
    }
}

// MARK: - Whole files in memory

extension VaultCodec {
    /// Parses, unlocks with `password`, authenticates and decrypts a whole vault file.
    static func open(
        _ file: [UInt8], path: String, password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> UnlockedVault {
        try open(file, path: path, with: .password(password, limits: limits, willDeriveKey: willDeriveKey))
    }

    /// Parses, unlocks with the first of `credentials` that opens a slot, authenticates and decrypts a whole vault file.
    static func open(
        _ file: [UInt8], path: String, credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> UnlockedVault {
        try open(file, path: path, with: Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey))
    }

    /// Parses, authenticates with its file key and decrypts a whole vault file; another key is
    /// refused (`VaultError.fileKeyRejected`) before anything is decrypted.
    static func open(_ file: [UInt8], path: String, fileKey: SecureBytes) throws -> UnlockedVault {
        try open(file, path: path, with: Unlocker(fileKey: fileKey))
    }

    /// A whole file in memory through the one `open`.
    static func open(_ file: [UInt8], path: String, with unlocker: Unlocker) throws -> UnlockedVault {
        let parsed = try parse(file, path: path)
        var payload = parsed.payload
        return try open(header: parsed.header, payload: &payload, with: unlocker)
    }

    /// The file key of `header`, unwrapped with the first of `credentials` that opens a slot, its MAC checked.
    static func unlockFileKey(
        _ header: VaultHeader, credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?
    ) throws -> SecureBytes {
        try Unlocker(credentials: credentials, limits: limits, willDeriveKey: willDeriveKey).unlock(header).fileKey
    }
}

// MARK: - Unlockers

extension Unlocker {
    /// An unlocker of one password.
    static func password(_ password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil) -> Unlocker {
        Unlocker(credentials: [.password(password)], limits: limits, willDeriveKey: willDeriveKey)
    }
}

extension UnlockCredential {
    /// A password, named as every password is in messages.
    static func password(_ password: SecureBytes) -> UnlockCredential {
        UnlockCredential(.password(password), source: "the password")
    }
}
