import CSodium

// MARK: - Guarded memory for keys and passwords

/// A fixed-size buffer of secret bytes in libsodium-guarded memory.
///
/// The bytes live in a `sodium_malloc` allocation: locked into RAM where the
/// system allows it (never swapped), fenced by guard pages, and zeroed when the
/// last reference goes away. Secrets of up to 1 KiB share one such allocation
/// (`SecretArena`); larger ones get their own. Keep such buffers small (keys,
/// passwords, single values): large locked allocations may exceed RLIMIT_MEMLOCK.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the pointer is owned exclusively by this object; callers
    // mutate it only while filling a fresh buffer, before sharing it.

    /// The number of secret bytes.
    public let count: Int
    private let base: UnsafeMutableRawPointer
    /// The region whose run of slots holds the bytes, or nil when they are a `sodium_malloc` of their own.
    private let arena: SecretArena?

    /// Allocates `count` zeroed bytes of guarded memory.
    public convenience init(count: Int) {
        self.init(count: count, arena: .shared)
    }

    /// Allocates `count` zeroed bytes in `arena` when it takes them, else in a `sodium_malloc` of
    /// their own. Every buffer uses `SecretArena.shared`; tests pass a region of their own, which
    /// other tests running at the same time cannot fill.
    init(count: Int, arena: SecretArena) {
        precondition(count >= 0, "negative size")
        self.count = count
        if let pointer = arena.allocate(count) {
            base = pointer
            self.arena = arena
        } else {
            ensureSodiumInitialised()
            // sodium_malloc(0) is allowed but gives no usable pointer on every
            // version; one byte keeps the pointer valid.
            guard let pointer = sodium_malloc(Swift.max(count, 1)) else {
                fatalError("out of memory: guarded allocation of \(count) bytes failed")
            }
            base = pointer
            self.arena = nil
        }
        sodium_memzero(base, Swift.max(count, 1))
    }

    /// Copies `bytes` into a new guarded buffer.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count)
        var index = 0
        for byte in bytes {
            base.storeBytes(of: byte, toByteOffset: index, as: UInt8.self)
            index += 1
        }
    }

    /// Copies a raw buffer into a new guarded buffer.
    public convenience init(copying buffer: UnsafeRawBufferPointer) {
        self.init(count: buffer.count)
        if let source = buffer.baseAddress, buffer.count > 0 {
            base.copyMemory(from: source, byteCount: buffer.count)
        }
    }

    deinit {
        if let arena {
            arena.release(base, count: count)  // zeroes the run
        } else {
            sodium_free(base)  // zeroes before unmapping
        }
    }

    /// Whether the bytes are a run of `arena`'s region (for tests).
    func isInRegion(of arena: SecretArena) -> Bool { self.arena === arena && arena.contains(base) }

    /// Calls `body` with read access to the secret bytes; do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Calls `body` with write access to the secret bytes; do not let the pointer escape.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Compares two buffers in constant time for equal lengths (`sodium_memcmp`).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    /// A new guarded buffer holding bytes `range` of this one.
    public func slice(_ range: Range<Int>) -> SecureBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "slice out of bounds")
        return withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}
