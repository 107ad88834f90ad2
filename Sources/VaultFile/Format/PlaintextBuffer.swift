#if canImport(Glibc)
import Glibc
#endif
import CSodium

// MARK: - The decrypted payload, in one buffer

/// A fixed-size buffer for a decrypted payload, zeroed and unmapped when the last reference goes.
///
/// Its own anonymous mapping, left out of core dumps (`MADV_DONTDUMP`) and
/// backed by transparent huge pages where the system allows (a 100 MiB
/// payload then costs ~50 page faults instead of ~25,000). Not
/// `sodium_malloc`ed: a payload can be hundreds of MiB, far above what
/// RLIMIT_MEMLOCK lets a user lock. Unlike an array it never moves, is never
/// copied on write, and is always wiped, so the vault's plaintext exists once.
final class PlaintextBuffer: @unchecked Sendable {
    // @unchecked: written only while decrypting, before the buffer is shared; read-only after.

    /// The bytes; valid as long as this object lives.
    let bytes: UnsafeMutableRawBufferPointer
    private let mapping: UnsafeMutableRawPointer
    private let mappingLength: Int

    /// Maps `count` bytes. The mapping arrives zero-filled from the kernel; callers write every byte anyway.
    init(uninitializedCount count: Int) {
        precondition(count >= 0, "negative size")
        let length = max(count, 1)
        guard let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              pointer != MAP_FAILED else {
            fatalError("out of memory: mapping \(count) bytes for the decrypted vault failed")
        }
        _ = madvise(pointer, length, MADV_DONTDUMP)
        if length >= 2 << 20 { _ = madvise(pointer, length, MADV_HUGEPAGE) }  // advice only: ignored where THP is off
        mapping = pointer
        mappingLength = length
        pointer.bindMemory(to: UInt8.self, capacity: length)
        bytes = UnsafeMutableRawBufferPointer(start: pointer, count: count)
    }

    /// Copies `source` into a new buffer.
    convenience init(copying source: some Collection<UInt8>) {
        self.init(uninitializedCount: source.count)
        bytes.copyBytes(from: source)
    }

    /// The number of bytes.
    var count: Int { bytes.count }

    deinit {
        sodium_memzero(mapping, mappingLength)
        munmap(mapping, mappingLength)
    }
}
