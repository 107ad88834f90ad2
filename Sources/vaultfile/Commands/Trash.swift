import ArgumentParser

extension VaultfileCommand {
    /// `vaultfile trash …`: the entries `rm` removed from a vault that keeps history.
    struct Trash: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trash",
            abstract: "List, restore or empty the entries rm removed (in a vault that keeps history).",
            discussion: """
                In a vault that keeps history (format 1.2), rm keeps the removed entry and its earlier versions \
                in a trash of up to 100 removed entries; the oldest removal goes first. The trash is inside \
                the encrypted vault: whoever can open the vault can read it until it is emptied.
                """,
            subcommands: [TrashList.self, TrashRestore.self, TrashEmpty.self])
    }
}
