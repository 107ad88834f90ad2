import ArgumentParser
import VaultModel

/// `vaultfile trash restore NAME`: brings a removed entry back as it was removed.
struct TrashRestore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring a removed entry back, as it was when removed, with its history.")

    @OptionGroup var unlock: UnlockOptions
    @Argument(help: "The removed entry's name (see 'vaultfile trash list').") var name: String

    func run() throws {
        try unlock.update { unlocked in
            guard !unlocked.vault.contains(name) else {
                throw CLIError.refused("'\(name)' exists: it is not in the trash",
                                       hint: "'vaultfile restore \(name) --revision K' brings back an earlier version of an entry that exists")
            }
            guard try unlocked.vault.trash().contains(where: { $0.name == name }) else { throw VaultError.entryNotFound(name) }
            // A removed entry of an older vault may be spelled in another Unicode form than an entry
            // made since: bringing it back would make a second entry of the same text.
            if let twin = unlocked.vault.canonicalTwin(of: name) { throw VaultError.nameTwin(name: name, existing: twin) }
            try unlocked.vault.restore(name, revision: 1)
        }
        Messages.info("restored '\(name)' from the trash")
    }
}
