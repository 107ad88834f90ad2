import ArgumentParser
import VaultModel

/// `vaultfile trash empty`: drops every removed entry and its history for good.
struct TrashEmpty: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "empty",
        abstract: "Drop every removed entry and its earlier versions from the vault.")

    @OptionGroup var unlock: UnlockOptions

    func run() throws {
        let dropped = try unlock.update { unlocked in try unlocked.vault.emptyTrash() }
        Messages.info("dropped \(dropped) removed \(dropped == 1 ? "entry" : "entries") from the trash")
    }
}
