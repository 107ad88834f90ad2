import KDF

// MARK: - Settings that the caps on open admit (calibrate, init/passwd/slot add --kdf-time)

extension Calibration.Result {
    /// This result with its iterations lowered to what `limits` admit on open, and a note
    /// naming the option that raises the cap; itself and nil when it is within them.
    ///
    /// A vault sealed over the caps would be refused by every later open (exit 6) until
    /// `--kdf-max-work` or `--kdf-max-iterations` is given, so calibrate never suggests it.
    func capped(to limits: KDFLimits) -> (result: Self, note: String?) {
        var result = self
        switch parameters {
        case .argon2id(var p):
            // Calibration may have raised the memory (whole passes too coarse): memory first, then passes.
            let asked = p
            var options: [String] = []
            if UInt64(p.memoryKiB) * 1024 > limits.maxMemoryBytes {
                p.memoryKiB = UInt32(limits.maxMemoryBytes / 1024)
                options.append("--kdf-max-memory")
            }
            let most = limits.maxArgon2WorkKiB / UInt64(max(p.memoryKiB, 1))
            if UInt64(p.iterations) > most, most >= 1 {
                p.iterations = UInt32(most)
                options.append("--kdf-max-work")
            }
            guard p != asked else { return (self, nil) }
            result.parameters = .argon2id(p)
            let ratio = Double(UInt64(p.memoryKiB) * UInt64(p.iterations)) / Double(UInt64(asked.memoryKiB) * UInt64(asked.iterations))
            result.measuredSeconds = measuredSeconds * ratio
            let memory = ByteSize.format(limits.maxMemoryBytes), work = ByteSize.format(ByteSize.bytes(kibibytes: limits.maxArgon2WorkKiB))
            return (result, "capped at \(ByteSize.format(UInt64(p.memoryKiB) * 1024)) and \(p.iterations) iterations instead of "
                    + "\(ByteSize.format(UInt64(asked.memoryKiB) * 1024)) and \(asked.iterations) (about \(formatSeconds(result.measuredSeconds))): "
                    + "more is over what opening a vault allows (\(memory) of memory, \(work) of Argon2id work, memory × iterations; "
                    + "the defaults or VAULTFILE_KDF_MAX_*), and every open would then need "
                    + options.joined(separator: " and "))
        case .pbkdf2SHA256(var p):
            guard UInt64(p.iterations) > limits.maxPBKDF2Iterations else { return (self, nil) }
            let asked = p.iterations
            p.iterations = UInt32(limits.maxPBKDF2Iterations)
            result.parameters = .pbkdf2SHA256(p)
            result.measuredSeconds = measuredSeconds * Double(p.iterations) / Double(asked)
            return (result, "iterations capped at \(p.iterations) instead of \(asked) (about \(formatSeconds(result.measuredSeconds))): more is "
                    + "over the PBKDF2 iterations that opening a vault allows (the default, or VAULTFILE_KDF_MAX_ITERATIONS), and every open would "
                    + "then need --kdf-max-iterations")
        }
    }
}

extension KDFParameters {
    /// Throws `CLIError.kdfOverOpenCaps` when a vault sealed with these settings would be refused
    /// by an open with `limits` (the caps of this command's options, environment, or the defaults).
    func checkOpenCaps(_ limits: KDFLimits) throws(CLIError) {
        do { try check(against: limits) } catch { throw .kdfOverOpenCaps(settings: "\(self)", cap: error) }
    }
}
