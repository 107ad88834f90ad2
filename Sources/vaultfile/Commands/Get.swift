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
        @Argument(help: "The entry's name.") var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Print this named field instead of the value.", valueName: "field"))
        var field: String?
        @Flag(name: .customLong("json"), help: "Print the entry as JSON: value (base64 when not UTF-8), fields and times (docs/JSON.md).")
        var json = false

        func run() throws {
            let unlocked = try unlock.open()
            if json {
                var out = try EntryJSON.get(unlocked.vault, name: name, part: EntryPart(field: field))
                defer { out.wipe() }
                try StandardOutput.write(out.bytes)
                return
            }
            try Self.apply(to: unlocked.vault, name: name, part: EntryPart(field: field)) { bytes in
                try StandardOutput.write(bytes)
                if StandardOutput.isTerminal && bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
            }
        }

        /// Hands `body` the bytes of `part` of `name`; the one path of `get`, on the command line and in `batch`.
        ///
        /// The bytes are handed over where they lie in the decrypted vault: a copy would be a second
        /// plaintext to wipe, and for a large value a second buffer of its size.
        static func apply(to vault: Vault, name: String, part: EntryPart, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            try vault.withValue(of: name, part: part, body)
        }
    }
}
