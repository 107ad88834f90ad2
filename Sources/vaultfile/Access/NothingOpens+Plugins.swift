import VaultFormat

// MARK: - age plugin keyslots and identities in the one wording

/// What `NothingOpens` says of age plugins: which plugin programs ran for the identities tried
/// (each plugin identity's source names its program: `pluginSource`), and, for a vault with plugin
/// keyslots, how such a vault opens. A vault's plugin keyslots name their plugin only in the
/// encrypted metadata, so before the vault opens the message can name the stanza types the
/// header holds (plugins name their own stanzas), never the plugin itself.
extension NothingOpens {
    /// What a plugin identity's source is called: where it came from and the program it runs,
    /// "--identity id.txt (through age-plugin-yubikey)".
    static func pluginSource(_ source: String, plugin: String) -> String {
        "\(source) (through \(AgePluginName.binary(plugin)))"
    }

    /// The plugin programs run for the sources tried, each once, in order.
    var pluginsRun: [String] {
        var names: [String] = []
        for source in tried {
            // The last " (through …)" of the name: a plugin name holds no space or parenthesis.
            guard source.hasSuffix(")"), let open = source.lastIndex(of: "("), source[..<open].hasSuffix(" ") else { continue }
            let inside = source[source.index(after: open)..<source.index(before: source.endIndex)]
            guard inside.hasPrefix("through age-plugin-") else { continue }
            let binary = String(inside.dropFirst("through ".count))
            if !names.contains(binary) { names.append(binary) }
        }
        return names
    }

    /// The stanza types of `header`'s plugin keyslots, each once, in slot order (at most 32
    /// characters each: printable ASCII, as the header parser requires).
    static func pluginStanzaTypes(of header: VaultHeader) -> [String] {
        var types: [String] = []
        for case .plugin(let slot) in header.keyslots {
            for stanza in slot.stanzas.prefix(1) where !types.contains(String(stanza.type.prefix(32))) { types.append(String(stanza.type.prefix(32))) }
        }
        return types
    }

    // MARK: The message and the hint

    /// The part of the message for plugins that ran and opened nothing.
    var pluginsFoundNothing: String? {
        let run = pluginsRun
        guard !run.isEmpty else { return nil }
        let subject = Self.list(run)
        if pluginStanzaTypes.isEmpty { return "the vault has no age plugin keyslot, so \(subject) was not started" }
        return "\(subject) ran and unwrapped none of the vault's age plugin keyslots"
    }

    /// The next step after plugins that ran and opened nothing.
    var pluginStep: String? {
        guard !pluginsRun.isEmpty, !pluginStanzaTypes.isEmpty else { return nil }
        return "plug in the device the plugin identity is for (a YubiKey, a FIDO2 key, this machine's TPM), "
            + "or give the plugin identity the vault was given to"
    }

    /// How a vault with plugin keyslots opens, for the hint's list of ways.
    var pluginWay: String? {
        guard !pluginStanzaTypes.isEmpty else { return nil }
        let types = pluginStanzaTypes.map { "'\($0)'" }
        return "an age plugin identity (the AGE-PLUGIN-NAME-1… line that age-plugin-NAME prints; in --identity FILE, VAULTFILE_IDENTITY_FILE, "
            + "VAULTFILE_IDENTITY or the default identities in \(identityLocations); age-plugin-NAME must be installed in an absolute folder of PATH; "
            + "the vault's plugin keyslots hold stanzas of type \(Self.list(types, or: true)))"
    }
}
