import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Creates or replaces an entry's value (or one field) from stdin or a file, never from argv.
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Create or replace an entry; the value comes from stdin or --value-file.",
            discussion: """
                Every byte is kept (binary-safe, no newline removed). On a terminal the value is asked \
                for twice, without echo. An empty value is refused unless --allow-empty is given. \
                --value-file - reads standard input. Setting the value an entry already has leaves the file \
                untouched. With --generate --print the value is printed as 'generate' prints it: a final \
                newline only on a terminal.
                """)

        @OptionGroup var unlock: UnlockOptions
        @Argument(help: "The entry's name, e.g. db/password.", completion: EntryCompletion.names) var name: String
        @Option(name: Table.field.long, help: ArgumentHelp("Set this named field instead of the value.", valueName: "field"))
        var field: String?
        @Option(name: Table.valueFile.long, help: ArgumentHelp("Read the value from this file instead of stdin ('-' is stdin).", valueName: "file"), completion: .file())
        var valueFile: String?
        @Flag(name: Table.allowEmpty.long, help: "Store an empty value (refused without this flag, as a likely mistake).")
        var allowEmpty = false
        @Flag(name: Table.generate.long, help: "Store a random password (see 'generate' for its options) instead of reading one.")
        var generate = false
        @Flag(name: Table.print.long, help: "With --generate: also print the stored value.") var print = false
        @Flag(name: Table.totp.long, help: "Store an otpauth://totp/ URI (checked first) in the entry's 'totp' field.")
        var totp = false
        @Flag(name: Table.sshKey.long, help: "Store an OpenSSH private key (checked; a protected one decrypted once) with its public key in fields.")
        var sshKey = false
        @OptionGroup var generator: GeneratorOptions
        @OptionGroup var formatCharacters: FormatCharacterOption

        func validate() throws {
            if generate && valueFile != nil { throw ValidationError("give either --generate or --value-file, not both") }
            if print && !generate { throw ValidationError("--print goes with --generate") }
            if totp && (generate || field != nil) { throw ValidationError("--totp stores the 'totp' field; give neither --field nor --generate") }
            if sshKey && (generate || field != nil || totp) { throw ValidationError("--ssh-key stores a key and its fields; give none of --field, --generate, --totp") }
            try validateEntryArguments(name: name, field: field)
        }

        func run() throws {
            if sshKey { return try storeSSHKey() }
            var value = try readValue()
            defer { wipe(&value) }
            if totp {
                while let last = value.last, last == 0x0A || last == 0x0D { value.removeLast() }  // `echo URI |` adds one
                _ = try TOTPParameters(uri: value)  // refused before the vault is unlocked
            }
            try unlock.update { unlocked in
                // Checked once the vault is open, so that a missing or unreadable vault is reported
                // as such whatever the input; nothing is written either way.
                if value.isEmpty && !allowEmpty { throw CLIError.emptyValue(name: name, field: field) }
                try Self.apply(to: &unlocked.vault, name: name, part: EntryPart(field: totp ? "totp" : field), value: value,
                               allowFormatCharacters: formatCharacters.allowFormatCharacters)
                LentEntryNotes.warnIfValueReplaced(unlocked.vault, name: name, part: EntryPart(field: totp ? "totp" : field))
            }
            if print { try GeneratedOutput.write(value) }
        }

        private func readValue() throws -> [UInt8] {
            if generate { return try generator.generate() }
            if let valueFile { return try Input.readFile(valueFile, purpose: "the value") }
            if Stream.isTerminal(STDIN_FILENO) {
                let secret = try Terminal.readNewSecret(prompt: "Value for \(name): ", confirm: "Repeat the value: ")
                return secret.withUnsafeBytes { Array($0) }
            }
            return try Input.readAll(STDIN_FILENO, what: "standard input", purpose: "the value")
        }

        /// Stores `value` as `part` of `name`; the one path of `set`, on the command line and in `batch`.
        static func apply(to vault: inout Vault, name: String, part: EntryPart, value: [UInt8], allowFormatCharacters: Bool) throws {
            try vault.checkNewName(name, allowingFormatCharacters: allowFormatCharacters)
            try vault.setValue(value, for: name, part: part)
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Set {
    /// `set`'s own options (its groups have their own tables): named by the declarations above,
    /// by its quick reading and by `batch`'s set lines.
    enum Table: String, QuickOptionTable {
        case field, valueFile = "value-file", allowEmpty = "allow-empty", generate, print, totp, sshKey = "ssh-key"

        var kind: OptionKind {
            switch self {
            case .allowEmpty, .generate, .print, .totp, .sshKey: .flag
            case .field, .valueFile: .option
            }
        }

        func read(from arguments: inout QuickArguments, into set: inout VaultfileCommand.Set) throws(QuickArguments.Declined) {
            switch self {
            case .field: set.field = arguments.string(self)
            case .valueFile: set.valueFile = arguments.string(self)
            case .allowEmpty: set.allowEmpty = arguments.flag(self)
            case .generate: set.generate = arguments.flag(self)
            case .print: set.print = arguments.flag(self)
            case .totp: set.totp = arguments.flag(self)
            case .sshKey: set.sshKey = arguments.flag(self)
            }
        }
    }

    /// What `set` accepts on its quick path (QuickArguments.swift).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, positionals: 1).adding(UnlockOptions.quickGrammar)
        .adding(GeneratorOptions.quickGrammar).adding(FormatCharacterOption.quickGrammar)

    /// `set` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var set = Self()
            set.unlock = try UnlockOptions.quick(&arguments)
            set.name = try arguments.positional()
            try arguments.read(Table.self, into: &set)
            set.generator = try GeneratorOptions.quick(&arguments)
            set.formatCharacters = try FormatCharacterOption.quick(&arguments)
            return set
        }
    }
}
