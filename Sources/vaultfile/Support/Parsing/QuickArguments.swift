import ArgumentParser

// MARK: - Tables of options

/// What a long option takes: nothing (a flag), one value, or a value each time it is given.
enum OptionKind: Sendable {
    case flag, option, repeatable
}

/// The long options of a verb or of an option group, one case each, its raw value the name
/// without the dashes: the one list that the `@Option`/`@Flag` declarations name
/// (`@Option(name: Table.field.long)`), that the quick grammar is made of (`Grammar(Table.allCases)`)
/// and that the quick reading reads by (`arguments.string(Table.field)`). `QuickArgumentsTableTests`
/// compares the tables of each verb with ArgumentParser's (`vaultfile VERB --experimental-dump-help`).
protocol OptionTable: CaseIterable, RawRepresentable where RawValue == String {
    /// Whether the option is a flag, takes one value, or may be given more than once.
    var kind: OptionKind { get }
}

/// A table whose options the quick reading fills in, each by its own `read(from:into:)`: a
/// `switch` over every case, beside `kind`'s, so that a new option is one case here (the compiler
/// then asks for its kind and its reading) and its declaration.
protocol QuickOptionTable: OptionTable {
    /// The verb or option group that declares these options.
    associatedtype Owner

    /// Sets the property of `owner` that this option's declaration names, from `arguments`;
    /// declines when its value does not read.
    func read(from arguments: inout QuickArguments, into owner: inout Owner) throws(QuickArguments.Declined)
}

extension OptionTable {
    /// The option's name for `@Option(name:)` and `@Flag(name:)`.
    var long: NameSpecification { .customLong(rawValue) }

    /// Every option of the table, as a quick grammar without positional arguments.
    static var grammar: QuickArguments.Grammar { QuickArguments.Grammar(allCases) }
}

/// An option group whose options are one table (`Table`): its quick grammar is the table's, and
/// its quick reading fills the table's options, then runs the group's checks (`validate()`, empty
/// when it has none), as ArgumentParser reads a group.
protocol QuickOptionGroup: ParsableArguments {
    /// The group's options.
    associatedtype Table: QuickOptionTable where Table.Owner == Self
}

extension QuickOptionGroup {
    /// What these options add to a verb's quick grammar.
    static var quickGrammar: QuickArguments.Grammar { Table.grammar }

    /// These options read from a plain command line, as ArgumentParser reads them; declines when
    /// a value does not read or `validate()` fails.
    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var group = Self()
        try arguments.read(Table.self, into: &group)
        try QuickArguments.validate(group)
        return group
    }
}

// MARK: - The quick reading of a plain command line

/// The command line of a hot verb (`get`, `set`, `list`, `ls`, `init`, `rm`, `verify`, `import`) read without
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
///
/// The grammar comes from the verb's option tables (`OptionTable`), which its `@Option`/`@Flag`
/// declarations name too: there is no second list of names to keep in step.
struct QuickArguments {
    /// What a verb accepts: the long options of its tables and how many positional arguments.
    struct Grammar {
        /// What each long option takes, by name without the dashes.
        private(set) var options: [String: OptionKind] = [:]
        /// The positional arguments the verb needs.
        var positionals = 0
        /// The optional positional arguments that may follow them.
        var optionalPositionals = 0

        /// A grammar of `options` (a table's `allCases`, or some of its entries) and positional arguments.
        init<Options: Sequence>(_ options: Options, positionals: Int = 0, optionalPositionals: Int = 0)
        where Options.Element: OptionTable {
            for option in options { self.options[option.rawValue] = option.kind }
            self.positionals = positionals
            self.optionalPositionals = optionalPositionals
        }

        /// A grammar of positional arguments only.
        init(positionals: Int = 0, optionalPositionals: Int = 0) {
            self.positionals = positionals
            self.optionalPositionals = optionalPositionals
        }

        /// The options of both, and the positionals of both added up.
        func adding(_ other: Grammar) -> Grammar {
            var sum = self
            sum.options.merge(other.options) { mine, _ in mine }
            sum.positionals += other.positionals
            sum.optionalPositionals += other.optionalPositionals
            return sum
        }
    }

    /// The line is not plain enough: ArgumentParser reads it.
    struct Declined: Error {}

    /// Each option's values (a flag's: one empty string), by long name without the dashes, in the
    /// order given: a handful at most, searched in order (cheaper than hashing each name, for a
    /// batch of 1,000s of lines).
    private var given: [(name: String, values: [String])] = []
    /// The positional arguments, in order; taken from the front by `positional()`.
    private var positionals: ArraySlice<String> = []

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
                // `--name=` with nothing after it: declined, and refused before ArgumentParser
                // reads the line (`Usage.emptyInlineValue`); `--name ""` is an empty value.
                guard value?.isEmpty == false else { return nil }
            }
            let key = String(name)
            switch grammar.options[key] {
            case .flag:
                guard value == nil, position(of: key) == nil else { return nil }
                given.append((key, [""]))
            case let kind?:
                if value == nil {
                    guard index < arguments.endIndex else { return nil }
                    value = arguments[index]
                    index += 1
                }
                // `-` alone is a value (standard input, for --value-file and --password-file).
                guard let value, value.utf8.first != UInt8(ascii: "-") || value == "-" else { return nil }
                if let earlier = position(of: key) {
                    guard kind == .repeatable else { return nil }
                    given[earlier].values.append(value)
                } else {
                    given.append((key, [value]))
                }
            case nil:
                return nil
            }
        }
        guard positionals.count >= grammar.positionals,
              positionals.count <= grammar.positionals + grammar.optionalPositionals else { return nil }
        self.positionals = positionals[...]
    }

    // MARK: - Reading the values

    /// Where `name` is in `given`, or nil when it was not given (or was read).
    private func position(of name: String) -> Int? {
        given.firstIndex { $0.name == name }
    }

    /// The values of `option`, taken out of `given`, or nil when it was not given.
    private mutating func take(_ option: some OptionTable) -> [String]? {
        position(of: option.rawValue).map { given.remove(at: $0).values }
    }

    /// Whether the flag `option` was given.
    mutating func flag(_ option: some OptionTable) -> Bool {
        take(option) != nil
    }

    /// The value of `option`, or nil when it was not given.
    mutating func string(_ option: some OptionTable) -> String? {
        take(option)?.last
    }

    /// Every value of the repeatable `option`, in order.
    mutating func strings(_ option: some OptionTable) -> [String] {
        take(option) ?? []
    }

    /// The value of `option` read as ArgumentParser reads it (`init?(argument:)`), or nil when it
    /// was not given; a value the type does not read declines (ArgumentParser then says why).
    mutating func value<T: ExpressibleByArgument>(_ option: some OptionTable, as type: T.Type = T.self) throws(Declined) -> T? {
        guard let text = string(option) else { return nil }
        guard let value = T(argument: text) else { throw Declined() }
        return value
    }

    /// Reads every option of `table` into `owner`, each by its `read(from:into:)`.
    mutating func read<Table: QuickOptionTable>(_ table: Table.Type, into owner: inout Table.Owner) throws(Declined) {
        for option in Table.allCases { try option.read(from: &self, into: &owner) }
    }

    /// Whether `option` was given (and not read yet).
    func has(_ option: some OptionTable) -> Bool {
        position(of: option.rawValue) != nil
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
    func checkAllRead() throws(Declined) {
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
        case "import":
            return try? VaultfileCommand.Import.quick(rest)
        case "git" where rest.first == "credential":
            return try? VaultfileCommand.Git.Credential.quick(rest.dropFirst())
        default:
            return nil
        }
    }
}
