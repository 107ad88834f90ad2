// MARK: - Parameters of the two KDFs

/// Argon2id settings: memory in KiB, passes over that memory, and lanes (threads).
public struct Argon2idParameters: Hashable, Sendable {
    /// Memory in KiB. Range: 8 × parallelism … 67,108,864 (64 GiB).
    public var memoryKiB: UInt32
    /// Passes over the memory (t). Range: 1 … 4,096.
    public var iterations: UInt32
    /// Lanes, computed by as many threads (p). Range: 1 … 64.
    public var parallelism: UInt32

    /// The documented bounds of each field, enforced on decode and on creation.
    public static let memoryKiBRange: ClosedRange<UInt32> = 8...67_108_864
    /// See `iterations`.
    public static let iterationsRange: ClosedRange<UInt32> = 1...4_096
    /// See `parallelism`.
    public static let parallelismRange: ClosedRange<UInt32> = 1...64

    /// The defaults for new vaults: 64 MiB, t = 3, p = 4 (RFC 9106's second recommended option).
    public static let defaults = Argon2idParameters(memoryKiB: 65_536, iterations: 3, parallelism: 4)

    /// Creates parameters; call `validate()` before use.
    public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
    }

    /// Throws when a field is outside its documented range.
    public func validate() throws(KDFError) {
        guard Self.parallelismRange.contains(parallelism) else {
            throw .invalidParameters("Argon2id parallelism \(parallelism) is outside \(Self.parallelismRange)")
        }
        guard Self.iterationsRange.contains(iterations) else {
            throw .invalidParameters("Argon2id iterations \(iterations) is outside \(Self.iterationsRange)")
        }
        guard Self.memoryKiBRange.contains(memoryKiB) else {
            throw .invalidParameters("Argon2id memory \(memoryKiB) KiB is outside \(Self.memoryKiBRange) KiB")
        }
        // Argon2 needs at least 8 KiB per lane (two blocks per sync point and lane).
        guard UInt64(memoryKiB) >= 8 * UInt64(parallelism) else {
            throw .invalidParameters("Argon2id memory \(memoryKiB) KiB is below 8 KiB per lane (p = \(parallelism))")
        }
    }
}

/// PBKDF2-HMAC-SHA256 settings.
public struct PBKDF2Parameters: Hashable, Sendable {
    /// HMAC iterations. Range: 1 … 1,000,000,000.
    public var iterations: UInt32

    /// The documented bounds of `iterations`.
    public static let iterationsRange: ClosedRange<UInt32> = 1...1_000_000_000

    /// The default for new vaults: 600,000 iterations (OWASP, Bitwarden).
    public static let defaults = PBKDF2Parameters(iterations: 600_000)

    /// Creates parameters; call `validate()` before use.
    public init(iterations: UInt32) { self.iterations = iterations }

    /// Throws when `iterations` is outside its documented range.
    public func validate() throws(KDFError) {
        guard Self.iterationsRange.contains(iterations) else {
            throw .invalidParameters("PBKDF2 iterations \(iterations) is outside \(Self.iterationsRange)")
        }
    }
}

/// The key derivation function of a keyslot and its settings.
///
/// Encoded canonically (see docs/FORMAT.md): one id byte, then the fields of
/// that KDF as little-endian `UInt32`s in a fixed order. One set of
/// parameters has exactly one encoding.
public enum KDFParameters: Hashable, Sendable, CustomStringConvertible {
    /// Argon2id version 1.3 (RFC 9106). Encoding id 1.
    case argon2id(Argon2idParameters)
    /// PBKDF2 with HMAC-SHA256 (RFC 8018). Encoding id 2.
    case pbkdf2SHA256(PBKDF2Parameters)

    /// The encoding id of Argon2id.
    public static let argon2idID: UInt8 = 1
    /// The encoding id of PBKDF2-HMAC-SHA256.
    public static let pbkdf2SHA256ID: UInt8 = 2

    /// The parameters every new vault gets unless the user chooses otherwise.
    public static let defaults = KDFParameters.argon2id(.defaults)

    /// The length of the salt every keyslot uses (libsodium's Argon2 salt size).
    public static let saltLength = 16

    // MARK: Validation

    /// Throws when any field is outside its documented range.
    public func validate() throws(KDFError) {
        switch self {
        case .argon2id(let p): try p.validate()
        case .pbkdf2SHA256(let p): try p.validate()
        }
    }

    /// Whether these settings meet OWASP's minimum for password storage.
    ///
    /// Argon2id: any of 46 MiB/t=1, 19 MiB/t=2, 12 MiB/t=3, 9 MiB/t=4, 7 MiB/t=5
    /// (more memory or more passes also qualify). PBKDF2-HMAC-SHA256: 600,000 iterations.
    public var meetsRecommendedMinimum: Bool {
        switch self {
        case .argon2id(let p):
            let equivalents: [(mebibytes: UInt32, passes: UInt32)] = [(46, 1), (19, 2), (12, 3), (9, 4), (7, 5)]
            return equivalents.contains { p.memoryKiB >= $0.mebibytes * 1024 && p.iterations >= $0.passes }
        case .pbkdf2SHA256(let p):
            return p.iterations >= PBKDF2Parameters.defaults.iterations
        }
    }

