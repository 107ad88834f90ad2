// MARK: - KDF errors

/// Everything that can go wrong when validating parameters or deriving a key.
public enum KDFError: CategorizedError, Equatable {
    /// The encoded parameters name a KDF this version does not know.
    case unknownAlgorithm(UInt8)
    /// The encoded parameters are malformed or a field is out of its documented range.
    case invalidParameters(String)
    /// The salt has a length the KDF does not accept.
    case invalidSaltLength(Int)
    /// The vault asks for more memory than the cap allows (both in bytes).
    case memoryOverCap(asked: UInt64, cap: UInt64)
    /// Argon2id work (memory × iterations, in KiB) over the cap.
    case workOverCap(asked: UInt64, cap: UInt64)
    /// PBKDF2 iterations over the cap.
    case iterationsOverCap(asked: UInt64, cap: UInt64)
    /// Creation with parameters below OWASP's minimum, without an explicit override.
    case belowMinimum(String)
    /// The underlying library reported a failure (for example, out of memory).
    case derivationFailed(String)

    public var description: String {
        switch self {
        case .unknownAlgorithm(let id):
            return "unknown key derivation function (id \(id)); this vault needs a newer vaultfile"
        case .invalidParameters(let why):
            return "invalid key derivation parameters: \(why)"
        case .invalidSaltLength(let length):
            return "invalid salt length \(length); the KDF needs a 16-byte salt"
        case .memoryOverCap(let asked, let cap):
            let (askedText, capText) = ByteSize.formatDistinct(asked, cap)
            return "the vault asks for \(askedText) of memory to unlock; the limit is \(capText)"
        case .workOverCap(let asked, let cap):
            let (askedText, capText) = ByteSize.formatDistinct(ByteSize.bytes(kibibytes: asked), ByteSize.bytes(kibibytes: cap))
            return "the vault asks for \(askedText) of Argon2id work (memory × iterations) to unlock; the limit is \(capText)"
        case .iterationsOverCap(let asked, let cap):
            return "the vault asks for \(asked) PBKDF2 iterations to unlock; the limit is \(cap)"
        case .belowMinimum(let what):
            return "the key derivation settings \(what) are below OWASP's minimum"
        case .derivationFailed(let why):
            return "key derivation failed: \(why)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .memoryOverCap, .workOverCap, .iterationsOverCap: return .overLimit
        case .unknownAlgorithm: return .unsupported
        case .invalidParameters, .invalidSaltLength: return .damaged
        case .belowMinimum: return .invalidArgument
        case .derivationFailed: return .internalFailure
        }
    }
}
