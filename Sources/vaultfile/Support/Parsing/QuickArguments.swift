import ArgumentParser

// MARK: - The quick reading of a plain command line

/// The command line of a hot verb (`get`, `set`, `list`, `ls`, `init`, `rm`, `verify`) read without
/// swift-argument-parser, when it is plain: long options the verb knows, each given once
/// (repeatable ones aside), as `--name value` or `--name=value` (not empty) with a value that does
/// not start with `-` (or is `-` alone), and the positional arguments the verb takes (its optional
/// ones given or not). Anything else declines — a short option, `--help`, `--`, an unknown or repeated
/// option, a value its type does not read, a check (`validate()`) that fails — and ArgumentParser
/// reads the line as before, with its help, completions, messages and exit statuses.
///
/// Why: ArgumentParser builds the option set of a verb and of each of its option groups by
/// reflection (`Mirror`, protocol-conformance scans over every record of the binary, mangled-name
/// lookups), twice per run: two thirds of the instructions of a `get` (docs/PERFORMANCE.md). The
/// verb's own `quick(_:)` fills the same property wrappers that ArgumentParser fills, and
/// `QuickArgumentsTests` checks that both readings give the same command, option by option.
struct QuickArguments {
    /// What a verb accepts: its flags, its options (with a value) and how many positional arguments.
    struct Grammar {
        var flags: Swift.Set<String> = []
        var options: Swift.Set<String> = []
        /// Options that may be given more than once (their values are kept in order).
        var repeatable: Swift.Set<String> = []
        /// The positional arguments the verb needs.
        var positionals = 0
        /// The optional positional arguments that may follow them.
        var optionalPositionals = 0

        /// The options and flags of both, and the positionals of both added up.
        func adding(_ other: Grammar) -> Grammar {
            Grammar(flags: flags.union(other.flags), options: options.union(other.options),
                    repeatable: repeatable.union(other.repeatable), positionals: positionals + other.positionals,
                    optionalPositionals: optionalPositionals + other.optionalPositionals)
        }
    }

    /// The line is not plain enough: ArgumentParser reads it.
    struct Declined: Error {}

    /// Each option's values (a flag's: one empty string), by long name without the dashes.
    private var given: [String: [String]] = [:]
    /// The positional arguments, in order; taken from the front by `positional()`.
    private var positionals: ArraySlice<String>

    /// Reads `arguments` (the verb's own, after its name) against `grammar`, or nil to decline.
    init?(_ arguments: ArraySlice<String>, grammar: Grammar) {
        var positionals: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            guard argument.utf8.first == UInt8(ascii: "-") else {
                positionals.append(argument)
                continue
            }
            // `-`, `--`, short options and `-x` bundles: ArgumentParser's rules.
            guard argument.utf8.count > 2, argument.hasPrefix("--") else { return nil }
            var name = Substring(argument.utf8.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = name[..<equals]
                // ArgumentParser refuses `--name=` with nothing after it (`--name ""` is an empty value).
                guard value?.isEmpty == false else { return nil }
            }
            let key = String(name)
            if grammar.flags.contains(key) {
                guard value == nil, given[key] == nil else { return nil }
                given[key] = [""]
            } else if grammar.options.contains(key) {
                if value == nil {
                    guard index < arguments.endIndex else { return nil }
                    value = arguments[index]
                    index += 1
                }
                // `-` alone is a value (standard input, for --value-file and --password-file).
                guard let value, value.utf8.first != UInt8(ascii: "-") || value == "-" else { return nil }
                guard given[key] == nil || grammar.repeatable.contains(key) else { return nil }
                given[key, default: []].append(value)
            } else {
                return nil
            }
        }
        guard positionals.count >= grammar.positionals,
              positionals.count <= grammar.positionals + grammar.optionalPositionals else { return nil }
        self.positionals = positionals[...]
    }

    // MARK: - Reading the values

    /// Whether the flag `--name` was given.
    mutating func flag(_ name: String) -> Bool {
        given.removeValue(forKey: name) != nil
    }

    /// The value of `--name`, or nil when it was not given.
    mutating func string(_ name: String) -> String? {
        given.removeValue(forKey: name)?.last
    }

    /// Every value of the repeatable `--name`, in order.
    mutating func strings(_ name: String) -> [String] {
        given.removeValue(forKey: name) ?? []
    }

    /// The value of `--name` read as ArgumentParser reads it (`init?(argument:)`), or nil when it
    /// was not given; a value the type does not read declines (ArgumentParser then says why).
    mutating func value<T: ExpressibleByArgument>(_ name: String, as type: T.Type = T.self) throws(Declined) -> T? {
        guard let text = string(name) else { return nil }
        guard let value = T(argument: text) else { throw Declined() }
        return value
    }

    /// The next positional argument.
    mutating func positional() throws(Declined) -> String {
        guard let first = positionals.popFirst() else { throw Declined() }
        return first
    }

    /// The next positional argument, or nil when none is left (an optional one not given).
    mutating func optionalPositional() -> String? {
        positionals.popFirst()
    }

    /// Declines unless every option and positional argument given was read (a grammar that lists
    /// an option no `quick(_:)` reads must not drop it).
    private func checkAllRead() throws(Declined) {
        guard given.isEmpty, positionals.isEmpty else { throw Declined() }
    }

    /// A verb read from a plain command line (the arguments after the verb) against `grammar`:
    /// `fill` sets the verb's property wrappers from the arguments; then every argument must have
    /// been read and the verb's checks must pass. Declines (throws) for any other line.
    static func read<Command: ParsableArguments>(_ line: ArraySlice<String>, grammar: Grammar,
                                                 _ fill: (inout QuickArguments) throws(Declined) -> Command) throws(Declined) -> Command {
        guard var arguments = QuickArguments(line, grammar: grammar) else { throw Declined() }
        let command = try fill(&arguments)
        try arguments.checkAllRead()
        try validate(command)
        return command
    }

    /// Runs the checks of `value` (`validate()`), declining when they fail: ArgumentParser then
    /// reports the failure in its own words.
    static func validate<T: ParsableArguments>(_ value: T) throws(Declined) {
        var value = value
        do { try value.validate() } catch { throw Declined() }
    }
}

// MARK: - The verbs with a quick path

/// The verbs read by `QuickArguments` when their command line is plain.
enum QuickCommand {
    /// The command `arguments` (without the program name) asks for, or nil when ArgumentParser
    /// must read them.
    static func parse(_ arguments: [String]) -> (any ParsableCommand)? {
        guard let verb = arguments.first else { return nil }
        let rest = arguments.dropFirst()
        switch verb {
        case "get", "show":
            return try? VaultfileCommand.Get.quick(rest)
        case "set":
            return try? VaultfileCommand.Set.quick(rest)
        case "list":
            return try? VaultfileCommand.List.quick(rest)
        case "ls":
            return try? VaultfileCommand.Ls.quick(rest)
        case "init":
            return try? VaultfileCommand.Init.quick(rest)
        case "rm":
            return try? VaultfileCommand.Rm.quick(rest)
        case "verify":
            return try? VaultfileCommand.Verify.quick(rest)
        default:
            return nil
        }
    }
}
