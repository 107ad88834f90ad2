import ArgumentParser
import SecureMemory
import VaultFormat
import VaultModel

/// The options that choose what `generate` (and `set --generate`) makes.
struct GeneratorOptions: ParsableArguments {
    @Option(name: Table.length.long, help: ArgumentHelp("Characters in the password.", valueName: "n"))
    var length: Int = PasswordGenerator.defaultLength

    @Option(name: Table.charset.long, help: ArgumentHelp(
        "Comma-separated classes: lower, upper, digits, symbols, alnum, hex, or chars:LITERAL. Default: lower,upper,digits,symbols.",
        valueName: "spec"), completion: .list(["lower,upper,digits,symbols", "alnum", "hex", "lower", "upper", "digits", "symbols", "chars:"]))
    var charset: String = PasswordGenerator.defaultCharset

    @Option(name: Table.words.long, help: ArgumentHelp(
        "Make a passphrase of this many words from the EFF Large Wordlist (7,776 words, 12.9 bits each) instead.", valueName: "n"))
    var words: Int?

    @Option(name: Table.separator.long, help: ArgumentHelp("Between passphrase words.", valueName: "text"))
    var separator: String = Self.defaultSeparator

    /// `--separator` when it is not given.
    static let defaultSeparator = "-"

    func validate() throws {
        guard (1...4096).contains(length) else { throw ValidationError("--length must be between 1 and 4096") }
        if let words, !(1...64).contains(words) { throw ValidationError("--words must be between 1 and 64") }
        do { _ = try PasswordGenerator.characters(forSpec: charset) } catch let VaultError.invalidName(why) {
            throw ValidationError("--charset: \(why)")  // not "invalid name:": the spec names no entry
        } catch { throw ValidationError("\(error)") }
    }

    /// A fresh random password or passphrase.
    func generate() throws -> [UInt8] {
        if let words { return try PasswordGenerator.passphrase(words: words, separator: separator) }
        return try PasswordGenerator.password(length: length, characters: try PasswordGenerator.characters(forSpec: charset))
    }

    /// Its strength in bits, for people.
    var entropyBits: Double {
        if let words { return PasswordGenerator.entropyBits(length: words, alphabet: PasswordGenerator.wordListCount) }
        let count = (try? PasswordGenerator.characters(forSpec: charset).count) ?? 2
        return PasswordGenerator.entropyBits(length: length, alphabet: count)
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension GeneratorOptions {
    /// The options of `GeneratorOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case length, charset, words, separator

        var kind: OptionKind { .option }

        func read(from arguments: inout QuickArguments, into options: inout GeneratorOptions) throws(QuickArguments.Declined) {
            switch self {
            case .length: options.length = try arguments.value(self) ?? PasswordGenerator.defaultLength
            case .charset: options.charset = arguments.string(self) ?? PasswordGenerator.defaultCharset
            case .words: options.words = try arguments.value(self)
            case .separator: options.separator = arguments.string(self) ?? GeneratorOptions.defaultSeparator
            }
        }
    }

    /// What these options add to a verb's quick grammar.
    static let quickGrammar = Table.grammar

    /// These options read from a plain command line, as ArgumentParser reads them; declines when
    /// a value does not read or `validate()` fails.
    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        // The defaults pass validate() (QuickArgumentsTableTests): checked only when an option the
        // checks read is given, so that 1,000 `set` lines of a batch do not parse the default
        // character set 1,000 times.
        let checked = arguments.has(Table.length) || arguments.has(Table.charset) || arguments.has(Table.words)
        var options = Self()
        try arguments.read(Table.self, into: &options)
        if checked { try QuickArguments.validate(options) }
        return options
    }
}

extension VaultfileCommand {
    /// Prints a random password or passphrase; needs no vault.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Print a random password or passphrase (no vault needed).",
            discussion: """
                Uniform over the character set (libsodium's randombytes_uniform: no modulo bias). Store one \
                directly with 'set NAME --generate'.

                A final newline is printed only when stdout is a terminal, as 'get' does: piped or \
                redirected, the output is the password and nothing else, so 'vaultfile generate | \
                vaultfile set NAME' stores exactly it. --newline always adds one, as earlier releases did.
                """)

        @OptionGroup var generator: GeneratorOptions
        @Flag(name: .customLong("newline"), help: "End the output with a newline even when stdout is not a terminal.")
        var newline = false

        func run() throws {
            var value = try generator.generate()
            defer { wipe(&value) }
            try GeneratedOutput.write(value, newline: newline)
            Messages.progress("(\(Int(generator.entropyBits)) bits)")
        }
    }
}

// MARK: - Printing a generated value

/// How `generate` and `set --generate --print` print the value.
enum GeneratedOutput {
    /// Writes `value`, then a newline when stdout is a terminal (or when `newline`): piped, the
    /// bytes are the value alone, which the next command stores as it is.
    static func write(_ value: [UInt8], newline: Bool = false) throws {
        try StandardOutput.write(value)
        if newline || StandardOutput.isTerminal { try StandardOutput.write([0x0A]) }
    }
}
