import KDF
import VaultModel

// MARK: - The KDF settings of a new keyslot (init, passwd, slot add, calibrate)

extension KDFOptions {
    /// Whether any KDF option was given (passwd keeps the current settings otherwise).
    var isSpecified: Bool { kdf != nil || memory != nil || iterations != nil || parallelism != nil || time != nil }

    /// The settings asked for, calibrated if `--kdf-time` was given (its iterations kept within
    /// `limits`), checked against the creation floor and against `limits`, the caps an open with the
    /// same options and environment applies: a vault no later open admits is never sealed.
    func parameters(within limits: KDFLimits) throws -> KDFParameters {
        let parameters = try unchecked(limits)
        try parameters.checkCreationFloor(allowWeak: allowWeak)
        try parameters.checkOpenCaps(limits)
        return parameters
    }

    private func unchecked(_ limits: KDFLimits) throws -> KDFParameters {
        let target = time.flatMap(TimeSpan.parseSeconds)
        switch kdf ?? .argon2id {
        case .pbkdf2:
            if let target {
                let (result, note) = try Calibration.pbkdf2(targetSeconds: target).capped(to: limits)
                if let note { Messages.note(note) }
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
                let (result, note) = try Calibration.argon2id(memoryKiB: memoryKiB, parallelism: lanes, targetSeconds: target).capped(to: limits)
                if let note { Messages.note(note) }
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

// MARK: - The history policy of a vault (init, history)

extension HistoryOptions {
    /// Whether either option was given.
    var isGiven: Bool { keepHistory != nil || historyBytes != nil }

    /// Whether the options turn history off (either is 0).
    var turnsOff: Bool { keepHistory == 0 || historyBytes.flatMap(ByteSize.parse) == 0 }

    /// The policy these options make from `current` (or the standard one); nil when they turn history off.
    func policy(from current: HistoryPolicy?) -> HistoryPolicy? {
        guard !turnsOff else { return nil }
        var policy = current ?? .standard
        if let keepHistory { policy.versions = keepHistory }
        if let bytes = historyBytes.flatMap(ByteSize.parse) { policy.byteBudget = Int(bytes) }
        return policy
    }
}
