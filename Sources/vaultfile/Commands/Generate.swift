import ArgumentParser
import SecureMemory
import VaultFile

/// The options that choose what `generate` (and `set --generate`) makes.
struct GeneratorOptions: ParsableArguments {
    @Option(name: .customLong("length"), help: ArgumentHelp("Characters in the password (default 24).", valueName: "n"))
    var length: Int = PasswordGenerator.defaultLength

    @Option(name: .customLong("charset"), help: ArgumentHelp(
        "Comma-separated classes: lower, upper, digits, symbols, alnum, hex, or chars:LITERAL. Default: lower,upper,digits,symbols.",
        valueName: "spec"), completion: .list(["lower,upper,digits,symbols", "alnum", "hex", "lower", "upper", "digits", "symbols", "chars:"]))
    var charset: String = PasswordGenerator.defaultCharset

    @Option(name: .customLong("words"), help: ArgumentHelp(
        "Make a passphrase of this many words from the EFF Large Wordlist (7,776 words, 12.9 bits each) instead.", valueName: "n"))
    var words: Int?

    @Option(name: .customLong("separator"), help: ArgumentHelp("Between passphrase words (default -).", valueName: "text"))
    var separator: String = "-"

    func validate() throws {
        guard (1...4096).contains(length) else { throw ValidationError("--length must be between 1 and 4096") }
        if let words, !(1...64).contains(words) { throw ValidationError("--words must be between 1 and 64") }
        do { _ = try PasswordGenerator.characters(forSpec: charset) } catch { throw ValidationError(error.description) }
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

extension VaultfileCommand {
    /// Prints a random password or passphrase; needs no vault.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Print a random password or passphrase (no vault needed).",
            discussion: "Uniform over the character set (libsodium's randombytes_uniform: no modulo bias). Store one directly with 'set NAME --generate'.")

        @OptionGroup var generator: GeneratorOptions

        func run() throws {
            var value = try generator.generate()
            defer { wipe(&value) }
            try StandardOutput.write(value + [0x0A])
            Messages.progress("(\(Int(generator.entropyBits)) bits)")
        }
    }
}
