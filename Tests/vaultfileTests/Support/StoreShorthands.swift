import KDF
import SecureMemory
import VaultFile
import VaultFormat

// MARK: - A password through the one pipeline, for CLI tests that set up or inspect a vault

extension VaultStore {
    /// Reads and unlocks the vault with `password`, without the lock.
    func open(password: SecureBytes, limits: KDFLimits) throws -> UnlockedVault {
        try read(with: Unlocker(credentials: [UnlockCredential(.password(password), source: "the password")], limits: limits))
    }

    /// Locks, opens with `password`, runs `edit`, and re-seals the vault if anything changed.
    func update<R>(password: SecureBytes, limits: KDFLimits, _ edit: (UnlockedVault) throws -> R) throws -> R {
        try self.edit(with: Unlocker(credentials: [UnlockCredential(.password(password), source: "the password")], limits: limits), edit)
    }
}
