import ArgumentParser
import VaultModel

// MARK: - The plain output's one get

extension BatchScript {
    /// Refuses a script of two or more `get` lines under the plain framing, which prints the
    /// values back to back with nothing between them (a script could not tell where one ends):
    /// `-z` or `--json` frame them. One `get` prints exactly as before.
    static func refuseUnframedGets(_ lines: [(number: Int, command: BatchVerb)]) throws {
        let gets = lines.filter { $0.command is BatchGet }.map(\.number)
        guard gets.count >= 2 else { return }
        throw CLIError.invalidArgument("lines \(gets.prefix(2).map(String.init).joined(separator: " and ")) are both get: "
            + "without -z or --json their values would be printed back to back with nothing between them; "
            + "run the batch with -z (each value ends with a NUL) or --json (one object a line), or one get per batch")
    }
}

// MARK: - Verbs

/// `cp SOURCE DESTINATION [--force] [--allow-format-characters]`: `cp`'s copy (`Cp.apply`).
struct BatchCp: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "cp")
    private typealias Verb = VaultfileCommand.Mv
    @Argument var source: String
    @Argument var destination: String
    @Flag(name: Verb.Table.force.long) var force = false
    @OptionGroup var formatCharacters: FormatCharacterOption

    /// What a `cp` line takes: `--force` (spelled as `mv`'s) and the format characters' option.
    static let quickGrammar = QuickArguments.Grammar([Verb.Table.force], positionals: 2).adding(FormatCharacterOption.quickGrammar)

    /// A plain `cp` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var cp = Self()
            cp.source = try arguments.positional()
            cp.destination = try arguments.positional()
            cp.force = arguments.flag(Verb.Table.force)
            cp.formatCharacters = try FormatCharacterOption.quick(&arguments)
            return cp
        }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        let checked = destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        _ = try EntryName.validate(checked)
        _ = try VaultfileCommand.Cp.apply(to: &vault, source: source, destination: destination, force: force,
                                          allowFormatCharacters: formatCharacters.allowFormatCharacters)
    }
}

/// `list [PREFIX]`: the names, as `list` prints them.
struct BatchList: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "list")
    @Argument var prefix: String?

    /// What a `list` line takes: a prefix, or none.
    static let quickGrammar = QuickArguments.Grammar(optionalPositionals: 1)

    /// A plain `list` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var list = Self()
            list.prefix = arguments.optionalPositional()
            return list
        }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        var listing = [UInt8]()
        VaultfileCommand.List.apply(to: vault, prefix: prefix, output: &listing)
        output.names(listing)
    }
}
