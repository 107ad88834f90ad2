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
            var bytes: [UInt8]
            if let field {
                guard let value = entry.fields[field] else { throw VaultError.entryNotFound("\(name)#\(field)") }
                bytes = value
            } else {
                bytes = entry.value
            }
            defer { wipe(&bytes) }
            if StandardOutput.isTerminal && bytes.last != 0x0A { bytes.append(0x0A) }
            try StandardOutput.write(bytes)
        }
    }
}
