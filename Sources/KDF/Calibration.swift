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

    /// How far from the target a calibration may land: 20 % either way.
    public static let tolerance = 0.2

    /// Whether `seconds` lies within `tolerance` of `target`.
    public static func isWithinTolerance(_ seconds: Double, of target: Double) -> Bool {
        abs(seconds - target) <= tolerance * target
    }

    /// Chooses Argon2id settings for `memoryKiB` and `parallelism` so that one unlock takes
    /// `targetSeconds`, within `tolerance`.
    ///
    /// Iterations first: one pass measured, scaled linearly, measured again and corrected (a
    /// few times at most, as the measures move). When whole iterations cannot land within the
    /// tolerance (one pass already too slow, or the target between two counts: passes of 0.6 s
    /// for a 1 s target give 0.6 or 1.2 s), the memory is scaled instead, the iterations kept,
    /// and the settings say so (`Result.parameters` holds another memory than asked).
    public static func argon2id(memoryKiB: UInt32, parallelism: UInt32, targetSeconds: Double) throws(KDFError) -> Result {
        try argon2id(memoryKiB: memoryKiB, parallelism: parallelism, targetSeconds: targetSeconds, measure: measure)
    }

    /// `argon2id(memoryKiB:parallelism:targetSeconds:)` timing each setting with `measure` (a
    /// model of the machine in the tests).
    static func argon2id(memoryKiB: UInt32, parallelism: UInt32, targetSeconds: Double,
                         measure: (KDFParameters) throws(KDFError) -> Double) throws(KDFError) -> Result {
        let make = { (memory: UInt32, t: UInt64) in
            KDFParameters.argon2id(Argon2idParameters(memoryKiB: memory, iterations: UInt32(clamping: t), parallelism: parallelism))
        }
        var result = try search(targetSeconds: targetSeconds, start: 1,
                                range: UInt64(Argon2idParameters.iterationsRange.lowerBound)...UInt64(Argon2idParameters.iterationsRange.upperBound),
                                make: { make(memoryKiB, $0) }, measure: measure)
        guard !isWithinTolerance(result.measuredSeconds, of: targetSeconds), case .argon2id(let found) = result.parameters else { return result }
        // The memory scaled (Argon2id's time is about in proportion to it), the iterations kept,
        // within the bounds of the format (at least 8 KiB per lane).
        let floor = UInt64(Swift.max(Argon2idParameters.memoryKiBRange.lowerBound, 8 * parallelism))
        let ceiling = UInt64(Argon2idParameters.memoryKiBRange.upperBound)
        var memory = UInt64(found.memoryKiB), time = result.measuredSeconds
        for _ in 0..<maxCorrections {
            let estimate = (Double(memory) * targetSeconds / Swift.max(time, 1e-6)).rounded()
            // Whole MiB from 16 MiB up (what people type; a step of at most 1/16 of the time).
            let rounded = estimate >= 16_384 ? (estimate / 1024).rounded() * 1024 : estimate
            let next = Swift.min(Swift.max(UInt64(Swift.max(Swift.min(rounded, Double(ceiling)), 0)), floor), ceiling)
            guard next != memory else { break }
            memory = next
            let parameters = make(UInt32(memory), UInt64(found.iterations))
            time = try measure(parameters)
            if abs(time - targetSeconds) < abs(result.measuredSeconds - targetSeconds) {
                result = Result(parameters: parameters, measuredSeconds: time, targetSeconds: targetSeconds)
            }
            if isWithinTolerance(time, of: targetSeconds) { break }
        }
        return result
    }

    /// Chooses PBKDF2-HMAC-SHA256 iterations so that one unlock takes `targetSeconds`, within `tolerance`.
    public static func pbkdf2(targetSeconds: Double) throws(KDFError) -> Result {
        try search(targetSeconds: targetSeconds, start: 100_000,
                   range: UInt64(PBKDF2Parameters.iterationsRange.lowerBound)...UInt64(PBKDF2Parameters.iterationsRange.upperBound),
                   make: { .pbkdf2SHA256(PBKDF2Parameters(iterations: UInt32(clamping: $0))) }, measure: measure)
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

    /// The corrections after the first estimate, at most (each one measure of about the target).
    private static let maxCorrections = 4

    /// The count in `range` whose measure is closest to the target: one measure of `start`,
    /// scaled linearly, then corrected while the measure lies outside `tolerance` and the count
    /// still moves (the first pass includes warm-up costs such as page faults; a busy machine
    /// moves the measures).
    private static func search(
        targetSeconds: Double, start: UInt64, range: ClosedRange<UInt64>, make: (UInt64) -> KDFParameters,
        measure: (KDFParameters) throws(KDFError) -> Double
    ) throws(KDFError) -> Result {
        guard targetSeconds.isFinite, targetSeconds > 0, targetSeconds <= 600 else {
            throw .invalidParameters("the target time must be between 0 and 600 seconds")
        }
        try make(start).validate()
        let firstTime = try measure(make(start))
        var count = scaled(start, from: firstTime, to: targetSeconds, in: range)
        var time = try measure(make(count))
        var best = (count: count, time: time)
        for _ in 0..<maxCorrections where !isWithinTolerance(time, of: targetSeconds) {
            let corrected = scaled(count, from: time, to: targetSeconds, in: range)
            guard corrected != count else { break }
            count = corrected
            time = try measure(make(count))
            if abs(time - targetSeconds) < abs(best.time - targetSeconds) { best = (count, time) }
        }
        return Result(parameters: make(best.count), measuredSeconds: best.time, targetSeconds: targetSeconds)
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
