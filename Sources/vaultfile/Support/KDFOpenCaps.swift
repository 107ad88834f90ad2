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
            let most = limits.maxArgon2WorkKiB / UInt64(max(p.memoryKiB, 1))
            guard UInt64(p.iterations) > most, most >= 1 else { return (self, nil) }
            let asked = p.iterations
            p.iterations = UInt32(most)
            result.parameters = .argon2id(p)
            result.measuredSeconds = measuredSeconds * Double(most) / Double(asked)
            let cap = ByteSize.format(ByteSize.bytes(kibibytes: limits.maxArgon2WorkKiB))
            return (result, "iterations capped at \(most) instead of \(asked) (about \(formatSeconds(result.measuredSeconds))): more is over "
                    + "the \(cap) of Argon2id work (memory × iterations) that opening a vault allows (the default, or VAULTFILE_KDF_MAX_WORK), and every open "
                    + "would then need --kdf-max-work")
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
