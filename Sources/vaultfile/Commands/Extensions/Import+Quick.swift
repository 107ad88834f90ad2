import ArgumentParser

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension VaultfileCommand.Import {
    /// `import`'s own options (its groups have their own tables): named by the declarations and by
    /// its quick reading.
    enum Table: String, QuickOptionTable {
        case format, overwrite, skipExisting = "skip-existing", prefix, dryRun = "dry-run", json

        var kind: OptionKind {
            switch self {
            case .format, .prefix: .option
            case .overwrite, .skipExisting, .dryRun, .json: .flag
            }
        }

        func read(from arguments: inout QuickArguments, into command: inout VaultfileCommand.Import) throws(QuickArguments.Declined) {
            switch self {
            case .format: command.format = try arguments.value(self) ?? .auto
            case .overwrite: command.overwrite = arguments.flag(self)
            case .skipExisting: command.skipExisting = arguments.flag(self)
            case .prefix: command.prefix = arguments.string(self)
            case .dryRun: command.dryRun = arguments.flag(self)
            case .json: command.json = arguments.flag(self)
            }
        }
    }

    /// What `import` accepts on its quick path: its options and its groups', and the file, which
    /// may be left out (stdin, or a store's default folder).
    static let quickGrammar = QuickArguments.Grammar(Table.allCases, optionalPositionals: 1).adding(UnlockOptions.quickGrammar)
        .adding(FormatCharacterOption.quickGrammar).adding(SourcePasswordOptions.quickGrammar).adding(KDBXSourceOptions.quickGrammar)

    /// `import` read from a plain command line (the arguments after the verb), as ArgumentParser
    /// reads it; declines (throws) for any other. Why an import has one: ArgumentParser's reflection
    /// over its option groups is code and data no other part of an import touches, 1.5 MB of a
    /// `set`'s peak memory when it goes through ArgumentParser (docs/PERFORMANCE.md, "1pux:
    /// an import without ArgumentParser or EVP").
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var command = Self()
            command.unlock = try UnlockOptions.quick(&arguments)
            command.file = arguments.optionalPositional()
            try arguments.read(Table.self, into: &command)
            command.formatCharacters = try FormatCharacterOption.quick(&arguments)
            command.sourcePassword = try SourcePasswordOptions.quick(&arguments)
            command.kdbxSource = try KDBXSourceOptions.quick(&arguments)
            return command
        }
    }
}
