// MARK: - Many names in byte order

/// The UTF-8 bytes of many names back to back, and their indices sorted by those bytes: what an
/// import of many entries sorts once, to find repeated names and to merge the entries into a vault
/// in name order.
///
/// The sort is stable (equal names keep their order in the input), and costs one comparison per
/// name when the names come sorted, as exports write them.
package struct NameOrder {
    /// Every name's bytes, back to back.
    private let bytes: [UInt8]
    /// Where each name starts in `bytes`, then where the last one ends.
    private let starts: [Int]
    /// The indices of the names, sorted by their bytes; equal names in input order.
    let sorted: [Int]

    /// The order of `names`, each an entry name.
    package init(_ names: some Collection<String>) {
        var bytes: [UInt8] = [], starts: [Int] = []
        starts.reserveCapacity(names.count + 1)
        for var name in names {
            starts.append(bytes.count)
            name.withUTF8 { bytes.append(contentsOf: $0) }
        }
        starts.append(bytes.count)
        self.init(bytes: bytes, starts: starts)
    }

    /// The names of the records of an import (`ImportRecordWriter`), by their bytes.
    package init(_ records: StoredRecords) {
        var bytes: [UInt8] = [], starts: [Int] = []
        starts.reserveCapacity(records.count + 1)
        records.forEachName { _, name in
            starts.append(bytes.count)
            bytes.append(contentsOf: name)
        }
        starts.append(bytes.count)
        self.init(bytes: bytes, starts: starts)
    }

    private init(bytes: [UInt8], starts: [Int]) {
        let count = starts.count - 1
        var sorted = Array(0..<count)
        var inOrder = true
        bytes.withUnsafeBytes { all in
            starts.withUnsafeBufferPointer { starts in
                func name(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: all[starts[index]..<starts[index + 1]])
                }
                // Already in order (an export): one pass, no sort.
                for position in sorted.indices.dropFirst() where compareBytes(name(position - 1), name(position)) > 0 {
                    inOrder = false
                    break
                }
                if !inOrder { sorted.sort { compareBytes(name($0), name($1)) < 0 } }
            }
        }
        self.bytes = bytes
        self.starts = starts
        self.sorted = sorted
        self.isInInputOrder = inOrder
    }

    /// Whether the names came in byte order (each no less than the one before it).
    let isInInputOrder: Bool

    /// The number of names.
    package var count: Int { sorted.count }

    /// Calls `body` with the bytes of name `index` (an input index). Do not let the pointer escape.
    package func withName<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[starts[index]..<starts[index + 1]])) }
    }

    /// The first name, in input order, that an earlier name repeats byte for byte: its index and the
    /// index of the earlier one; nil when every name is distinct.
    package var firstRepeat: (index: Int, first: Int)? {
        var found: (index: Int, first: Int)?
        bytes.withUnsafeBytes { all in
            func name(_ index: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[starts[index]..<starts[index + 1]]) }
            var position = 1
            while position < sorted.count {
                // A run of equal names: its first two, in input order (the sort is stable).
                if compareBytes(name(sorted[position - 1]), name(sorted[position])) == 0 {
                    let first = sorted[position - 1], second = sorted[position]
                    if second < (found?.index ?? .max) { found = (second, first) }
                    while position < sorted.count && compareBytes(name(first), name(sorted[position])) == 0 { position += 1 }
                }
                position += 1
            }
        }
        return found
    }
}
