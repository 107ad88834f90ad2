import SecureMemory
import VaultModel

// MARK: - Numbering planned before a streamed build

extension ForeignNaming {
    /// The numbers of an import's repeated names, decided from one read of its items before a
    /// streamed build names each item as it comes (`ForeignBuilder.build(streaming:)`), so that an
    /// export whose titles repeat (a browser's: several accounts per site) is built as read too.
    ///
    /// The read (`note`) keeps a hash of each item's name, and its name, which parts of it are exact
    /// (`Base.exact`), its username, first URL and a hash of its value — `SortKey`'s order, never a
    /// password — and every name ending in `)` (a
    /// numbered name skips those given as they are); `decide` keeps the items whose name hash came
    /// twice, numbers them as `names(of:prefix:)` does, and wipes the rest. What the build then
    /// reads is each item's number, and whether an exact title pushed it aside (`number(of:at:base:exact:)`).
    /// Each read must hand the same items: an item whose name, exactness, username or first URL hashes
    /// otherwise than at the plan's read says it did not (the file changed), and the build declines
    /// (the caller builds from every item).
    /// `ForeignStreamTests` ties this to `names(of:prefix:)`.
    struct Plan {
        /// One item: its index and its keys' bytes in `arena` (name, then username, then URL,
        /// from `start`), the hash of its name, where the hash of its value lies in `ties`, and
        /// which parts of its name are exact (one byte, in the row's padding: no byte more).
        private struct Row {
            var index: UInt32
            var start: UInt32
            var nameCount: UInt32
            var userCount: UInt32
            var urlCount: UInt32
            var name: UInt64
            var tie: UInt32
            var exact: Exactness
        }

        /// Each item's name, username and first URL hashed, in item order: what tells that a later
        /// read hands the same items.
        private var hashes: [UInt64] = []
        private var arena: [UInt8] = []
        private var rows: [Row] = []
        /// The values' hashes of the rows, wiped by `decide` (`TieHashes`).
        private let ties = TieHashes()
        /// Every name ending in `)`: those a numbered name (`T (n)`) may meet.
        private var given: Set<String> = []
        /// Each item's number (0: its name as it is); empty when no name is numbered.
        private var numbers: [UInt32] = []
        /// The numbered items that an exact title or exact folders pushed aside, and why
        /// (`numberingReason(first:_:)`), by index.
        private var yielded: [UInt32: ImportRenaming.Reason] = [:]
        /// Whether a row could not be kept (an arena past 32-bit offsets): `decide` then refuses.
        private var overflowed = false

        /// The bytes the `--prefix` takes in a name (`prefixBytes(_:)`): a numbered name cut to fit
        /// the limit never cuts it (`numberedFitting`).
        var prefixBytes = 0

        /// The number of items the read handed over.
        var count: Int { hashes.count }
        /// How many values' hashes the plan holds (none once `decide` ran).
        var tieHashesHeld: Int { ties.count }

        /// The seed of the plan's own hashes (names, and what a later read must find again), the
        /// process's as a dictionary's is: they order nothing (the values' hashes, which order ties,
        /// are FNV-1a, `TieHashes`), so a file's names cannot be made to collide on purpose.
        private let seed: UInt64 = {
            var hasher = Hasher()
            hasher.combine(0x706c_616e as UInt64)  // any constant: the seed is the process's
            return UInt64(UInt(bitPattern: hasher.finalize()))
        }()

        /// The hash of `text`'s bytes from `seed`, eight at a time (`NameHashes.hash`).
        private static func hash(_ text: String, seed: UInt64) -> UInt64 {
            var text = text
            return text.withUTF8 { NameHashes.hash(UnsafeRawBufferPointer($0), seed: seed) }
        }

        /// The hash of an item named `base` (whose hash is `name`) that a later read must find
        /// again: its name, username and first URL, each hashed from the one before (each hash
        /// takes the length of its text: no two splits of the same bytes meet), and which parts of
        /// the name are exact (each of the four ranks its own odd multiplier).
        private func check(_ item: ForeignItem, name: UInt64, exact: Exactness) -> UInt64 {
            let user = Self.hash(item.username ?? "", seed: name ^ seed)
            return Self.hash(item.urls.first ?? "", seed: user &+ 0x9E37_79B9_7F4A_7C15 &* UInt64(2 &* exact.rank &+ 1))
        }

        /// The read: `item`, named `base` (before numbering), `exact` the parts of that name that
        /// are exactly what the source held (`Base.exact`); false when the item cannot be kept.
        mutating func note(_ item: ForeignItem, base: String, exact: Exactness) -> Bool {
            guard hashes.count < UInt32.max else { return false }
            let name = Self.hash(base, seed: seed)
            hashes.append(check(item, name: name, exact: exact))
            if base.utf8.last == UInt8(ascii: ")") { given.insert(base) }
            let user = item.username ?? "", url = item.urls.first ?? ""
            let start = arena.count
            func keep(_ text: String) {
                var text = text
                text.withUTF8 { arena.append(contentsOf: $0) }
            }
            keep(base)
            keep(user)
            keep(url)
            // Offsets of 32 bits: an arena beyond them is refused by `decide` (the plain build then).
            guard arena.count <= UInt32.max else {
                overflowed = true
                return false
            }
            rows.append(Row(index: UInt32(hashes.count - 1), start: UInt32(start), nameCount: UInt32(base.utf8.count), userCount: UInt32(user.utf8.count),
                            urlCount: UInt32(url.utf8.count), name: name, tie: UInt32(ties.append(hashOf: item.value)), exact: exact))
            return true
        }

