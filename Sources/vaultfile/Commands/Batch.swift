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
                mv OLD NEW [--force]; list [PREFIX]. Quote with '…' or "…"; # starts a comment. \
                --value exists only in batch scripts, which are not argv. Output of get and list is \
                printed in order, and only when every line succeeded: back to back by default; with -z each \
                result ends with a NUL (a value holding a NUL fails its line); with --json one JSON object per \
                line, {"line", "verb", "ok"} with get's "value" and "encoding" and list's "names", and on a \
                failure only the failing line's object, with "error" and "status" (docs/JSON.md).
                """)

        @OptionGroup var unlock: UnlockOptions
        @Option(name: .customLong("script"), help: ArgumentHelp("Read the commands from this file (default: stdin).", valueName: "file"), completion: .file())
        var script: String?
        @Flag(name: .customLong("json"), help: "Print one JSON object per line: line, verb, ok, and get's value or list's names (docs/JSON.md).")
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
        subcommands: [BatchSet.self, BatchGet.self, BatchRm.self, BatchMv.self, BatchList.self])
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
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let tokens: [String]
            do { tokens = try tokenize(line) } catch { throw CLIError.invalidArgument("line \(index + 1): \(error)") }
            guard !tokens.isEmpty else { continue }
            if let quick = BatchQuickSet(tokens) {
                result.append((index + 1, quick))
                continue
            }
            // A verb batch does not run (edit, show, …): say which ones it runs, not the parser's "unexpected argument".
            guard verbs.contains(tokens[0]) else {
                throw CLIError.invalidArgument("line \(index + 1): '\(tokens[0])' is not a batch command; batch runs \(verbList)")
            }
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

// Each verb parses its line and calls the function its top-level command calls (`Get.apply`, …),
// so that a verb behaves the same on the command line and in a batch.

struct BatchSet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "set")
    @Argument var name: String
    @Option(name: .customLong("field")) var field: String?
    @Option(name: .customLong("value")) var value: String?
    @Option(name: .customLong("value-file")) var valueFile: String?
    @Flag(name: .customLong("generate")) var generate = false
    @OptionGroup var generator: GeneratorOptions
    @OptionGroup var formatCharacters: FormatCharacterOption

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

/// `set NAME --value TEXT`, the commonest line, read without ArgumentParser: parsing a line
/// reflects over `BatchSet` (about 1.5 ms; 1,000 such lines took 12× a `set` of one entry).
/// Only the exact four tokens, neither NAME nor TEXT starting with `-` (so that no option, `--`
/// or `-h` is among them) and NAME not `help`; every other line goes through `BatchSet`, which
/// gives these lines the same meaning.
struct BatchQuickSet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "set")
    var name = ""
    var value = ""

    init() {}

    init?(_ tokens: [String]) {
        guard tokens.count == 4, tokens[0] == "set", tokens[2] == "--value", tokens[1] != "help",
              !tokens[1].hasPrefix("-"), !tokens[3].hasPrefix("-") else { return nil }
        name = tokens[1]
        value = tokens[3]
    }

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        var bytes = Array(value.utf8)
        defer { wipe(&bytes) }
        try VaultfileCommand.Set.apply(to: &vault, name: name, part: EntryPart(field: nil), value: bytes, allowFormatCharacters: false)
    }
}

struct BatchGet: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "get")
    @Argument var name: String
    @Option(name: .customLong("field")) var field: String?

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Get.apply(to: vault, name: name, part: EntryPart(field: field)) { try output.value($0) }
    }
}

struct BatchRm: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "rm")
    @Argument var name: String
    @Option(name: .customLong("field")) var field: String?

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Rm.apply(to: &vault, name: name, part: EntryPart(field: field))
    }
}

struct BatchMv: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "mv")
    @Argument var old: String
    @Argument var new: String
    @Flag(name: .customLong("force")) var force = false
    @OptionGroup var formatCharacters: FormatCharacterOption

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        try VaultfileCommand.Mv.apply(to: &vault, old: old, new: new, force: force, allowFormatCharacters: formatCharacters.allowFormatCharacters)
    }
}

struct BatchList: BatchVerb {
    static let configuration = CommandConfiguration(commandName: "list")
    @Argument var prefix: String?

    func apply(to vault: inout Vault, output: inout BatchOutput) throws {
        var listing = [UInt8]()
        VaultfileCommand.List.apply(to: vault, prefix: prefix, output: &listing)
        output.names(listing)
    }
}
