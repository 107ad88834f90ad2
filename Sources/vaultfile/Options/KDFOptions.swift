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
    @Option(name: Table.kdf.long, help: "The key derivation function: argon2id (default) or pbkdf2 (PBKDF2-HMAC-SHA256).")
    var kdf: KDFName?

    @Option(name: Table.memory.long, help: ArgumentHelp("Argon2id memory (K/M/G suffixes). Default 64M.", valueName: "size"))
    var memory: String?

    @Option(name: Table.iterations.long, help: ArgumentHelp(
        "Argon2id passes (default 3) or PBKDF2 iterations (default 600000).", valueName: "n"))
    var iterations: UInt32?

    @Option(name: Table.parallelism.long, help: ArgumentHelp("Argon2id lanes and threads. Default 4.", valueName: "n"))
    var parallelism: UInt32?

    @Option(name: Table.time.long, help: ArgumentHelp(
        "Calibrate the iterations so that unlocking takes this long on this machine (e.g. 500ms, 1s).", valueName: "duration"))
    var time: String?

    @Flag(name: Table.allowWeak.long, help: "Allow settings below OWASP's minimum (faster to guess).")
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

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension KDFOptions: QuickOptionGroup {
    /// The options of `KDFOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case kdf, memory = "kdf-memory", iterations = "kdf-iterations", parallelism = "kdf-parallelism", time = "kdf-time"
        case allowWeak = "allow-weak-kdf"

        var kind: OptionKind {
            switch self {
            case .allowWeak: .flag
            case .kdf, .memory, .iterations, .parallelism, .time: .option
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout KDFOptions) throws(QuickArguments.Declined) {
            switch self {
            case .kdf: options.kdf = try arguments.value(self)
            case .memory: options.memory = arguments.string(self)
            case .iterations: options.iterations = try arguments.value(self)
            case .parallelism: options.parallelism = try arguments.value(self)
            case .time: options.time = arguments.string(self)
            case .allowWeak: options.allowWeak = arguments.flag(self)
            }
        }
    }
}
