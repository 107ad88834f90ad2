import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Unlocks and authenticates the whole vault; exit 0 only if it is intact.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Unlock and authenticate the whole vault; exit 0 only if every byte is intact.")

        @OptionGroup var unlock: UnlockOptions

        func run() throws {
            let unlocked = try unlock.open()
            // `get` never reads the history section; verify checks it whole.
            var vault = unlocked.vault
            try vault.checkHistory()
            Messages.info("\(unlock.location.path): intact (\(unlocked.vault.count) \(unlocked.vault.count == 1 ? "entry" : "entries"), generation \(unlocked.header.generation))")
        }
    }
}
