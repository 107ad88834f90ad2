import VaultFormat

// MARK: - Hints for plugin failures

/// The next step after a failure of an age plugin run by vaultfile (ErrorReport's hints, kept here
/// beside the launcher they describe).
enum PluginHints {
    /// The hint for `error`, or nil when the message says it all.
    static func hint(for error: AgePluginClientError) -> String? {
        switch error {
        case .invalidName: return "check the recipient or identity: age-plugin-NAME names hold only A-Z, a-z, 0-9 and . _ + -"
        case .notFound(let plugin, _):
            return "install \(AgePluginName.binary(plugin)) in a folder of PATH given as an absolute path (e.g. /usr/local/bin), then run the command again"
        case .notAllowed: return "run 'vaultfile get' or 'vaultfile unlock' yourself: a plugin slot needs its plugin, started on your request"
        case .timedOut: return "answer the plugin (touch the key, plug it in), or allow it more time with VAULTFILE_PLUGIN_TIMEOUT=SECONDS"
        case .exclusive: return "use that plugin recipient alone (one recipient for share, the only keyslot of a vault), as its labels ask"
        case .pluginReported(let plugin, _, _):
            return "do what \(AgePluginName.binary(plugin)) asks (plug in its device, give the right PIN: it is asked on the terminal, "
                + "so run the command from one), then run the command again; or open the vault with another of its keys"
        case .cannotStart(let plugin, _), .exited(let plugin, _):
            return "check that \(AgePluginName.binary(plugin)) runs on its own (its --help or documentation), then run the command again"
        case .protocolViolation(let plugin, _), .noStanza(let plugin):
            return "\(AgePluginName.binary(plugin)) does not follow the age-plugin protocol as vaultfile reads it: update it, or report it to its authors"
        }
    }
}
