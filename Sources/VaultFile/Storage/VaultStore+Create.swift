import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Creating a vault file

extension VaultStore {
    /// Creates a new vault file holding `vault`, opened by one password slot with `kdf`; refuses
    /// to overwrite an existing file.
    public func create(_ vault: Vault = Vault(), password: SecureBytes, kdf: KDFParameters) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, password: password, kdf: kdf)
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
    }

    /// Creates a format-1.1 vault opened by `slots` (recipients, keyfiles, passwords…); refuses
    /// to overwrite an existing file.
    public func create(_ vault: Vault = Vault(), slots: [(slot: NewSlot, label: String)], now: Int64) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, slots: slots, now: now)
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
    }
}