        /// After the read: numbers each name several items share, as `number(_:items:)` does
        /// (groups in their names' byte order, each in `SortKey`'s order, exact title first, then exact folders; a numbered name skipping
        /// every name given); false when a row could not be kept. The arena is wiped.
        ///
        /// Numbered names of two groups never meet (`B (n)` and `C (m)` differ when B and C do:
        /// both in NFC, and what follows the last " (" is digits), and one group's numbers
        /// increase: only the names given as they are need looking up, and only when one ends in `)`.
        /// A name cut to fit its number (`numberedFitting`: a name near the limit) may meet
        /// another group's: when a group's name is that long (rare), every numbered name is kept
        /// and looked up too.
        mutating func decide() -> Bool {
            defer {
                SecureMemory.wipe(&arena)
                ties.wipe()
                arena = []
                rows = []
                given = []
            }
            guard !overflowed else { return false }
            // The items whose name hash came twice (a repeated name, or rarely two names of one hash).
            var names = rows.map(\.name)
            names.sort()
            var repeated: Set<UInt64> = []
            for index in names.indices.dropFirst() where names[index] == names[index - 1] { repeated.insert(names[index]) }
            names = []
            guard !repeated.isEmpty else { return true }
            var rows = self.rows, numbers: [UInt32] = [], yielded: [UInt32: ImportRenaming.Reason] = [:]
            let ties = self.ties, prefixBytes = self.prefixBytes
            // A name whose number may pass the name limit is cut to fit (`numberedFitting`), and a
            // cut one may meet another group's numbered name: then (rare) every numbered name is kept.
            let anyLong = rows.contains { Int($0.nameCount) + maxNumberBytes > VaultLimits.maxNameLength }
            var taken: Set<String> = []
            self.rows = []
            rows.removeAll { !repeated.contains($0.name) }  // in place: no second array of rows
            arena.withUnsafeBytes { arena in
                func bytes(_ start: UInt32, _ count: UInt32) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: arena[Int(start)..<Int(start) + Int(count)])
                }
                func name(_ row: Row) -> UnsafeRawBufferPointer { bytes(row.start, row.nameCount) }
                rows.sort { a, b in
                    var order = compareBytes(name(a), name(b))
                    if order != 0 { return order < 0 }
                    if a.exact != b.exact { return a.exact.ranksBefore(b.exact) }
                    order = compareBytes(bytes(a.start + a.nameCount, a.userCount), bytes(b.start + b.nameCount, b.userCount))
                    if order != 0 { return order < 0 }
                    order = compareBytes(bytes(a.start + a.nameCount + a.userCount, a.urlCount), bytes(b.start + b.nameCount + b.userCount, b.urlCount))
                    if order != 0 { return order < 0 }
                    order = ties.compare(Int(a.tie), Int(b.tie))
                    if order != 0 { return order < 0 }
                    return a.index < b.index
                }
                var first = 0
                while first < rows.count {
                    var end = first + 1
                    while end < rows.count, compareBytes(name(rows[end]), name(rows[first])) == 0 { end += 1 }
                    if end - first > 1 {
                        if numbers.isEmpty { numbers = [UInt32](repeating: 0, count: hashes.count) }
                        let base = given.isEmpty && !anyLong ? nil : String(decoding: name(rows[first]), as: UTF8.self)
                        var number = 2
                        let exactFirst = rows[first].exact
                        for row in rows[(first + 1)..<end] {
                            while let base {
                                let candidate = numberedFitting(base, UInt32(number), prefixBytes: prefixBytes).name
                                guard given.contains(candidate) || taken.contains(candidate) else {
                                    if anyLong { taken.insert(candidate) }
                                    break
                                }
                                number += 1
                            }
                            numbers[Int(row.index)] = UInt32(number)
                            let reason = numberingReason(first: exactFirst, row.exact)
                            if reason != .numberedByAccount { yielded[row.index] = reason }
                            number += 1
                        }
                    }
                    first = end
                }
            }
            self.numbers = numbers
            self.yielded = yielded
            return true
        }

        /// The build's read: the number of `item`, at `index`, named `base`, `exact` its exact
        /// parts (0: not numbered), and why it is numbered (`numberingReason(first:_:)`); nil when
        /// it is not the item the plan's read had there.
        func number(of item: ForeignItem, at index: Int, base: String, exact: Exactness) -> (number: UInt32, reason: ImportRenaming.Reason)? {
            guard index < hashes.count, hashes[index] == check(item, name: Self.hash(base, seed: seed), exact: exact) else { return nil }
            return numbers.isEmpty ? (0, .numberedByAccount) : (numbers[index], yielded[UInt32(index)] ?? .numberedByAccount)
        }
    }
}
