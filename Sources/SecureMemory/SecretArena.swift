import CSodium

// MARK: - Small secrets on shared guarded pages

/// Guarded memory shared by small secrets: one `sodium_malloc` region of `slotCount` slots of
/// `slotLength` bytes, handed out as runs of whole slots.
///
/// Every `sodium_malloc` maps its own pages and makes five system calls (mmap, two mprotects,
/// mlock, madvise), and `sodium_free` as many again; each splits the process's memory map. An
/// agent `get` made eight of them for 32- to 256-byte secrets: about 0.2 ms of a 3 ms run on the
/// test machine (docs/PERFORMANCE.md, "The agent's get (session 7)"). The region keeps what those secrets
/// need: it is locked into RAM where RLIMIT_MEMLOCK allows, left out of core dumps, fenced by
/// guard pages at both ends, and each run of slots is zeroed when it is released. What it gives
/// up is the guard page between two secrets of the same process: a bug that writes past one
/// secret lands in another secret, not in a fault (docs/SECURITY.md, "Values in ordinary memory").
///
/// Larger secrets, and any secret once the region is full, still get a `sodium_malloc` of their own.
final class SecretArena: Sendable {
    /// The region every `SecureBytes` of up to `largestAllocation` bytes shares.
    static let shared = SecretArena(slotCount: 256)

    /// The bytes of one slot: every run starts on a 64-byte boundary.
    static let slotLength = 64
    /// The largest secret the region takes; larger ones get their own `sodium_malloc`.
    static let largestAllocation = 1_024

    /// The slots of the region. The shared one has 256 (16 KiB; 20 KiB locked with the page of
    /// libsodium's canary): far above what one command holds at once (an agent `get` holds at most
    /// 6 slots), and small enough to lock under the oldest default RLIMIT_MEMLOCK (64 KiB). An agent
    /// holds one slot per key: from about 250 keys on, later keys and then its frames get a
    /// `sodium_malloc` of their own (measured: 256 vaults unlocked, 2 keys outside the region).
    let slotCount: Int
    /// Under a pthread mutex, not Synchronization's `Mutex`, which ThreadSanitizer cannot see (`LockedValue`).
    private let slots: LockedValue<SlotMap>

    /// A region of `slotCount` slots (a multiple of 64), mapped at its first allocation.
    init(slotCount: Int) {
        precondition(slotCount > 0 && slotCount % 64 == 0, "whole words of slots")
        self.slotCount = slotCount
        slots = LockedValue(SlotMap(slotCount: slotCount))
    }

    /// Which slots are taken, and where the region is.
    private struct SlotMap {
        /// The region's address (0 before the first allocation); never freed.
        var base: UInt = 0
        /// Set when `sodium_malloc` refused the region: everything then takes the other path.
        var unavailable = false
        /// Bit `i % 64` of word `i / 64` is set while slot `i` is taken.
        var taken: [UInt64]

        init(slotCount: Int) { taken = [UInt64](repeating: 0, count: slotCount / 64) }

        /// The first run of `length` free slots, or nil.
        func firstFreeRun(of length: Int) -> Int? {
            let slotCount = taken.count * 64
            var start = 0
            while start + length <= slotCount {
                // Skips a whole word when it is full.
                if start % 64 == 0 && taken[start / 64] == .max { start += 64; continue }
                var end = start
                while end < start + length && !isTaken(end) { end += 1 }
                if end == start + length { return start }
                start = end + 1
            }
            return nil
        }

        func isTaken(_ slot: Int) -> Bool { taken[slot / 64] & (1 << UInt64(slot % 64)) != 0 }

        mutating func mark(_ run: Range<Int>, taken value: Bool) {
            for slot in run {
                let bit: UInt64 = 1 << UInt64(slot % 64)
                if value { taken[slot / 64] |= bit } else { taken[slot / 64] &= ~bit }
            }
        }
    }

    /// The number of slots a secret of `count` bytes takes.
    static func slotsNeeded(for count: Int) -> Int { Swift.max(1, (count + slotLength - 1) / slotLength) }

    /// Room for `count` bytes in the region (its contents zero), or nil when `count` is larger than
    /// `largestAllocation`, no run of slots is free, or the region could not be had.
    func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        guard count <= Self.largestAllocation else { return nil }
        let length = Self.slotsNeeded(for: count)
        let byteCount = slotCount * Self.slotLength
        let address: UInt? = slots.withLock { map in
            if map.base == 0 {
                guard !map.unavailable else { return nil }
                ensureSodiumInitialised()
                guard let region = sodium_malloc(byteCount) else {
                    map.unavailable = true
                    return nil
                }
                // sodium_malloc fills a new region with a garbage byte; released runs are zeroed,
                // so every free slot of the region holds zeros.
                sodium_memzero(region, byteCount)
                map.base = UInt(bitPattern: region)
            }
            guard let start = map.firstFreeRun(of: length) else { return nil }
            map.mark(start..<start + length, taken: true)
            return map.base + UInt(start * Self.slotLength)
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Zeroes the run `allocate(count)` returned at `pointer`, then frees its slots.
    func release(_ pointer: UnsafeMutableRawPointer, count: Int) {
        // The base never changes once set, so it is read once.
        let base = slots.withLock { $0.base }
        let address = UInt(bitPattern: pointer)
        let length = Self.slotsNeeded(for: count)
        precondition(base != 0 && address >= base && (address - base) % UInt(Self.slotLength) == 0
                     && Int(address - base) / Self.slotLength + length <= slotCount, "not a run of this secret arena")
        let offset = Int(address - base)
        // Zeroed while its slots are still taken: no other thread can be handed them yet.
        sodium_memzero(pointer, length * Self.slotLength)
        let start = offset / Self.slotLength
        slots.withLock { $0.mark(start..<start + length, taken: false) }
    }

    /// Whether `pointer` lies in the region.
    func contains(_ pointer: UnsafeRawPointer) -> Bool {
        let address = UInt(bitPattern: pointer)
        let base = slots.withLock { $0.base }
        return base != 0 && address >= base && address < base + UInt(slotCount * Self.slotLength)
    }
}
