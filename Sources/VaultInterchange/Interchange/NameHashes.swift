import VaultModel

// MARK: - Whether a name may have been given

/// The hashes of the names given in one import, to tell that none repeats without keeping the
/// names: `insert` says false when the name's hash came before, which it always does for a
/// repeated name and, for two names of one hash, rarely does for distinct ones. A caller takes
/// false to mean "maybe repeated" and then looks the names up exactly (`ForeignNaming.names`), so a
/// collision costs time, never a wrong name. The names are in NFC, so one name is one byte string.
///
/// Each name is hashed once by its UTF-8 bytes, eight at a time (`hash`: a multiply-and-fold
/// mix, seeded per table from the process's random `Hasher` seed) instead of `Hasher`'s SipHash
/// (`insert` fell from 4.6 % to 2.5 % of a 1pux import's samples with the increasing run below).
/// While the names come in increasing byte order (an export sorted by title), each is new for
/// certain: its hash is only appended to a list, and only the last name's bytes are kept to
/// compare the next with. The first name that does not follow the last puts every hash so far
/// into the table, which then decides.
struct NameHashes {
    /// Open addressing, linear probing, at most half full; 0 is an empty slot (a hash of 0 is kept
    /// as 1). Empty while the names increase.
    private var slots: [UInt64] = []
    private var count = 0
    /// While the names increase: every hash so far, in order.
    private var increasing: [UInt64]? = []
    /// The last name's bytes, while the names increase.
    private var last: [UInt8] = []
    /// Room for the names expected before the table or list grows.
    private let expected: Int
    private let seed: UInt64

    /// A table with room for `expected` names before it grows.
    init(expected: Int) {
        self.expected = expected
        increasing?.reserveCapacity(min(expected, 1 << 20))
        var hasher = Hasher()
        hasher.combine(0x6e61_6d65 as UInt64)  // any constant: the seed is the process's
        seed = UInt64(UInt(bitPattern: hasher.finalize())) | 1
    }

    /// Keeps the hash of `name`; false when it was there already (the name may have been given).
    mutating func insert(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { insert(UnsafeRawBufferPointer($0)) }
    }

    /// `insert(_:)` of a name's UTF-8 bytes.
    mutating func insert(_ name: UnsafeRawBufferPointer) -> Bool {
        let hash = max(Self.hash(name, seed: seed), 1)
        if increasing != nil {
            if last.isEmpty && increasing!.isEmpty || last.withUnsafeBytes({ compareBytes($0, name) < 0 }) {
                increasing!.append(hash)
                last.removeAll(keepingCapacity: true)
                last.append(contentsOf: name)
                return true
            }
            makeTable()
        }
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            if slots[slot] == hash { return false }
            slot = (slot + 1) & mask
        }
        slots[slot] = hash
        count += 1
        if count * 2 > slots.count { grow() }
        return true
    }

    /// Ends the increasing run: every hash so far into the table.
    private mutating func makeTable() {
        let hashes = increasing ?? []
        increasing = nil
        last = []
        var size = 64
        while size < max(expected, hashes.count) * 2 + 2 { size *= 2 }
        slots = [UInt64](repeating: 0, count: size)
        let mask = size - 1
        for hash in hashes {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 && slots[slot] != hash { slot = (slot + 1) & mask }
            if slots[slot] == 0 {
                slots[slot] = hash
                count += 1
            }
        }
    }

    /// Twice the slots, every hash placed again.
    private mutating func grow() {
        var larger = [UInt64](repeating: 0, count: slots.count * 2)
        let mask = larger.count - 1
        for hash in slots where hash != 0 {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while larger[slot] != 0 { slot = (slot + 1) & mask }
            larger[slot] = hash
        }
        slots = larger
    }

    /// A 64-bit hash of `bytes`: each eight bytes (the last ones padded with zeros) folded in by a
    /// 128-bit multiply whose halves are added, the length mixed in first and a last fold at the
    /// end, so that every input bit reaches the low bits that pick a slot.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        @inline(__always) func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let product = a.multipliedFullWidth(by: b)
            return product.high ^ product.low
        }
        let count = bytes.count
        var state = fold(seed ^ UInt64(count), 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while count - offset >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            state = fold(state ^ word, 0xA076_1D64_78BD_642F)
            offset += 8
        }
        if offset < count {
            var word: UInt64 = 0
            for index in 0..<(count - offset) { word |= UInt64(bytes[offset + index]) << (8 * index) }
            state = fold(state ^ word, 0xE703_7ED1_A0B4_28DB)
        }
        return fold(state ^ 0x8EBC_6AF0_9C88_C6E3, 0x5899_65CC_7537_4CC3)
    }
}
