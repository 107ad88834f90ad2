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
        case .cannotStart, .pluginReported, .protocolViolation, .exited, .noStanza: return nil
        }
    }
}
