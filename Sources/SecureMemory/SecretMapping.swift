#if canImport(Glibc)
import Glibc
#endif

// MARK: - Errors

/// Why memory for secrets could not be had.
public enum SecureMemoryError: Error, Equatable, CustomStringConvertible {
    /// `mmap(2)` refused to map `byteCount` bytes; `errno` says why (usually ENOMEM).
    case mappingFailed(byteCount: Int, errno: Int32)

    /// What failed, with the size and the system's reason.
    public var description: String {
        switch self {
        case .mappingFailed(let byteCount, let code):
            return "mapping \(byteCount) bytes of memory failed: \(String(cString: strerror(code)))"
        }
    }
}

// MARK: - Large secrets in their own mapping

/// Memory for secrets too large for `sodium_malloc`: a decrypted vault, Argon2's work area.
///
/// Each allocation is its own anonymous private mapping: it never moves, arrives zero-filled
/// from the kernel, is left out of core dumps (`MADV_DONTDUMP`), and is backed by transparent
/// huge pages where the system allows (a 100 MiB get: 52,820 → 656 page faults; Argon2id at
/// 64 MiB: 16,594 → 633; docs/PERFORMANCE.md, "What changed"). It is not locked: a payload can
/// be hundreds of MiB, far above what RLIMIT_MEMLOCK lets a user lock (docs/SECURITY.md).
public enum SecretMapping {
    /// A transparent huge page (x86-64 and arm64 with 4 KiB pages). A smaller mapping cannot
    /// hold an aligned huge page, so it is not advised to use them.
    private static let hugePageLength = 2 << 20

    /// Maps `byteCount` zero-filled bytes (one byte when asked for none), or throws the size and errno.
    ///
    /// Release the memory with `unmap(_:byteCount:)`, passing the same `byteCount`.
    public static func map(byteCount: Int) throws(SecureMemoryError) -> UnsafeMutableRawPointer {
        precondition(byteCount >= 0, "negative size")
        let length = Swift.max(byteCount, 1)
        guard let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              pointer != MAP_FAILED else {
            throw .mappingFailed(byteCount: byteCount, errno: errno)
        }
        _ = madvise(pointer, length, MADV_DONTDUMP)
        if length >= hugePageLength { _ = madvise(pointer, length, MADV_HUGEPAGE) }  // advice only: ignored where THP is off
        return pointer
    }

    /// Advises huge pages for the 2 MiB-aligned pages inside `buffer`, memory not yet touched
    /// that another allocator handed out (a large array's storage, which glibc maps on its own):
    /// a 100 MiB plaintext then costs about 50 page faults instead of 25,600. Advice only; the
    /// memory stays the allocator's, and buffers under 4 MiB are left alone.
    public static func adviseHugePages(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count >= 2 * hugePageLength else { return }
        let start = (Int(bitPattern: base) + hugePageLength - 1) & ~(hugePageLength - 1)
        let end = (Int(bitPattern: base) + buffer.count) & ~(hugePageLength - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
    }

    /// Gives the whole pages inside `range` of a mapping from `map(byteCount:)` back to the system
    /// (`MADV_DONTNEED`): they read as zeros afterwards and cost no memory until written again.
    /// Does not wipe: the owner zeroes secrets first.
    public static func release(_ pointer: UnsafeMutableRawPointer, _ range: Range<Int>) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        let start = (range.lowerBound + page - 1) / page * page, end = range.upperBound / page * page
        guard end > start else { return }
        _ = madvise(pointer + start, end - start, MADV_DONTNEED)
    }

    /// Unmaps what `map(byteCount:)` returned. Does not wipe: the owner zeroes secrets first.
    public static func unmap(_ pointer: UnsafeMutableRawPointer, byteCount: Int) {
        munmap(pointer, Swift.max(byteCount, 1))
    }
}
