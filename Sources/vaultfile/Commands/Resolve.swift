import ArgumentParser
import KDF
import VaultFile
import VaultModel

extension VaultfileCommand {
    /// Settles one merge conflict left by `vaultfile git merge`.
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Settle a merge conflict: keep our version of NAME, or take theirs (NAME.conflict-theirs).")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry in conflict.", completion: EntryCompletion.names) var name: String
        @Flag(name: .customLong("ours"), help: "Keep NAME; drop NAME.conflict-theirs.") var ours = false
        @Flag(name: .customLong("theirs"), help: "Replace NAME with NAME.conflict-theirs.") var theirs = false

        func validate() throws {
            guard ours != theirs else { throw ValidationError("give exactly one of --ours and --theirs") }
        }

        func run() throws {
            let parked = name + VaultMerge.conflictSuffix
            try unlock.update { unlocked in
                guard unlocked.vault.entry(parked) != nil else { throw VaultError.entryNotFound(parked) }
                if ours {
                    try unlocked.vault.remove(parked)
                } else {
                    try unlocked.vault.rename(parked, to: name, overwrite: true)
                }
            }
        }
    }
}
