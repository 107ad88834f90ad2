import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Writes an entry's value (or one field) to stdout, byte for byte.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an entry's value (or a field) to stdout, byte for byte.",
            discussion: "Nothing is added when stdout is not a terminal; on a terminal a final newline is added if missing.")

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.") var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Print this named field instead of the value.", valueName: "field"))
        var field: String?

        func run() throws {
            let unlocked = try unlock.open()
            guard let entry = unlocked.vault.entry(name) else { throw VaultError.entryNotFound(name) }
            let bytes: [UInt8]
            if let field {
                guard let value = entry.fields[field] else { throw VaultError.entryNotFound("\(name)#\(field)") }
                bytes = value
            } else {
                bytes = entry.value
            }
            // Written from the vault's own buffer: a copy here would be a second plaintext to wipe
            // (and wiping a shared array only wipes a fresh copy of it).
            try StandardOutput.write(bytes)
            if StandardOutput.isTerminal && bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
        }
    }
}
