import SecureMemory
import VaultModel

// MARK: - Numbering planned before a streamed build

extension ForeignNaming {
    /// The numbers of an import's repeated names, decided from two reads of its items before a
    /// streamed build names each item as it comes (`ForeignBuilder.build(streaming:)`), so that an
    /// export whose titles repeat (a browser's: several accounts per site) is built as read too.
    ///
    /// The first read keeps a hash of each item's name (`count`); the second (`note`) keeps, for
    /// the items whose hash came twice only, their name, username, first URL and a hash of the
    /// value — `SortKey`'s order, never a password — and every name ending in `)` (a numbered
    /// name skips those given as they are); `decide` then numbers as `names(of:prefix:)` does,
    /// and the sort keys are wiped. What the build then reads is each item's number (`number(at:base:)`).
    /// Each read must hand the same items: an item whose name, username or first URL hashes
    /// otherwise than at the first read says it did not (the file changed), and the build declines
    /// (the caller builds from every item).
    /// `ForeignStreamTests` ties this to `names(of:prefix:)`.
    struct Plan {
        /// One item whose name came twice: its index and its keys' bytes in `arena` (name, then
        /// username, then URL, from `start`), and where the hash of its value lies in `ties`.
        private struct Row {
            var index: UInt32
            var start: UInt32
            var nameCount: UInt32
            var userCount: UInt32
            var urlCount: UInt32
            var tie: UInt32
        }

        /// Each item's name, username and first URL hashed, in item order: what tells that a later
        /// read hands the same items.
        private var hashes: [UInt64] = []
        /// Each item's name hashed, in item order, during the first read only.
        private var names: [UInt64] = []
        /// The hashes that came more than once.
        private var repeated: Set<UInt64> = []
        private var arena: [UInt8] = []
        private var rows: [Row] = []
        /// The values' hashes of the rows, wiped by `decide` (`TieHashes`).
        private let ties = TieHashes()
        /// Every name ending in `)`: those a numbered name (`T (n)`) may meet.
        private var given: Set<String> = []
        /// Each item's number (0: its name as it is); empty when no name is numbered.
        private var numbers: [UInt32] = []
        /// The items noted by the second read.
        private var noted = 0

        /// The number of items the first read handed over.
        var count: Int { hashes.count }
        /// How many values' hashes the plan holds (none once `decide` ran).
        var tieHashesHeld: Int { ties.count }

        private static func hash(_ name: String) -> UInt64 {
            var name = name
            return name.withUTF8 { ForeignNaming.fnv1a($0) }
        }

        /// The hash of an item named `base` that a later read must find again: its name, username
        /// and first URL (0xFF, never a byte of UTF-8, between them).
        private static func check(_ item: ForeignItem, base: String) -> UInt64 {
            var hash = ForeignNaming.fnv1a(base.utf8)
            hash = ForeignNaming.fnv1a(CollectionOfOne(0xFF), from: hash)
            hash = ForeignNaming.fnv1a((item.username ?? "").utf8, from: hash)
            hash = ForeignNaming.fnv1a(CollectionOfOne(0xFF), from: hash)
            return ForeignNaming.fnv1a((item.urls.first ?? "").utf8, from: hash)
        }

        /// First read: `item`, named `base` (before numbering).
        mutating func count(_ item: ForeignItem, base: String) {
            names.append(Self.hash(base))
            hashes.append(Self.check(item, base: base))
        }

        /// After the first read: whether some name may come twice (then the second read is needed).
        mutating func endCounting() -> Bool {
            var sorted = names
            names = []
            sorted.sort()
            for index in sorted.indices.dropFirst() where sorted[index] == sorted[index - 1] { repeated.insert(sorted[index]) }
            return !repeated.isEmpty
        }

        /// Second read: `item`, named `base`; false when it is not the item the first read had there.
        mutating func note(_ item: ForeignItem, base: String) -> Bool {
            guard noted < hashes.count, hashes[noted] == Self.check(item, base: base) else { return false }
            let hash = Self.hash(base)
            defer { noted += 1 }
            if base.utf8.last == UInt8(ascii: ")") { given.insert(base) }
            guard repeated.contains(hash) else { return true }
            let user = (item.username ?? "").utf8, url = (item.urls.first ?? "").utf8
            let start = arena.count
            arena.append(contentsOf: base.utf8)
            arena.append(contentsOf: user)
            arena.append(contentsOf: url)
            // Offsets of 32 bits: an arena beyond them is refused by `decide` (the plain build then).
            guard arena.count <= UInt32.max, noted <= UInt32.max else { return false }
            rows.append(Row(index: UInt32(noted), start: UInt32(start), nameCount: UInt32(base.utf8.count), userCount: UInt32(user.count),
                            urlCount: UInt32(url.count), tie: UInt32(ties.append(hashOf: item.value))))
            return true
        }

        /// After the second read: numbers each name several items share, as `number(_:items:)`
        /// does (groups in their names' byte order, each in `SortKey`'s order, a numbered name
        /// skipping every name taken or given); false when the second read did not hand every item.
        mutating func decide() -> Bool {
            defer {
                SecureMemory.wipe(&arena)
                ties.wipe()
                arena = []
                rows = []
                given = []
                repeated = []
            }
            guard noted == hashes.count else { return false }
            var rows = self.rows, numbers: [UInt32] = []
            let ties = self.ties
            self.rows = []
            arena.withUnsafeBytes { arena in
                func bytes(_ start: UInt32, _ count: UInt32) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: arena[Int(start)..<Int(start) + Int(count)])
                }
                func name(_ row: Row) -> UnsafeRawBufferPointer { bytes(row.start, row.nameCount) }
                rows.sort { a, b in
                    var order = compareBytes(name(a), name(b))
                    if order != 0 { return order < 0 }
                    order = compareBytes(bytes(a.start + a.nameCount, a.userCount), bytes(b.start + b.nameCount, b.userCount))
                    if order != 0 { return order < 0 }
                    order = compareBytes(bytes(a.start + a.nameCount + a.userCount, a.urlCount), bytes(b.start + b.nameCount + b.userCount, b.urlCount))
                    if order != 0 { return order < 0 }
                    order = ties.compare(Int(a.tie), Int(b.tie))
                    if order != 0 { return order < 0 }
                    return a.index < b.index
                }
                var taken: Set<String> = []
                var first = 0
                while first < rows.count {
                    var end = first + 1
                    while end < rows.count, compareBytes(name(rows[end]), name(rows[first])) == 0 { end += 1 }
                    if end - first > 1 {
                        if numbers.isEmpty { numbers = [UInt32](repeating: 0, count: hashes.count) }
                        let base = String(decoding: name(rows[first]), as: UTF8.self)
                        var number = 2
                        for row in rows[(first + 1)..<end] {
                            var candidate = "\(base) (\(number))"
                            while taken.contains(candidate) || given.contains(candidate) {
                                number += 1
                                candidate = "\(base) (\(number))"
                            }
                            taken.insert(candidate)
                            numbers[Int(row.index)] = UInt32(number)
                            number += 1
                        }
                    }
                    first = end
                }
            }
            self.numbers = numbers
            return true
        }

        /// The build's read: the number of `item`, at `index` and named `base` (0: not numbered);
        /// nil when it is not the item the first read had there.
        func number(of item: ForeignItem, at index: Int, base: String) -> UInt32? {
            guard index < hashes.count, hashes[index] == Self.check(item, base: base) else { return nil }
            return numbers.isEmpty ? 0 : numbers[index]
        }
    }
}
