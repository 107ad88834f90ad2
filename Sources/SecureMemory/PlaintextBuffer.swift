import CSodium

// MARK: - A decrypted payload, in one buffer

/// A fixed-size buffer for a decrypted payload, zeroed and unmapped when the last reference goes.
///
/// Its own mapping (`SecretMapping`): left out of core dumps, backed by huge pages when large,
/// not `sodium_malloc`ed because a payload can be far larger than what a user may lock. Unlike
/// an array it never moves, is never copied on write, and is always wiped, so the vault's
/// plaintext exists once.
public final class PlaintextBuffer: @unchecked Sendable {
    // @unchecked: written (and `written` set) only while decrypting, before the buffer is shared; read-only after,
    // but for `release`, which only an owner that reads the released part no more calls (a sorted copy made).

    /// The bytes; valid as long as this object lives.
    public let bytes: UnsafeMutableRawBufferPointer
    /// The mapping: at least one byte, even for an empty buffer.
    private let mapping: UnsafeMutableRawPointer
    /// How many bytes from the start were ever written, and so are wiped at the end: all of them
    /// unless the writer says less. A reader that fills only a prefix (`get` of a vault with
    /// history decrypts the history chunks elsewhere) lowers it before sharing the buffer, so that
    /// the wipe does not fault in, and zero, pages that were never touched.
    public var written: Int {
        get { writtenCount }
        set { precondition((0...bytes.count).contains(newValue), "written lies within the buffer"); writtenCount = newValue }
    }
    private var writtenCount: Int

    /// Maps `count` bytes, or throws the size and errno when the system refuses them.
    ///
    /// The mapping arrives zero-filled from the kernel; callers write every byte anyway.
    public init(uninitializedCount count: Int) throws(SecureMemoryError) {
        mapping = try SecretMapping.map(byteCount: count)
        mapping.bindMemory(to: UInt8.self, capacity: Swift.max(count, 1))
        bytes = UnsafeMutableRawBufferPointer(start: mapping, count: count)
        writtenCount = count
    }

    /// Copies `source` into a new buffer.
    public convenience init(copying source: some Collection<UInt8>) throws(SecureMemoryError) {
        try self.init(uninitializedCount: source.count)
        bytes.copyBytes(from: source)
    }

    /// The number of bytes.
    @inlinable public var count: Int { bytes.count }

    /// Wipes the bytes `range` and gives the whole pages inside it back to the system, for an
    /// owner done with that part of the buffer for good (a copy made in another order, the part
    /// copied so far): those pages read as zeros afterwards. The wipe at the end still covers
    /// `written`; an owner that released all of it lowers `written` first, so that the wipe does
    /// not fault the released pages in again.
    public func release(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "a range inside the buffer")
        guard !range.isEmpty else { return }
        sodium_memzero(mapping + range.lowerBound, range.count)
        SecretMapping.release(mapping, range)
    }

    deinit {
        sodium_memzero(mapping, Swift.max(writtenCount, 1))
        SecretMapping.unmap(mapping, byteCount: bytes.count)
    }
}
