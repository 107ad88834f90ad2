#if canImport(Glibc)
import Glibc
#endif

// MARK: - Caps on what a vault may ask for

/// The most memory and work an untrusted vault header may make this process spend.
///
/// Checked before anything is allocated, so a crafted header can neither
/// exhaust memory nor make the tool hang. Raised by the user with
/// `--kdf-max-memory`, `--kdf-max-work`, `--kdf-max-iterations` or their
/// environment variables.
public struct KDFLimits: Hashable, Sendable {
    /// The most memory Argon2id may use, in bytes.
    public var maxMemoryBytes: UInt64
    /// The most Argon2id work: memory in KiB × iterations.
    public var maxArgon2WorkKiB: UInt64
    /// The most PBKDF2 iterations.
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
