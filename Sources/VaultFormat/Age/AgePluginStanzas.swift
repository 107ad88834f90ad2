import SecureMemory

// MARK: - age files through plugins

/// The recipients of one age plugin (`age1NAME1…`, all of the same NAME): one recipient-v1 run
/// wraps the file key to all of them, so a PIN or a touch is asked once.
public struct AgePluginFileRecipient: AgeFileRecipient {
    /// The plugin's name.
    public let plugin: String
    /// The recipients, as written.
    public let recipients: [AgePluginRecipient]
    /// Who starts the plugin (the executable).
    let launcher: any AgePluginLauncher

    /// The recipients of one plugin; `recipients` is not empty and every one names `plugin`.
    public init(_ recipients: [AgePluginRecipient], launcher: any AgePluginLauncher) {
        precondition(!recipients.isEmpty && recipients.allSatisfy { $0.name == recipients[0].name }, "one plugin's recipients")
        self.plugin = recipients[0].name
        self.recipients = recipients
        self.launcher = launcher
    }

    /// The plugin's stanzas for `fileKey` (its labels are dropped: `wrapWithLabels` keeps them).
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] { try wrapWithLabels(fileKey).stanzas }

    /// The plugin's stanzas and labels for `fileKey`.
    public func wrapWithLabels(_ fileKey: SecureBytes) throws(AgeFileError) -> (stanzas: [AgeStanza], labels: Set<String>) {
        do {
            let wrapped = try AgePluginClient.wrap([fileKey], plugin: plugin, recipients: recipients.map(\.encoding), launcher: launcher)
            return (wrapped.stanzas[0], Set(wrapped.labels ?? []))
        } catch {
            throw .plugin(error)
        }
    }
}

/// The identities of one age plugin (`AGE-PLUGIN-NAME-1…`, all of the same NAME): one
/// identity-v1 run tries them all on a file's stanzas.
public struct AgePluginFileIdentity: AgeFileIdentity {
    /// The plugin's name.
    public let plugin: String
    /// The identities.
    let identities: [AgePluginIdentity]
    /// Who starts the plugin (the executable).
    let launcher: any AgePluginLauncher

    /// The identities of one plugin; `identities` is not empty and every one names `plugin`.
    public init(_ identities: [AgePluginIdentity], launcher: any AgePluginLauncher) {
        precondition(!identities.isEmpty && identities.allSatisfy { $0.name == identities[0].name }, "one plugin's identities")
        self.plugin = identities[0].name
        self.identities = identities
        self.launcher = launcher
    }

    /// One stanza alone: the plugin is run for it.
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? { try unwrap(stanzas: [stanza]) }

    /// Every stanza of the file in one run (age passes them all to each plugin: stanza types
    /// need not match plugin names). A plugin that reports an error stops the file.
    public func unwrap(stanzas: [AgeStanza]) throws(AgeFileError) -> SecureBytes? {
        do {
            return try AgePluginClient.unwrap(files: [stanzas], plugin: plugin, identities: identities.map(\.encoding), launcher: launcher)[0]
        } catch {
            throw .plugin(error)
        }
    }

    /// `identities` grouped by plugin, in the order each plugin first appears.
    public static func grouped(_ identities: [AgePluginIdentity], launcher: any AgePluginLauncher) -> [AgePluginFileIdentity] {
        var order: [String] = [], byName: [String: [AgePluginIdentity]] = [:]
        for identity in identities {
            if byName[identity.name] == nil { order.append(identity.name) }
            byName[identity.name, default: []].append(identity)
        }
        return order.map { AgePluginFileIdentity(byName[$0]!, launcher: launcher) }
    }
}

extension AgePluginFileRecipient {
    /// `recipients` grouped by plugin, in the order each plugin first appears.
    public static func grouped(_ recipients: [AgePluginRecipient], launcher: any AgePluginLauncher) -> [AgePluginFileRecipient] {
        var order: [String] = [], byName: [String: [AgePluginRecipient]] = [:]
        for recipient in recipients {
            if byName[recipient.name] == nil { order.append(recipient.name) }
            byName[recipient.name, default: []].append(recipient)
        }
        return order.map { AgePluginFileRecipient(byName[$0]!, launcher: launcher) }
    }
}
