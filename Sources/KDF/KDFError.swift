import SecureMemory

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
    /// The next keyslot's Argon2id work (`asked`) on top of what the slots tried before it
    /// took (`spent`) would pass the cap on the total (all in KiB × iterations).
    case workTotalOverCap(spent: UInt64, asked: UInt64, cap: UInt64)
    /// The next keyslot's PBKDF2 iterations (`asked`) on top of those of the slots tried before
    /// it (`spent`) would pass the cap on the total.
    case iterationsTotalOverCap(spent: UInt64, asked: UInt64, cap: UInt64)
    /// Another tool's file (`source`, a KDBX database) asks AES-KDF for `rounds` rounds, over
    /// `cap` (four times the PBKDF2 iterations cap: a round costs far less than an iteration).
    case aesKDFRoundsOverCap(source: String, rounds: UInt64, cap: UInt64)
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
        case .workTotalOverCap(let spent, let asked, let cap):
            let total = Self.total(spent, asked)
            let (totalText, capText) = ByteSize.formatDistinct(ByteSize.bytes(kibibytes: total), ByteSize.bytes(kibibytes: cap))
            return "the vault's keyslots ask for \(totalText) of Argon2id work (memory × iterations) to unlock, "
                + "in total over the slots tried (\(ByteSize.format(kibibytes: spent)) before the next slot, "
                + "\(ByteSize.format(kibibytes: asked)) for it); the limit on the total is \(capText)"
        case .iterationsTotalOverCap(let spent, let asked, let cap):
            return "the vault's keyslots ask for \(Self.total(spent, asked)) PBKDF2 iterations to unlock, in total over the "
                + "slots tried (\(spent) before the next slot, \(asked) for it); the limit on the total is \(cap)"
        case .aesKDFRoundsOverCap(let source, let rounds, let cap):
            return "\(source) asks AES-KDF for \(rounds) rounds to open; the limit is \(cap) rounds (four times --kdf-max-iterations)"
        case .belowMinimum(let what):
            return "the key derivation settings \(what) are below OWASP's minimum"
        case .derivationFailed(let why):
            return "key derivation failed: \(why)"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .memoryOverCap, .workOverCap, .iterationsOverCap, .workTotalOverCap, .iterationsTotalOverCap, .aesKDFRoundsOverCap: return .overLimit
        case .unknownAlgorithm: return .unsupported
        case .invalidParameters, .invalidSaltLength: return .damaged
        case .belowMinimum: return .invalidArgument
        case .derivationFailed: return .internalFailure
        }
    }

    /// `spent + asked`, saturating: the sum a total-over-cap error reports.
    public static func total(_ spent: UInt64, _ asked: UInt64) -> UInt64 {
        let (sum, overflow) = spent.addingReportingOverflow(asked)
        return overflow ? .max : sum
    }
}
