import ArgumentParser
import KDF
import VaultFormat
import VaultInterchange
import VaultModel

extension VaultfileCommand {
    /// Writes an entry's value (or one field) to stdout, byte for byte.
    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print an entry's value (or a field) to stdout, byte for byte.",
            discussion: """
                Nothing is added when stdout is not a terminal; on a terminal a final newline is added if missing. \
                An ssh key entry's public field (its authorized_keys line) always ends with a newline, as ssh-keygen -y prints it. \
                A binary value (not UTF-8, or control characters other than tab and newline) is not written \
                to a terminal, where it could garble the screen or drive the terminal, unless --force is given. \
                'show' is another name for get, as in pass.
                """,
            aliases: ["show"])

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name.", completion: EntryCompletion.names) var name: String
        @Option(name: Table.field.long, help: ArgumentHelp("Print this named field instead of the value (or the field an import kept this label for: 'Пин' stored as xn--r0a4cp).", valueName: "field"), completion: EntryCompletion.fields)
        var field: String?
        @Flag(name: Table.json.long, help: "Print the entry as JSON: value (base64 when not UTF-8), fields and times (docs/JSON.md).")
        var json = false
        @Flag(name: Table.force.long, help: "Write a binary value to a terminal all the same.") var force = false
        @Option(name: Table.revision.long, help: ArgumentHelp(
            "Print an earlier version instead: 1 is the one before the current value ('vaultfile history NAME' lists them).", valueName: "k"))
        var revision: Int?
        @OptionGroup var clipboard: ClipboardOptions

        func validate() throws {
            if let field, field.allSatisfy(\.isWhitespace) { throw ValidationError(Self.blankField) }
            if let revision, revision < 1 { throw ValidationError("--revision counts from 1 (the value before the current one), not \(revision)") }
            if json && clipboard.clip { throw ValidationError("give either --json or --clip, not both") }
            if json && revision != nil { throw ValidationError("--json prints the current value; give either --json or --revision") }
        }

        func run() throws {
            // Only --revision reads history: otherwise the history section is authenticated, not kept.
            let unlocked = try unlock.open(entriesOnly: revision == nil)
            do {
                try write(from: unlocked.vault)
            } catch VaultError.entryNotFound(let missing) where missing == name && field == nil {
                // `get prod` where prod/… are entries: point at them rather than at the whole list.
                let under = unlocked.vault.names(under: name).count
                guard under > 0 else { throw VaultError.entryNotFound(missing) }
                throw CLIError.folderNotEntry(name: name, count: under)
            }
        }

        /// Writes what the command line asks for: the value or a field, as JSON, or to the clipboard.
        private func write(from vault: Vault) throws {
            // A field an import stored under another name (`Пин` as `xn--r0a4cp`) by its label too.
            let field = try self.field.map { try ImportedLabels.field($0, of: name, in: vault, note: "printed") }
            if json {
                var out = try EntryJSON.get(vault, name: name, part: EntryPart(field: field))
                defer { out.wipe() }
                try StandardOutput.write(out.bytes)
                return
            }
            let part = EntryPart(field: field)
            /// The current value, or the earlier version --revision names.
            func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
                if let revision { return try vault.withValue(of: name, part: part, revision: revision, body) }
                return try vault.withValue(of: name, part: part, body)
            }
            if clipboard.clip {
                let clearAfter = try Clipboard.clearAfter(clipboard.clearAfter)
                let said = try withBytes { try Clipboard.copy($0, clearAfter: clearAfter) }
                Messages.info(said)
                return
            }
            if Self.isPublicKeyLine(vault, name: name, field: field) { return try withBytes(writeLine) }
            if revision != nil { return try withBytes(write) }
            try Self.apply(to: vault, name: name, part: part, write)
        }

        /// Whether `field` of `name` is an ssh key entry's `public` field: an `authorized_keys` line
        /// derived from the key (never a value typed in), printed as a line, final newline and all,
        /// as `ssh-keygen -y` prints it, so that `>> authorized_keys` twice makes two lines.
        static func isPublicKeyLine(_ vault: Vault, name: String, field: String?) -> Bool {
            guard field == SSHKeyEntry.publicField else { return false }
            return (try? vault.withValue(of: name, part: .field(SSHKeyEntry.markerField)) { _ in true }) ?? false
        }

        /// Writes `bytes` and a final newline when they lack one, to a pipe or a terminal alike.
        private func writeLine(_ bytes: UnsafeRawBufferPointer) throws {
            if StandardOutput.isTerminal && !force && !Self.isText(bytes) { throw CLIError.binaryOnTerminal(name: name, field: field) }
            try StandardOutput.write(bytes)
            if bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
        }

        /// Writes `bytes` to stdout: as they are to a pipe or file; on a terminal only text, with a final newline.
        private func write(_ bytes: UnsafeRawBufferPointer) throws {
            if StandardOutput.isTerminal {
                guard force || Self.isText(bytes) else { throw CLIError.binaryOnTerminal(name: name, field: field) }
                try StandardOutput.write(bytes)
                if bytes.last != 0x0A { try StandardOutput.write([0x0A]) }
            } else {
                try StandardOutput.write(bytes)
            }
        }

        /// Whether `bytes` are text a terminal shows as it is: valid UTF-8 without control characters
        /// (C0, DEL, C1) other than tab and newline. An escape sequence, a carriage return or a C1
        /// CSI in a value could rewrite the screen, the title, or the clipboard of some terminals.
        static func isText(_ bytes: UnsafeRawBufferPointer) -> Bool {
            // ASCII first: the common case needs no decoding.
            if bytes.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 || $0 == 0x0A }) { return true }
            guard let text = String(validating: bytes, as: UTF8.self) else { return false }
            return text.unicodeScalars.allSatisfy { scalar in
                switch scalar.value {
                case 0x09, 0x0A: return true
                case 0x00...0x1F, 0x7F...0x9F: return false
                default: return true
                }
            }
        }

        /// Why an empty or blank `--field` (an unset variable) is refused rather than looked up.
        static let blankField = "--field is empty: name a field (an unset variable would otherwise read some other field)"

        /// Hands `body` the bytes of `part` of `name`; the one path of `get`, on the command line and in `batch`.
        ///
        /// The bytes are handed over where they lie in the decrypted vault: a copy would be a second
        /// plaintext to wipe, and for a large value a second buffer of its size.
        static func apply(to vault: Vault, name: String, part: EntryPart, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            try vault.withValue(of: name, part: part.fieldName.map { .field(try ImportedLabels.field($0, of: name, in: vault)) } ?? part, body)
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Get {
    /// `get`'s own options (its groups have their own tables): named by the declarations above,
    /// by its quick reading and by `batch`'s get lines.
    enum Table: String, QuickOptionTable {
        case field, json, force, revision

        var kind: OptionKind {
            switch self {
            case .json, .force: .flag
            case .field, .revision: .option
            }
        }

        func read(from arguments: inout QuickArguments, into get: inout VaultfileCommand.Get) throws(QuickArguments.Declined) {
            switch self {
            case .field: get.field = arguments.string(self)
            case .json: get.json = arguments.flag(self)
            case .force: get.force = arguments.flag(self)
            case .revision: get.revision = try arguments.value(self)
            }
        }
    }

    /// What `get` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, positionals: 1)
        .adding(UnlockOptions.quickGrammar).adding(ClipboardOptions.quickGrammar)

    /// `get` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var get = Self()
            get.unlock = try UnlockOptions.quick(&arguments)
            get.name = try arguments.positional()
            try arguments.read(Table.self, into: &get)
            get.clipboard = try ClipboardOptions.quick(&arguments)
            return get
        }
    }
}
