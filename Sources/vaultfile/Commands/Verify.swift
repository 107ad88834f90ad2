import ArgumentParser
import KDF
import VaultModel

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

// MARK: - The quick reading (QuickArguments.swift)

extension VaultfileCommand.Verify {
    /// What `verify` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = UnlockOptions.quickGrammar

    /// `verify` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var verify = Self()
            verify.unlock = try UnlockOptions.quick(&arguments)
            return verify
        }
    }
}
