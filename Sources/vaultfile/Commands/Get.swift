import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Writes an entry's value (or one field) to stdout, byte for byte.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print an entry's value (or a field) to stdout, byte for byte.",
            discussion: "Nothing is added when stdout is not a terminal; on a terminal a final newline is added if missing.")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.", completion: EntryCompletion.names) var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Print this named field instead of the value.", valueName: "field"), completion: EntryCompletion.fields)
        var field: String?

        func run() throws {
            let unlocked = try unlock.open()
            let vault = unlocked.vault
            guard vault.contains(name) else { throw VaultError.entryNotFound(name) }
            // Written from where the value lies in the decrypted vault: a copy would be a second
            // plaintext to wipe, and for a large value a second buffer of its size.
            let written: Void? = try vault.withValue(of: name, field: field) { bytes in
                try StandardOutput.write(bytes)
                if StandardOutput.isTerminal && bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
            }
            if written == nil, let field { throw VaultError.entryNotFound("\(name)#\(field)") }
        }
    }
}
