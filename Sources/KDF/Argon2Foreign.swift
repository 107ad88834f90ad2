import CArgon2
import SecureMemory

// MARK: - Argon2 of another tool's file (KeePass's KDBX 4)

/// Which Argon2 a KDBX 4 database names in its KDF parameters.
public enum Argon2Variant: Sendable {
    /// Argon2d (KeePass's UUID ef636ddf-…): data-dependent addressing.
    case argon2d
    /// Argon2id (KeePass's UUID 9e298b19-…), what vaultfile itself uses.
    case argon2id
}

extension Argon2id {
    /// Derives `outputLength` bytes with Argon2d or Argon2id of Argon2 `version` (0x10 or 0x13),
    /// always through libargon2, for a KeePass database's key.
    ///
    /// The caller has checked `parameters` against the caps (`KDFParameters.check(against:)`)
    /// before calling: the memory is allocated here. Unlike a vault's own settings, which vaultfile
    /// chooses (`Argon2idParameters.validate`: t ≤ 4,096, p ≤ 64), another tool's file may ask for
    /// more passes or lanes: accepted as long as the caps allow the memory and work, as for a
    /// vault (`foreignIterationsRange`, `foreignParallelismRange`: Argon2's own bounds), computed
    /// by at most `foreignMaxThreads` threads (libargon2 runs more lanes than threads).
    public static func deriveForeign(password: UnsafeRawBufferPointer, salt: [UInt8], parameters: Argon2idParameters,
                                     variant: Argon2Variant, version: UInt32, secret: [UInt8] = [], associatedData: [UInt8] = [],
                                     outputLength: Int = 32) throws(KDFError) -> SecureBytes {
        guard foreignIterationsRange.contains(parameters.iterations), foreignParallelismRange.contains(parameters.parallelism),
              Argon2idParameters.memoryKiBRange.contains(parameters.memoryKiB), UInt64(parameters.memoryKiB) >= 8 * UInt64(parameters.parallelism) else {
            throw .invalidParameters("Argon2 memory \(parameters.memoryKiB) KiB, iterations \(parameters.iterations), parallelism "
                                     + "\(parameters.parallelism) are outside Argon2's bounds (t ≥ 1; 1 ≤ p ≤ 16,777,215; at least 8 KiB per lane)")
        }
        guard salt.count >= 8 else { throw .invalidSaltLength(salt.count) }
        guard version == UInt32(ARGON2_VERSION_10.rawValue) || version == UInt32(ARGON2_VERSION_13.rawValue) else {
            throw .invalidParameters("Argon2 version \(version) is neither 0x10 nor 0x13")
        }
        return try viaLibargon2(password: password, salt: salt, parameters: parameters, secret: secret, associatedData: associatedData,
                                outputLength: outputLength, type: variant == .argon2d ? Argon2_d : Argon2_id, version: version,
                                threads: min(parameters.parallelism, foreignMaxThreads))
    }

    /// The passes another tool's file may ask for: Argon2's own bound (the work cap bounds the time).
    public static let foreignIterationsRange: ClosedRange<UInt32> = 1...UInt32.max
    /// The lanes another tool's file may ask for: Argon2's own bound, ARGON2_MAX_LANES (the memory
    /// cap bounds them too: each lane holds at least 8 KiB).
    public static let foreignParallelismRange: ClosedRange<UInt32> = 1...0xFF_FFFF
    /// The most threads computing a foreign file's lanes (as many as vaultfile's own settings allow).
    public static let foreignMaxThreads = Argon2idParameters.parallelismRange.upperBound
}
