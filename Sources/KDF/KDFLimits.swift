#if canImport(Glibc)
import Glibc
#endif

// MARK: - Caps on what a vault may ask for

/// The most memory and work an untrusted vault header may make this process spend.
///
/// Checked before anything is allocated, so a crafted header can neither
/// exhaust memory nor make the tool hang. Memory is capped per keyslot; work and
/// iterations are capped over the sum of the keyslots one unlock tries (`KDFBudget`).
/// Raised by the user with `--kdf-max-memory`, `--kdf-max-work`, `--kdf-max-iterations`
/// or their environment variables.
public struct KDFLimits: Hashable, Sendable {
    /// The most memory Argon2id may use, in bytes.
    public var maxMemoryBytes: UInt64
    /// The most Argon2id work, memory in KiB × iterations, summed over the keyslots one unlock tries.
    public var maxArgon2WorkKiB: UInt64
    /// The most PBKDF2 iterations, summed over the keyslots one unlock tries.
    public var maxPBKDF2Iterations: UInt64

    /// Creates limits from explicit values.
    public init(maxMemoryBytes: UInt64, maxArgon2WorkKiB: UInt64, maxPBKDF2Iterations: UInt64) {
        self.maxMemoryBytes = maxMemoryBytes
        self.maxArgon2WorkKiB = maxArgon2WorkKiB
        self.maxPBKDF2Iterations = maxPBKDF2Iterations
    }

    /// The default limits: memory is the lower of 1 GiB and half the physical
    /// RAM; work is 32 GiB·passes (about 20 s here); PBKDF2 50,000,000 iterations (about 12 s).
    public static var defaults: KDFLimits {
        KDFLimits(
            maxMemoryBytes: Swift.min(1 << 30, physicalMemoryBytes() / 2),
            maxArgon2WorkKiB: 32 << 20,
            maxPBKDF2Iterations: 50_000_000)
    }

    /// The machine's physical memory (`sysconf(_SC_PHYS_PAGES)` × page size), or 2 GiB if unknown.
    public static func physicalMemoryBytes() -> UInt64 {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        guard pages > 0, pageSize > 0 else { return 2 << 30 }
        return UInt64(pages) * UInt64(pageSize)
    }
}

// MARK: - The total over the keyslots tried

/// What one unlock has spent, so that the work and iteration caps of `KDFLimits` bound the
/// **sum** over every keyslot tried: a header of sixteen slots, each just under the caps,
/// cannot make one unlock cost sixteen times the caps.
///
/// The memory cap stays per slot (one KDF runs at a time). A slot that would take a sum past
/// its cap is refused and nothing is counted for it, so a cheaper slot after it may still run.
public struct KDFBudget: Sendable {
    /// The caps: `maxArgon2WorkKiB` and `maxPBKDF2Iterations` bound the totals.
    public let limits: KDFLimits
    /// Argon2id work (memory in KiB × iterations) of the slots counted so far.
    public private(set) var argon2WorkKiB: UInt64 = 0
    /// PBKDF2 iterations of the slots counted so far.
    public private(set) var pbkdf2Iterations: UInt64 = 0

    /// A budget with nothing spent yet.
    public init(_ limits: KDFLimits) { self.limits = limits }

    /// Counts `parameters` as spent, or throws (counting nothing) when they ask for more memory
    /// than the per-slot cap, or would take a total past its cap.
    ///
    /// Cheap and allocation-free: call it before each keyslot's KDF runs.
    public mutating func spend(on parameters: KDFParameters) throws(KDFError) {
        // One slot alone over a cap keeps its own error: the total would be that slot's cost.
        try parameters.check(against: limits)
        switch parameters {
        case .argon2id(let p):
            let work = UInt64(p.memoryKiB) * UInt64(p.iterations)
            // `argon2WorkKiB` never exceeds the cap, so the subtraction cannot wrap.
            guard work <= limits.maxArgon2WorkKiB - argon2WorkKiB else {
                throw .workTotalOverCap(spent: argon2WorkKiB, asked: work, cap: limits.maxArgon2WorkKiB)
            }
            argon2WorkKiB += work
        case .pbkdf2SHA256(let p):
            let iterations = UInt64(p.iterations)
            guard iterations <= limits.maxPBKDF2Iterations - pbkdf2Iterations else {
                throw .iterationsTotalOverCap(spent: pbkdf2Iterations, asked: iterations, cap: limits.maxPBKDF2Iterations)
            }
            pbkdf2Iterations += iterations
        }
    }
}
