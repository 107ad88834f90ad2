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

    /// Whether any KDF option was given (passwd keeps the current settings otherwise).
    var isSpecified: Bool { kdf != nil || memory != nil || iterations != nil || parallelism != nil || time != nil }

    /// The settings asked for, calibrated if `--kdf-time` was given, checked against the creation floor.
    func parameters() throws -> KDFParameters {
        let parameters = try unchecked()
        try parameters.checkCreationFloor(allowWeak: allowWeak)
        return parameters
    }

    private func unchecked() throws -> KDFParameters {
        let target = time.flatMap(TimeSpan.parseSeconds)
        switch kdf ?? .argon2id {
        case .pbkdf2:
            if let target {
                let result = try Calibration.pbkdf2(targetSeconds: target)
                Messages.info("calibrated: \(result.parameters) takes \(formatSeconds(result.measuredSeconds)) here")
                return result.parameters
            }
            return .pbkdf2SHA256(.init(iterations: iterations ?? PBKDF2Parameters.defaults.iterations))
        case .argon2id:
            let defaults = Argon2idParameters.defaults
            let memoryKiB = try memoryKiB() ?? defaults.memoryKiB
            let lanes = parallelism ?? defaults.parallelism
            if let target {
                try Argon2idParameters(memoryKiB: memoryKiB, iterations: 1, parallelism: lanes).validate()
                let result = try Calibration.argon2id(memoryKiB: memoryKiB, parallelism: lanes, targetSeconds: target)
                Messages.info("calibrated: \(result.parameters) takes \(formatSeconds(result.measuredSeconds)) here")
                return result.parameters
            }
            return .argon2id(.init(memoryKiB: memoryKiB, iterations: iterations ?? defaults.iterations, parallelism: lanes))
        }
    }

    /// `--kdf-memory` in KiB, checked against the format's range.
    func memoryKiB() throws -> UInt32? {
        guard let memory else { return nil }
        guard let bytes = ByteSize.parse(memory), bytes % 1024 == 0, bytes / 1024 <= UInt64(UInt32.max) else {
            throw CLIError.invalidArgument("--kdf-memory must be a whole number of KiB, up to 64G")
        }
        return UInt32(bytes / 1024)
    }
}

/// "0.52 s" or "87 ms".
func formatSeconds(_ seconds: Double) -> String {
    seconds >= 1 ? "\(Double(Int(seconds * 100)) / 100) s" : "\(Int((seconds * 1000).rounded())) ms"
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension KDFOptions {
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

    /// What these options add to a verb's quick grammar.
    static let quickGrammar = Table.grammar

    /// These options read from a plain command line, as ArgumentParser reads them; declines when
    /// a value does not read or `validate()` fails.
    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        try arguments.read(Table.self, into: &options)
        try QuickArguments.validate(options)
        return options
    }
}
