import ArgumentParser
import KDF
import VaultModel

extension VaultfileCommand {
    /// Measures the KDF on this machine and prints settings that reach a target unlock time.
    struct Calibrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "calibrate",
            abstract: "Find KDF settings that take a target time to unlock on this machine.",
            discussion: """
                Lands within 20 % of the target: by Argon2id iterations, else (whole passes too coarse, or one \
                pass already too slow) by the memory, which it then says. Prints the flags for a new vault \
                (init) and for an existing one (passwd). Never suggests settings over the caps that opening a vault \
                applies (the defaults, or VAULTFILE_KDF_MAX_MEMORY, _WORK, _ITERATIONS): a target past them is capped, \
                and it says so, naming --kdf-max-memory, --kdf-max-work or --kdf-max-iterations.
                """)

        @Option(name: .customLong("kdf"), help: "The key derivation function: argon2id or pbkdf2.") var kdf: KDFName = .argon2id
        @Option(name: .customLong("kdf-memory"), help: ArgumentHelp("Argon2id memory (K/M/G suffixes).", valueName: "size"))
        var memory: String = "64M"
        @Option(name: .customLong("kdf-parallelism"), help: ArgumentHelp("Argon2id lanes and threads.", valueName: "n"))
        var parallelism: UInt32 = 4
        @Option(name: .customLong("kdf-time"), help: ArgumentHelp("The target unlock time.", valueName: "duration"))
        var time: String = "1s"
        @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

        func run() throws {
            guard let target = TimeSpan.parseSeconds(time) else {
                throw ValidationError("--kdf-time takes a duration such as 500ms or 1.5s, not '\(time)'")
            }
            // The caps every open applies: VAULTFILE_KDF_MAX_* if set, else the defaults.
            let limits = try UnlockOptions.parse([]).limits()
            let measured: Calibration.Result
            switch kdf {
            case .argon2id:
                guard let bytes = ByteSize.parse(memory), bytes % 1024 == 0, bytes / 1024 <= UInt64(UInt32.max) else {
                    throw ValidationError("--kdf-memory takes a whole number of KiB such as 64M, not '\(memory)'")
                }
                var memoryKiB = UInt32(bytes / 1024)
                if bytes > limits.maxMemoryBytes {
                    memoryKiB = UInt32(limits.maxMemoryBytes / 1024)
                    Messages.note("memory capped at \(ByteSize.format(limits.maxMemoryBytes)) instead of \(memory): more is over what opening "
                                  + "a vault allows on this machine, and every open would then need --kdf-max-memory")
                }
                try Argon2idParameters(memoryKiB: memoryKiB, iterations: 1, parallelism: parallelism).validate()
                Messages.progress("measuring Argon2id with \(ByteSize.format(bytes)), p=\(parallelism)…")
                measured = try Calibration.argon2id(memoryKiB: memoryKiB, parallelism: parallelism, targetSeconds: target)
            case .pbkdf2:
                Messages.progress("measuring PBKDF2-SHA256…")
                measured = try Calibration.pbkdf2(targetSeconds: target)
            }
            // A target past the caps on open: as many iterations as they admit, and a note naming the option.
            let (result, capNote) = measured.capped(to: limits)
            let meets = result.parameters.meetsRecommendedMinimum
            let within = Calibration.isWithinTolerance(result.measuredSeconds, of: target)
            if case .argon2id(let p) = result.parameters, UInt64(p.memoryKiB) * 1024 != ByteSize.parse(memory),
               UInt64(p.memoryKiB) * 1024 != limits.maxMemoryBytes {
                Messages.note("memory \(ByteSize.format(UInt64(p.memoryKiB) * 1024)) instead of \(memory): whole iterations could not land "
                              + "within 20 % of the target")
            }
            if let capNote { Messages.note(capNote) }
            if !within && capNote == nil {
                Messages.warning("measured \(formatSeconds(result.measuredSeconds)), more than 20 % from the target \(formatSeconds(target)) "
                                 + "(a busy machine, or a setting at its bound); run calibrate again")
            }
            var flags: String
            switch result.parameters {
            case .argon2id(let p):
                flags = "--kdf argon2id --kdf-memory \(ByteSize.argument(UInt64(p.memoryKiB) * 1024)) --kdf-iterations \(p.iterations) --kdf-parallelism \(p.parallelism)"
            case .pbkdf2SHA256(let p):
                flags = "--kdf pbkdf2 --kdf-iterations \(p.iterations)"
            }
            // Settings below the minimum are refused without it: the commands printed run as printed.
            if !meets { flags += " --allow-weak-kdf" }
            if json {
                var pairs: [(String, JSON)] = []
                switch result.parameters {
                case .argon2id(let p):
                    pairs = [("kdf", .string("argon2id")), ("memory_kib", .int(Int64(p.memoryKiB))),
                             ("iterations", .int(Int64(p.iterations))), ("parallelism", .int(Int64(p.parallelism)))]
                case .pbkdf2SHA256(let p):
                    pairs = [("kdf", .string("pbkdf2-sha256")), ("iterations", .int(Int64(p.iterations)))]
                }
                pairs += [("target_seconds", .double(target)), ("measured_seconds", .double(result.measuredSeconds)),
                          ("within_tolerance", .bool(within)), ("meets_recommendation", .bool(meets)),
                          ("capped", .bool(capNote != nil)),
                          ("init", .string("vaultfile init \(flags)")), ("passwd", .string("vaultfile passwd \(flags)"))]
                try StandardOutput.line(JSON.object(pairs).text)
                return
            }
            let took = capNote == nil ? "measured" : "estimated from the measure, capped"
            var line = "\(result.parameters): \(formatSeconds(result.measuredSeconds)) \(took) (target \(formatSeconds(target)))"
            if !meets { line += "; below OWASP's minimum, raise the time or the memory" }
            try StandardOutput.line(line)
            try StandardOutput.line("use: vaultfile init \(flags)")
            // passwd asks the new password (it may be the same one) and seals the vault again.
            try StandardOutput.line("for an existing vault: vaultfile passwd \(flags)")
        }
    }
}
