import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Which vault

extension VaultOptions {
    /// `--vault`, then `VAULTFILE_PATH`, then `$XDG_DATA_HOME/vaultfile/default.vault`
    /// (`$HOME/.local/share/vaultfile/default.vault` when XDG_DATA_HOME is unset).
    var path: String {
        if let vault { return vault }
        if let fromEnvironment = environment("VAULTFILE_PATH") { return fromEnvironment }
        return Self.defaultDirectory + "/default.vault"
    }

    /// The folder of the default vault.
    static var defaultDirectory: String {
        if let data = environment("XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/vaultfile" }
        return (environment("HOME") ?? ".") + "/.local/share/vaultfile"
    }

    /// The store for this vault; a writer that waits a second for the lock says for whom.
    var store: VaultStore {
        var store = VaultStore(path: path, lockTimeout: lockTimeout)
        let (timeout, vault) = (lockTimeout, path)
        store.onLockWait = { holder in
            let seconds = timeout.isFinite && timeout < 1e9 && timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)
            Messages.note("waiting for \(holder.map(String.init(describing:)) ?? "another vaultfile process"), which holds the lock of "
                          + "\(vault) (up to \(seconds) s; --lock-timeout changes the wait)")
        }
        return store
    }
}

/// A non-empty environment variable, or nil.
func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}
