import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Renames an entry; refuses to replace an existing one without --force.
    struct Mv: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "mv", abstract: "Rename an entry.")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The current name.") var old: String
        @Argument(help: "The new name.") var new: String
        @Flag(name: .customLong("force"), help: "Replace an existing entry with the new name.") var force = false
        @OptionGroup var formatCharacters: FormatCharacterOption

        func validate() throws {
            do { _ = try EntryName.validate(new) } catch { throw ValidationError(error.description) }
        }

        func run() throws {
            try unlock.update { unlocked in
                try Self.apply(to: &unlocked.vault, old: old, new: new, force: force, allowFormatCharacters: formatCharacters.allowFormatCharacters)
            }
        }

        /// Renames `old` to `new`, over an existing entry only with `force`; the one path of `mv`, on the command line and in `batch`.
        static func apply(to vault: inout Vault, old: String, new: String, force: Bool, allowFormatCharacters: Bool) throws {
            try vault.checkNewName(new, allowingFormatCharacters: allowFormatCharacters)
            try vault.rename(old, to: new, overwrite: force)
        }
    }
}
