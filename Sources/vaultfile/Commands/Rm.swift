import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Removes an entry, or one field of it.
    struct Rm: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an entry (or one of its fields).")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.") var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Remove only this field.", valueName: "field"))
        var field: String?

        func run() throws {
            try unlock.update { unlocked in
                try Self.apply(to: &unlocked.vault, name: name, part: EntryPart(field: field))
            }
        }

        /// Removes `part` of `name` (the value: the whole entry); the one path of `rm`, on the command line and in `batch`.
        static func apply(to vault: inout Vault, name: String, part: EntryPart) throws {
            try vault.removeValue(for: name, part: part)
        }
    }
}
