import ArgumentParser
import VaultModel

// MARK: - The plain output's one get

extension BatchScript {
    /// Refuses a script where a `get` line prints beside another line that prints (`get` or
    /// `list`) under the plain framing, which prints the results back to back with nothing between
    /// them (a script could not tell where a value ends): `-z` or `--json` frame them. One `get`,
    /// alone or with lines that print nothing, prints exactly as before; `list` lines alone too.
    static func refuseUnframedGets(_ lines: [(number: Int, command: BatchVerb)]) throws {
        let printing = lines.filter { $0.command is BatchGet || $0.command is BatchList }
        guard let get = printing.first(where: { $0.command is BatchGet }), printing.count >= 2 else { return }
        let other = printing.first { $0.number != get.number }!
        let (first, second) = get.number < other.number ? (get, other) : (other, get)
        func verb(_ line: (number: Int, command: BatchVerb)) -> String { line.command is BatchGet ? "get" : "list" }
        let what = verb(first) == verb(second) ? "are both get" : "are \(verb(first)) and \(verb(second))"
        let result = other.command is BatchGet ? "their values" : "the value and the names"
        throw CLIError.invalidArgument("lines \(first.number) and \(second.number) \(what): "
            + "without -z or --json \(result) would be printed back to back with nothing between them; "
            + "run the batch with -z (each value ends with a NUL) or --json (one object a line), or one get per batch "
            + "with no list")
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
