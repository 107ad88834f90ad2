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

    /// Creates a vault opened by `slots` (recipients, keyfiles, passwords…): signed (format 1.3)
    /// when `signed` and a slot's secret is given, else format 1.1; refuses to overwrite an
    /// existing file. Returns whether the vault is signed. `created` is given the vault once it is
    /// on disk (`init` pins the members of a signed one: MemberTrust).
    @discardableResult
    public func create(_ vault: Vault = Vault(), slots: [(slot: NewSlot, label: String)], now: Int64, signed: Bool = true,
                       created: ((UnlockedVault) -> Void)? = nil) throws -> Bool {
        if exists { throw VaultError.vaultExists(path: path) }
        let unlocked = try VaultCodec.create(vault, slots: slots, now: now, signed: signed)
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
        created?(unlocked)
        return unlocked.isSigned
    }

    /// Creates a new vault file holding `unlocked` as it is (`init --copy-of`: an independent copy
    /// made by `UnlockedVault.independentCopy`); refuses to overwrite an existing file.
    public func create(copy unlocked: UnlockedVault) throws {
        if exists { throw VaultError.vaultExists(path: path) }
        try create { output throws(VaultError) in try unlocked.seal(to: output) }
    }
}
