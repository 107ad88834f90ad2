import ArgumentParser
import KDF
import SecureMemory
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

extension VaultfileCommand {
    /// Applies many commands with one unlock and one seal, all or nothing.
    struct Batch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "batch",
            abstract: "Apply many commands (one per line) with one unlock and one re-seal, all or nothing.",
            discussion: """
                Lines: set NAME [--field F] (--value TEXT | --value-file FILE | --generate [--length N] \
                [--charset SPEC] [--words N] [--separator S]); get NAME [--field F]; rm NAME [--field F]; \
                mv OLD NEW [--force]; cp SOURCE DESTINATION [--force]; list [PREFIX]. Quote with '…' or "…"; # starts a comment. \
                --value exists only in batch scripts, which are not argv. Output of get and list is \
                printed in order, and only when every line succeeded: back to back by default (so a script \
                of a get line beside another get or a list needs -z or --json: without, it is refused, exit 64); with -z each \
                result ends with a NUL (a value holding a NUL fails its line); with --json one JSON object per \
                line, {"line", "verb", "ok"} with get's "value" and "encoding" and list's "names", and on a \
                failure only the failing line's object, with "error" and "status" (docs/JSON.md).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: Table.script.long, help: ArgumentHelp("Read the commands from this file (default: stdin).", valueName: "file"), completion: .file())
        var script: String?
        @Flag(name: Table.json.long, help: "Print one JSON object per line: line, verb, ok, and get's value or list's names (docs/JSON.md).")
        var json = false
        @Flag(name: .customShort("z"), help: "End each get and list result with a NUL byte.")
        var nul = false

        func validate() throws {
            if json && nul { throw ValidationError("give either --json or -z, not both") }
        }

        func run() throws {
            var text = try script.map(Input.readFile) ?? Input.readAll(STDIN_FILENO, what: "standard input")
            defer { wipe(&text) }
            let lines = try BatchScript.parse(text)
            if !json && !nul { try BatchScript.refuseUnframedGets(lines) }
            var output = BatchOutput(framing: json ? .json : nul ? .nul : .plain)
            defer { output.wipe() }
            do {
                try unlock.update { unlocked in
                    for line in lines {
                        do {
                            output.begin(line: line.number, verb: Self.verb(line.command))
                            try line.command.apply(to: &unlocked.vault, output: &output)
                            output.end()
                        } catch {
                            throw BatchError(line: line.number, underlying: error)
                        }
                    }
                }
            } catch let failure as BatchError where json {
                let verb = lines.first { $0.number == failure.line }.map { Self.verb($0.command) } ?? ""
                try StandardOutput.write(Array(BatchOutput.failure(line: failure.line, verb: verb, error: failure.underlying).utf8))
                throw failure
            }
            try StandardOutput.write(output.bytes)
        }

        /// The verb of a parsed line, as the script spells it.
        private static func verb(_ command: BatchVerb) -> String {
            type(of: command).configuration.commandName ?? ""
        }
    }
}

extension VaultfileCommand.Batch {
    /// `batch`'s own long options (the unlock options have their own tables; `-z` is short only):
    /// named by the declarations above; QuickArgumentsTableTests compares them with ArgumentParser's.
    enum Table: String, OptionTable {
        case script, json

        var kind: OptionKind {
            switch self {
            case .json: .flag
            case .script: .option
            }
        }
    }
}

/// A failure on one line of a batch script: nothing was changed.
///
/// `ErrorReport` shows it as the underlying error's report with the line number in front.
struct BatchError: Error {
    /// The 1-based line of the script.
    let line: Int
    /// What went wrong on that line.
    let underlying: any Error
}

// MARK: - Script parsing

/// One verb of a batch script, applied to the unlocked vault.
protocol BatchVerb: ParsableCommand {
    /// Applies the verb through its top-level command's `apply`; `get` and `list` add their result to `output`.
    func apply(to vault: inout Vault, output: inout BatchOutput) throws
}

/// The verbs a batch line may use, parsed by ArgumentParser like the CLI's own.
struct BatchLine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch-line",
        subcommands: [BatchSet.self, BatchGet.self, BatchRm.self, BatchMv.self, BatchCp.self, BatchList.self])
}

enum BatchScript {
    /// The verbs a line may start with, as BatchLine lists them.
    static let verbs = BatchLine.configuration.subcommands.compactMap { $0.configuration.commandName }

    /// "set, get, rm, mv and list": the verbs, for a message.
    static var verbList: String { verbs.dropLast().joined(separator: ", ") + " and " + (verbs.last ?? "") }

    /// Parsed lines with their 1-based numbers.
    static func parse(_ bytes: [UInt8]) throws -> [(number: Int, command: BatchVerb)] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError.invalidArgument("the batch script is not UTF-8") }
        var result: [(Int, BatchVerb)] = []
        for (index, line) in text.textLines().enumerated() {
            let tokens: [String]
            do { tokens = try tokenize(line) } catch { throw CLIError.invalidArgument("line \(index + 1): \(error)") }
            guard !tokens.isEmpty else { continue }
            if let quick = quick(tokens) {
                result.append((index + 1, quick))
                continue
            }
            // A verb batch does not run (edit, show, …): say which ones it runs, not the parser's "unexpected argument".
            guard verbs.contains(tokens[0]) else {
                throw CLIError.invalidArgument("line \(index + 1): '\(tokens[0])' is not a batch command; batch runs \(verbList)")
            }
            if let empty = Usage.emptyInlineValue(in: tokens) { throw CLIError.invalidArgument("line \(index + 1): \(empty.description)") }
            let command: ParsableCommand
            do {
                command = try BatchLine.parseAsRoot(tokens)
            } catch {
                throw CLIError.invalidArgument("line \(index + 1): \(BatchLine.message(for: error))")
            }
            guard let verb = command as? BatchVerb else {
                throw CLIError.invalidArgument("line \(index + 1): '\(tokens[0])' is not a batch command; batch runs \(verbList)")
            }
            result.append((index + 1, verb))
        }
        return result
    }

    /// A plain line read by its verb's quick grammar (QuickArguments.swift, the verb's option
    /// tables); nil when ArgumentParser must read it (and word what is wrong with it). ArgumentParser
    /// reflects over the verb (about 1.5 ms a line; 1,000 `set` lines took 12× a `set` of one entry).
    static func quick(_ tokens: [String]) -> BatchVerb? {
        let rest = tokens.dropFirst()
        switch tokens.first {
        case "set": return (try? BatchQuickSet.quick(rest)) ?? (try? BatchSet.quick(rest))
        case "get": return try? BatchGet.quick(rest)
        case "rm": return try? BatchRm.quick(rest)
        case "mv": return try? BatchMv.quick(rest)
        case "cp": return try? BatchCp.quick(rest)
        case "list": return try? BatchList.quick(rest)
        default: return nil
        }
    }

    /// Splits a line like a shell would: spaces separate, '…' is literal, "…" allows \" and \\, # starts a comment.
    static func tokenize(_ line: Substring) throws -> [String] {
        var tokens: [String] = [], current = "", inToken = false
        var chars = line.makeIterator()
        while let char = chars.next() {
            switch char {
            case " ", "\t", "\r":
                if inToken { tokens.append(current); current = ""; inToken = false }
            case "#" where !inToken:
                return tokens
            case "'":
                inToken = true
                while true {
                    guard let next = chars.next() else { throw CLIError.invalidArgument("unterminated single quote") }
                    if next == "'" { break }
                    current.append(next)
                }
            case "\"":
                inToken = true
                while true {
                    guard let next = chars.next() else { throw CLIError.invalidArgument("unterminated double quote") }
                    if next == "\"" { break }
                    if next == "\\", let escaped = chars.next() {
                        switch escaped {
                        case "n": current.append("\n")
                        case "t": current.append("\t")
                        default: current.append(escaped)
                        }
                    } else {
                        current.append(next)
                    }
                }
            case "\\":
                inToken = true
                if let next = chars.next() { current.append(next) }
            default:
                inToken = true
                current.append(char)
            }
        }
        if inToken { tokens.append(current) }
        return tokens
    }
}

// MARK: - The verbs

// Each verb takes the options of its verb's own tables (`VaultfileCommand.Set.Table`, …), parses
// its line with their grammar (or ArgumentParser, which reads the same declarations, for a line
// that is not plain) and calls the function its top-level command calls (`Get.apply`, …), so that
// a verb behaves the same on the command line and in a batch.

struct BatchSet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "set")
    private typealias Verb = VaultfileCommand.Set
    @Argument var name: String
    @Option(name: Verb.Table.field.long) var field: String?
    @Option(name: Table.value.long) var value: String?
    @Option(name: Verb.Table.valueFile.long) var valueFile: String?
    @Flag(name: Verb.Table.generate.long) var generate = false
    @OptionGroup var generator: GeneratorOptions
    @OptionGroup var formatCharacters: FormatCharacterOption

    /// The option only a batch line of `set` takes: the value itself (a script is not argv).
    enum Table: String, OptionTable {
        case value

        var kind: OptionKind { .option }
    }

    /// What a `set` line takes: `set`'s --field, --value-file and --generate, `--value`, and the
    /// generator's and the format characters' options.
    static let quickGrammar = QuickArguments.Grammar([Verb.Table.field, .valueFile, .generate], positionals: 1)
        .adding(Table.grammar).adding(GeneratorOptions.quickGrammar).adding(FormatCharacterOption.quickGrammar)

    /// A plain `set` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var set = Self()
            set.name = try arguments.positional()
            set.field = arguments.string(Verb.Table.field)
            set.value = arguments.string(Table.value)
            set.valueFile = arguments.string(Verb.Table.valueFile)
            set.generate = arguments.flag(Verb.Table.generate)
            set.generator = try GeneratorOptions.quick(&arguments)
            set.formatCharacters = try FormatCharacterOption.quick(&arguments)
            return set
        }
    }

    func validate() throws {
        let sources = [value != nil, valueFile != nil, generate].filter { $0 }.count
        guard sources == 1 else { throw ValidationError("set needs exactly one of --value, --value-file and --generate") }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        var bytes = try value.map { Array($0.utf8) } ?? valueFile.map(Input.readFile) ?? generator.generate()
        defer { wipe(&bytes) }
        try VaultfileCommand.Set.apply(to: &vault, name: name, part: EntryPart(field: field), value: bytes,
                                       allowFormatCharacters: formatCharacters.allowFormatCharacters)
    }
}

/// A plain `set NAME --value TEXT` line (the commonest), read by `BatchSet.quickGrammar` into plain
/// values: building `BatchSet`'s property wrappers costs about 60,000 instructions a line (a third
/// of a 1,000-line batch). Other plain set lines are a `BatchSet`; QuickArgumentsTableTests checks both.
struct BatchQuickSet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "set")
    private typealias Verb = VaultfileCommand.Set
    var name = "", value = "", field: String?, allowFormatCharacters = false

    init() {}

    /// A plain `set NAME --value TEXT` line (after the verb), with or without --field and
    /// --allow-format-characters; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        guard var arguments = QuickArguments(line, grammar: BatchSet.quickGrammar) else { throw QuickArguments.Declined() }
        var set = Self()
        set.name = try arguments.positional()
        set.field = arguments.string(Verb.Table.field)
        guard let value = arguments.string(BatchSet.Table.value) else { throw QuickArguments.Declined() }
        set.value = value
        set.allowFormatCharacters = arguments.flag(FormatCharacterOption.Table.allowFormatCharacters)
        // --value-file, --generate or the generator's options beside --value: BatchSet, whose
        // validate() then refuses the line through ArgumentParser.
        try arguments.checkAllRead()
        return set
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        var bytes = Array(value.utf8)
        defer { wipe(&bytes) }
        try VaultfileCommand.Set.apply(to: &vault, name: name, part: EntryPart(field: field), value: bytes,
                                       allowFormatCharacters: allowFormatCharacters)
    }
}

struct BatchGet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "get")
    private typealias Verb = VaultfileCommand.Get
    @Argument var name: String
    @Option(name: Verb.Table.field.long) var field: String?

    /// What a `get` line takes: `get`'s --field.
    static let quickGrammar = QuickArguments.Grammar([Verb.Table.field], positionals: 1)

    /// A plain `get` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var get = Self()
            get.name = try arguments.positional()
            get.field = arguments.string(Verb.Table.field)
            return get
        }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Get.apply(to: vault, name: name, part: EntryPart(field: field)) { try output.value($0) }
    }
}

struct BatchRm: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "rm")
    private typealias Verb = VaultfileCommand.Rm
    @Argument var name: String
    @Option(name: Verb.Table.field.long) var field: String?

    /// What an `rm` line takes: `rm`'s --field.
    static let quickGrammar = QuickArguments.Grammar([Verb.Table.field], positionals: 1)

    /// A plain `rm` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var rm = Self()
            rm.name = try arguments.positional()
            rm.field = arguments.string(Verb.Table.field)
            return rm
        }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Rm.apply(to: &vault, name: name, part: EntryPart(field: field))
    }
}

struct BatchMv: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "mv")
    private typealias Verb = VaultfileCommand.Mv
    @Argument var old: String
    @Argument var new: String
    @Flag(name: Verb.Table.force.long) var force = false
    @OptionGroup var formatCharacters: FormatCharacterOption

    /// What an `mv` line takes: `mv`'s --force and the format characters' option.
    static let quickGrammar = QuickArguments.Grammar([Verb.Table.force], positionals: 2).adding(FormatCharacterOption.quickGrammar)

    /// A plain `mv` line (after the verb), as ArgumentParser reads it; declines (throws) for any other.
    static func quick(_ line: ArraySlice<String>) throws(QuickArguments.Declined) -> Self {
        try QuickArguments.read(line, grammar: quickGrammar) { (arguments) throws(QuickArguments.Declined) in
            var mv = Self()
            mv.old = try arguments.positional()
            mv.new = try arguments.positional()
            mv.force = arguments.flag(Verb.Table.force)
            mv.formatCharacters = try FormatCharacterOption.quick(&arguments)
            return mv
        }
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Mv.apply(to: &vault, old: old, new: new, force: force, allowFormatCharacters: formatCharacters.allowFormatCharacters)
    }
}
