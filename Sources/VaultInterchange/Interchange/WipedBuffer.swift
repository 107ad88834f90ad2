import SecureMemory

// MARK: - A growing buffer that leaves nothing behind

/// Bytes appended one run after another, for a reader's working copy of secrets (the CSV scan's
/// row): every byte it ever held is zeroed before its memory goes back to the allocator, when it
/// grows (the old block) and when it is released (its whole capacity, not just what it holds now:
/// a longer row read earlier lies past a shorter one's end).
///
/// An `Array` does neither: `append` moves the bytes to a larger block and frees the old one as
/// it is, and `removeAll(keepingCapacity:)` leaves the bytes where they were.
final class WipedBuffer {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The number of bytes held.
    private(set) var count = 0

    /// An empty buffer with room for `capacity` bytes before it first grows.
    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        SecureMemory.wipe(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        base.deallocate()
    }

    /// Appends one byte.
    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { grow(toFit: count + 1) }
        base[count] = byte
        count += 1
    }

    /// Appends a run of bytes.
    @inline(__always)
    func append(contentsOf run: UnsafeBufferPointer<UInt8>) {
        guard let start = run.baseAddress, !run.isEmpty else { return }
        if count + run.count > capacity { grow(toFit: count + run.count) }
        (base + count).update(from: start, count: run.count)
        count += run.count
    }

    /// Forgets the bytes held, keeping the memory (wiped when the buffer grows or is released).
    func removeAll() { count = 0 }

    /// Zeroes the whole buffer now (its capacity, not just the bytes held) and forgets the bytes.
    func wipe() {
        SecureMemory.wipe(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        count = 0
    }

    /// The bytes held, valid during `body`.
    func withBytes<R, E: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R) throws(E) -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Moves the bytes to a block of at least `needed` bytes, wiping and freeing the old one.
    private func grow(toFit needed: Int) {
        var larger = capacity
        while larger < needed { larger = larger > Int.max / 2 ? needed : larger * 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: base, count: count)
        SecureMemory.wipe(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        base.deallocate()
        base = moved
        capacity = larger
    }
}
