import ArgumentParser
import VaultModel

extension VaultfileCommand {
    /// Makes an earlier version of an entry its current value again.
    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Make an earlier version of an entry (value and fields) its current one again.",
            discussion: """
                --revision K counts as 'vaultfile history NAME' lists: 1 is the value before the current one. \
                The current value goes into the history, so a restore can be undone the same way. An entry in \
                the trash (removed with rm) comes back with 'vaultfile trash restore NAME', or with this \
                command and a revision.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.") var name: String
        @Option(name: .customLong("revision"), help: ArgumentHelp(
            "The version to restore: 1 is the one before the current value.", valueName: "k"))
        var revision: Int

        func validate() throws {
            if revision < 1 { throw ValidationError("--revision counts from 1 (the value before the current one), not \(revision)") }
        }

        func run() throws {
            try unlock.update { unlocked in
                LentEntryNotes.noteIfRestoreLends(unlocked.vault, name: name, revision: revision)
                try unlocked.vault.restore(name, revision: revision)
            }
            Messages.info("restored revision \(revision) of '\(name)'")
        }
    }
}
