import SecureMemory
import VaultModel

// MARK: - Plugin slots in a rotation

extension UnlockedVault {
    /// The plugins of the plugin slots among `indices` (by their recipient in the metadata), each
    /// once, in slot order.
    func pluginNames(of indices: [Int]) -> [String] {
        var names: [String] = []
        for index in indices {
            guard case .plugin = header.keyslots[index], let stored = slotMetadata?[index].publicKey,
                  let recipient = try? AgePluginRecipient(parsing: String(decoding: stored, as: UTF8.self)),
                  !names.contains(recipient.name) else { continue }
            names.append(recipient.name)
        }
        return names
    }

    /// Before a rotation wraps anything: every plugin it must run is found (the launcher says which
    /// binaries it will run), or the rotation stops naming the missing one; with no launcher (a
    /// command that never starts plugins) a rotation of a vault with plugin slots is refused.
    func announcePlugins(_ remaining: [Int]) throws {
        let names = pluginNames(of: remaining)
        guard !names.isEmpty else { return }
        guard let launcher = AgePluginSlots.launcher else {
            throw AgePluginClientError.notAllowed(plugin: names[0], context: "this command")
        }
        try launcher.announce(plugins: names)
    }
}
