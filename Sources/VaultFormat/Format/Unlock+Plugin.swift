import SecureMemory
import VaultModel

// MARK: - Opening plugin slots

extension VaultCodec {
    /// Runs the identity's plugin once (identity-v1) over the stanzas of every plugin slot, one
    /// file index a slot, and returns the first slot, in header order, whose secret opens its
    /// sealed key. Nil when the vault has no plugin slot, no launcher is set (textconv, the merge
    /// driver, the agent: a vault never makes them start a plugin) or none opens.
    static func openPluginSlots(_ header: VaultHeader, identity: AgePluginIdentity, choice: SlotChoice = .all) throws -> (Int, SecureBytes)? {
        let slots = header.keyslots.enumerated().compactMap { index, slot -> (Int, PluginSlot)? in
            if case .plugin(let plugin) = slot, choice.allows(slot) { return (index, plugin) } else { return nil }
        }
        guard !slots.isEmpty, let launcher = AgePluginSlots.launcher else { return nil }
        let secrets = try AgePluginClient.unwrap(files: slots.map { $0.1.stanzas }, plugin: identity.name, identities: [identity.encoding],
                                                 launcher: launcher)
        for (file, (index, slot)) in slots.enumerated() {
            guard let secret = secrets[file] else { continue }
            if let fileKey = slot.open(secret: secret, vaultID: header.vaultID) { return (index, fileKey) }
        }
        return nil
    }
}
