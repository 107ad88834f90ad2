import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Removes an entry, or one field of it.
    struct Rm: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an entry (or one of its fields).")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.", completion: EntryCompletion.names) var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Remove only this field.", valueName: "field"))
        var field: String?

        func run() throws {
            try unlock.update { unlocked in
                if let field {
                    try unlocked.vault.removeField(field, of: name)
                } else {
                    try unlocked.vault.remove(name)
                }
            }
        }
    }
}
