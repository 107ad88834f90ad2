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

    /// The store for this vault.
    var store: VaultStore { VaultStore(path: path, lockTimeout: lockTimeout) }
}

/// A non-empty environment variable, or nil.
func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}