    /// Throws `belowMinimum` unless the settings meet OWASP's minimum or `allowWeak` is set.
    public func checkCreationFloor(allowWeak: Bool) throws(KDFError) {
        try validate()
        if !allowWeak && !meetsRecommendedMinimum { throw .belowMinimum("(\(self))") }
    }

    // MARK: Caps on open

    /// Throws when these settings ask for more memory or work than `limits` allow.
    ///
    /// Cheap and allocation-free: call it before deriving anything from an untrusted header.
    public func check(against limits: KDFLimits) throws(KDFError) {
        switch self {
        case .argon2id(let p):
            let memoryBytes = UInt64(p.memoryKiB) * 1024
            if memoryBytes > limits.maxMemoryBytes {
                throw .memoryOverCap(asked: memoryBytes, cap: limits.maxMemoryBytes)
            }
            let work = UInt64(p.memoryKiB) * UInt64(p.iterations)
            if work > limits.maxArgon2WorkKiB {
                throw .workOverCap(asked: work, cap: limits.maxArgon2WorkKiB)
            }
        case .pbkdf2SHA256(let p):
            if UInt64(p.iterations) > limits.maxPBKDF2Iterations {
                throw .iterationsOverCap(asked: UInt64(p.iterations), cap: limits.maxPBKDF2Iterations)
            }
        }
    }

    // MARK: Encoding

    /// The canonical encoding: id byte, then fixed-width little-endian fields.
    public var encoded: [UInt8] {
        switch self {
        case .argon2id(let p):
            return [Self.argon2idID] + p.memoryKiB.littleEndianBytes + p.iterations.littleEndianBytes
                + p.parallelism.littleEndianBytes
        case .pbkdf2SHA256(let p):
            return [Self.pbkdf2SHA256ID] + p.iterations.littleEndianBytes
        }
    }

    /// Decodes exactly `bytes` (no more, no less) and validates every field.
    ///
    /// Inlined into the caller, so that copying a header's slice is specialized there: unspecialized
    /// across the module boundary, `Array(bytes)` looked up the collection's associated types at run
    /// time by scanning the conformance records (0.2 M instructions, 6 % of a `get` through the agent).
    @inlinable
    public static func decode(_ bytes: some Collection<UInt8>) throws(KDFError) -> KDFParameters {
        try decode(Array(bytes))
    }

    /// `decode(_:)` of an array.
    public static func decode(_ bytes: [UInt8]) throws(KDFError) -> KDFParameters {
        guard let id = bytes.first else { throw .invalidParameters("empty encoding") }
        let parameters: KDFParameters
        switch id {
        case argon2idID:
            guard bytes.count == 13 else {
                throw .invalidParameters("Argon2id parameters are 13 bytes, found \(bytes.count)")
            }
            parameters = .argon2id(Argon2idParameters(
                memoryKiB: UInt32(littleEndianBytes: bytes[1..<5]),
                iterations: UInt32(littleEndianBytes: bytes[5..<9]),
                parallelism: UInt32(littleEndianBytes: bytes[9..<13])))
        case pbkdf2SHA256ID:
            guard bytes.count == 5 else {
                throw .invalidParameters("PBKDF2 parameters are 5 bytes, found \(bytes.count)")
            }
            parameters = .pbkdf2SHA256(PBKDF2Parameters(iterations: UInt32(littleEndianBytes: bytes[1..<5])))
        case 0:
            throw .invalidParameters("KDF id 0 is invalid")
        default:
            throw .unknownAlgorithm(id)
        }
        try parameters.validate()
        return parameters
    }

    // MARK: Description

    /// A short human form, e.g. `Argon2id 64 MiB, t=3, p=4` or `PBKDF2-SHA256 600000 iterations`.
    public var description: String {
        switch self {
        case .argon2id(let p):
            return "Argon2id \(ByteSize.format(kibibytes: UInt64(p.memoryKiB))), t=\(p.iterations), p=\(p.parallelism)"
        case .pbkdf2SHA256(let p):
            return "PBKDF2-SHA256 \(p.iterations) iterations"
        }
    }
}

// MARK: - Little-endian helpers

extension UInt32 {
    /// The four bytes of this value, least significant first.
    public var littleEndianBytes: [UInt8] {
        [UInt8(truncatingIfNeeded: self), UInt8(truncatingIfNeeded: self >> 8),
         UInt8(truncatingIfNeeded: self >> 16), UInt8(truncatingIfNeeded: self >> 24)]
    }

    /// Reads four bytes, least significant first.
    public init(littleEndianBytes bytes: some Collection<UInt8>) {
        precondition(bytes.count == 4)
        var value: UInt32 = 0
        for (shift, byte) in zip(stride(from: 0, to: 32, by: 8), bytes) { value |= UInt32(byte) << UInt32(shift) }
        self = value
    }
}
