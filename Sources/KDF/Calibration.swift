import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Calibration to a target unlock time

/// Finds KDF settings that take a chosen time to unlock on this machine.
public enum Calibration {
    /// What a calibration measured and chose.
    public struct Result: Sendable, Equatable {
        /// The chosen settings.
        public var parameters: KDFParameters
        /// The unlock time measured with the chosen settings, in seconds.
        public var measuredSeconds: Double
        /// The time asked for, in seconds.
        public var targetSeconds: Double
    }

    /// Chooses Argon2id iterations for `memoryKiB` and `parallelism` so that one unlock takes about `targetSeconds`.
    ///
    /// Measures one pass, scales linearly, then measures the estimate and
    /// corrects once. Never returns fewer than one iteration.
    public static func argon2id(memoryKiB: UInt32, parallelism: UInt32, targetSeconds: Double) throws(KDFError) -> Result {
        let make = { (t: UInt64) in
            KDFParameters.argon2id(Argon2idParameters(
                memoryKiB: memoryKiB, iterations: UInt32(clamping: t), parallelism: parallelism))
        }
        return try search(targetSeconds: targetSeconds, start: 1,
                          range: UInt64(Argon2idParameters.iterationsRange.lowerBound)...UInt64(Argon2idParameters.iterationsRange.upperBound),
                          make: make)
    }

    /// Chooses PBKDF2-HMAC-SHA256 iterations so that one unlock takes about `targetSeconds`.
    public static func pbkdf2(targetSeconds: Double) throws(KDFError) -> Result {
        try search(targetSeconds: targetSeconds, start: 100_000,
                   range: UInt64(PBKDF2Parameters.iterationsRange.lowerBound)...UInt64(PBKDF2Parameters.iterationsRange.upperBound),
                   make: { .pbkdf2SHA256(PBKDF2Parameters(iterations: UInt32(clamping: $0))) })
    }

    /// Measures how long one key derivation with `parameters` takes, in seconds.
    public static func measure(_ parameters: KDFParameters) throws(KDFError) -> Double {
        let password = SecureBytes(copying: Array("calibration".utf8))
        let salt = [UInt8](repeating: 0x5A, count: KDFParameters.saltLength)
        let unlimited = KDFLimits(maxMemoryBytes: .max, maxArgon2WorkKiB: .max, maxPBKDF2Iterations: .max)
        let start = monotonicSeconds()
        _ = try parameters.deriveKey(password: password, salt: salt, limits: unlimited)
        return monotonicSeconds() - start
    }

    // MARK: Private

    private static func search(
        targetSeconds: Double, start: UInt64, range: ClosedRange<UInt64>, make: (UInt64) -> KDFParameters
    ) throws(KDFError) -> Result {
        guard targetSeconds.isFinite, targetSeconds > 0, targetSeconds <= 600 else {
            throw .invalidParameters("the target time must be between 0 and 600 seconds")
        }
        try make(start).validate()
        let firstTime = try measure(make(start))
        var count = scaled(start, from: firstTime, to: targetSeconds, in: range)
        var time = try measure(make(count))
        // One correction: the first pass includes warm-up costs such as page faults.
        let corrected = scaled(count, from: time, to: targetSeconds, in: range)
        if corrected != count {
            count = corrected
            time = try measure(make(count))
        }
        return Result(parameters: make(count), measuredSeconds: time, targetSeconds: targetSeconds)
    }

    private static func scaled(_ count: UInt64, from seconds: Double, to target: Double, in range: ClosedRange<UInt64>) -> UInt64 {
        let estimate = (Double(count) * target / Swift.max(seconds, 1e-6)).rounded()
        let clamped = Swift.min(Swift.max(estimate, Double(range.lowerBound)), Double(range.upperBound))
        return UInt64(clamped)
    }
}

/// Seconds on the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`).
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
