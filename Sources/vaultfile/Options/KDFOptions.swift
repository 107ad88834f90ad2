import ArgumentParser
import KDF

// MARK: - Choosing KDF settings (init, passwd, calibrate)

/// The KDF a user asks for by name.
enum KDFName: String, ExpressibleByArgument, CaseIterable {
    case argon2id
    case pbkdf2
}

/// `--kdf`, `--kdf-memory`, `--kdf-iterations`, `--kdf-parallelism`, `--kdf-time`, `--allow-weak-kdf`.
struct KDFOptions: ParsableArguments {
    @Option(name: .customLong("kdf"), help: "The key derivation function: argon2id (default) or pbkdf2 (PBKDF2-HMAC-SHA256).")
    var kdf: KDFName?

    @Option(name: .customLong("kdf-memory"), help: ArgumentHelp("Argon2id memory (K/M/G suffixes). Default 64M.", valueName: "size"))
    var memory: String?

    @Option(name: .customLong("kdf-iterations"), help: ArgumentHelp(
        "Argon2id passes (default 3) or PBKDF2 iterations (default 600000).", valueName: "n"))
    var iterations: UInt32?

    @Option(name: .customLong("kdf-parallelism"), help: ArgumentHelp("Argon2id lanes and threads. Default 4.", valueName: "n"))
    var parallelism: UInt32?

    @Option(name: .customLong("kdf-time"), help: ArgumentHelp(
        "Calibrate the iterations so that unlocking takes this long on this machine (e.g. 500ms, 1s).", valueName: "duration"))
    var time: String?

    @Flag(name: .customLong("allow-weak-kdf"), help: "Allow settings below OWASP's minimum (faster to guess).")
    var allowWeak = false

    func validate() throws {
        if time != nil && iterations != nil {
            throw ValidationError("give either --kdf-time or --kdf-iterations, not both")
        }
        if let time, TimeSpan.parseSeconds(time) == nil {
            throw ValidationError("--kdf-time takes a duration such as 500ms or 1.5s, not '\(time)'")
        }
        if kdf == .pbkdf2 && (memory != nil || parallelism != nil) {
            throw ValidationError("--kdf-memory and --kdf-parallelism apply to argon2id only")
        }
        if let memory, ByteSize.parse(memory) == nil {
            throw ValidationError("--kdf-memory takes a size such as 64M or 1G, not '\(memory)'")
        }
    }
}

// MARK: - The quick reading (QuickArguments.swift)

extension KDFOptions {
    /// What these options add to a verb's quick grammar.
    static let quickGrammar = QuickArguments.Grammar(
        flags: ["allow-weak-kdf"], options: ["kdf", "kdf-memory", "kdf-iterations", "kdf-parallelism", "kdf-time"])

    /// These options read from a plain command line, as ArgumentParser reads them; declines when
    /// a value does not read or `validate()` fails.
    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        options.kdf = try arguments.value("kdf")
        options.memory = arguments.string("kdf-memory")
        options.iterations = try arguments.value("kdf-iterations")
        options.parallelism = try arguments.value("kdf-parallelism")
        options.time = arguments.string("kdf-time")
        options.allowWeak = arguments.flag("allow-weak-kdf")
        try QuickArguments.validate(options)
        return options
    }
}
