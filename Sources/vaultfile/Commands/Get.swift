import ArgumentParser
import KDF
import VaultFile

extension VaultfileCommand {
    /// Writes an entry's value (or one field) to stdout, byte for byte.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print an entry's value (or a field) to stdout, byte for byte.",
            discussion: "Nothing is added when stdout is not a terminal; on a terminal a final newline is added if missing. 'show' is another name for get, as in pass.",
            aliases: ["show"])

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.") var name: String
        @Option(name: .customLong("field"), help: ArgumentHelp("Print this named field instead of the value.", valueName: "field"))
        var field: String?
        @OptionGroup var clipboard: ClipboardOptions

        func run() throws {
            let unlocked = try unlock.open()
            if clipboard.clip {
                let clearAfter = try Clipboard.clearAfter(clipboard.clearAfter)
                let said = try unlocked.vault.withValue(of: name, part: EntryPart(field: field)) { try Clipboard.copy($0, clearAfter: clearAfter) }
                Messages.info(said)
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
