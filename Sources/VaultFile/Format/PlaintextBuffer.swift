import CSodium

// MARK: - The decrypted payload, in one buffer

/// A fixed-size heap buffer for a decrypted payload, zeroed when the last reference goes.
///
/// Not `sodium_malloc`ed: a payload can be hundreds of MiB, far above what
/// RLIMIT_MEMLOCK lets a user lock. Unlike an array it never moves, is never
/// copied on write, and is always wiped, so the vault's plaintext exists once.
final class PlaintextBuffer: @unchecked Sendable {
    // @unchecked: written only while decrypting, before the buffer is shared; read-only after.

    /// The bytes; valid as long as this object lives.
    let bytes: UnsafeMutableRawBufferPointer
    private let allocation: UnsafeMutableRawPointer

    /// Allocates `count` bytes, not zero-filled: the caller writes every byte before reading any.
    init(uninitializedCount count: Int) {
        precondition(count >= 0, "negative size")
        allocation = .allocate(byteCount: max(count, 1), alignment: 16)
        allocation.bindMemory(to: UInt8.self, capacity: max(count, 1))
        bytes = UnsafeMutableRawBufferPointer(start: allocation, count: count)
    }

    /// Copies `source` into a new buffer.
    convenience init(copying source: some Collection<UInt8>) {
        self.init(uninitializedCount: source.count)
        bytes.copyBytes(from: source)
    }

    /// The number of bytes.
    var count: Int { bytes.count }

    deinit {
        sodium_memzero(allocation, max(bytes.count, 1))
        allocation.deallocate()
    }
}
