import SecureMemory
import VaultModel

// MARK: - The order of items that tie on name, username and URL

extension ForeignNaming {
    /// The numbers of the items of one repeated name, `items` in item order, `exact[i]` which
    /// parts of item i's name are exactly what the source held (`Base.exact`): 0 for the first in
    /// `SortKey`'s order (exact title first, then exact folders, then username, first URL, value's
    /// hash, item order), then
    /// 2, 3… — what `names(of:prefix:)` gives them when no item's name is one of those numbered
    /// names (`TITLE (n)`), which `ForeignBuilder.build(streamingGroups:)` makes sure of.
    /// `SortKey`'s order, the texts compared where they lie (not two arrays made for each item).
    static func numbersWithinGroup(_ items: UnsafeBufferPointer<ForeignItem>, exact: [Exactness]) -> [UInt32] {
        let count = items.count
        precondition(exact.count == count, "one exactness per item")
        let ties = TieHashes(capacity: count)
        defer { ties.wipe() }
        for index in 0..<count { _ = ties.append(hashOf: items[index].value) }  // item i's at i
        func order(_ a: String, _ b: String) -> Int {
            var a = a, b = b
            return a.withUTF8 { a in b.withUTF8 { b in compareBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
        }
        let ordered = (0..<count).sorted { a, b in
            if exact[a] != exact[b] { return exact[a].ranksBefore(exact[b]) }
            var found = order(items[a].username ?? "", items[b].username ?? "")
            if found != 0 { return found < 0 }
            found = order(items[a].urls.first ?? "", items[b].urls.first ?? "")
            if found != 0 { return found < 0 }
            found = ties.compare(a, b)
            return found != 0 ? found < 0 : a < b
        }
        var numbers = [UInt32](repeating: 0, count: count)
        for (position, index) in ordered.enumerated() where position > 0 { numbers[index] = UInt32(position + 1) }
        return numbers
    }

    /// The hashes of the values that order the items of one name whose username and first URL are
    /// equal too (`SortKey`, `Plan`): a 64-bit FNV-1a of each value, held in a `WipedBuffer` (zeroed
    /// when it grows, when `wipe()` is called and when the store goes), never in an array freed as
    /// it is, nor copied into a sort's scratch buffer: the keys and rows sorted hold only a position here.
    ///
    /// Why an unkeyed hash, and not one keyed per import: the order must be the same in every run.
    /// Issue 44 numbers a repeated title by username, then URL, never by the file, so that
    /// importing the same data again in another order, on another day, never swaps which account
    /// a name holds; and an export decides in its own process which numbered titles a later import
    /// would number as they are (`unstableTitles`). A per-process key would order such ties
    /// otherwise at each run (breaking both), and a fixed key is no secret, so it would hide
    /// nothing that FNV-1a does not. Ordering ties by the values' bytes themselves would need no
    /// hash, but it would give some existing ties other numbers than they had (a re-import after
    /// an upgrade would swap them) and the streamed plan would have to keep the passwords between
    /// its reads. So the hash stays what it was, computed for the items of a repeated name only,
    /// and lives no longer than the sort that needs it: what a hash of a weak password tells an
    /// attacker who reads this process's memory is then there only while the values themselves are.
    final class TieHashes {
        private let bytes: WipedBuffer
        /// The number of hashes held.
        private(set) var count = 0

        /// An empty store with room for `capacity` hashes before it first grows.
        init(capacity: Int = 16) {
            bytes = WipedBuffer(capacity: max(capacity, 4) * 8)
        }

        /// Keeps the hash of `value`; returns where it lies (for `compare`).
        func append(hashOf value: [UInt8]) -> Int {
            var hash = ForeignNaming.fnv1a(value).littleEndian
            withUnsafeBytes(of: &hash) { bytes.append(contentsOf: $0.bindMemory(to: UInt8.self)) }
            hash = 0
            count += 1
            return count - 1
        }

        /// Whether the value at `a` comes before (negative), with (0) or after (positive) the one at `b`.
        func compare(_ a: Int, _ b: Int) -> Int {
            precondition(a < count && b < count, "a hash this store holds")
            return bytes.withBytes { held in
                let raw = UnsafeRawBufferPointer(held)
                let (x, y) = (raw.loadUnaligned(fromByteOffset: a * 8, as: UInt64.self), raw.loadUnaligned(fromByteOffset: b * 8, as: UInt64.self))
                return x == y ? 0 : UInt64(littleEndian: x) < UInt64(littleEndian: y) ? -1 : 1
            }
        }

        /// Zeroes every hash held (and the room past them) and forgets them.
        func wipe() {
            bytes.wipe()
            count = 0
        }
    }
}
