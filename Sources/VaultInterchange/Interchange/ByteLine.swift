// MARK: - A line made as bytes

/// A line of text made as bytes, for the lines an import prints by the thousand (one per renamed
/// item: 90,000 for a browser's export whose titles repeat): each append copies into one
/// allocation that grows by doubling, without an array's uniqueness and capacity calls per
/// append (about 100 instructions each, a dozen appends a line). No secret goes in one: names,
/// usernames and sites only.
public struct ByteLine: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The number of bytes held.
    public private(set) var count = 0

    /// An empty line with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The bytes, where they lie: valid until the line is next changed.
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }

    /// Appends `bytes`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        makeRoom(bytes.count)
        UnsafeMutableRawPointer(start + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends one byte.
    public mutating func append(_ byte: UInt8) {
        makeRoom(1)
        start[count] = byte
        count += 1
    }

    /// Appends the UTF-8 of `text`.
    public mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of `text` (a literal goes to `append(_:)` of a `StaticString`).
    public mutating func append(contentsOf text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `bytes`.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Keeps the first `length` bytes (at most `count`).
    public mutating func truncate(to length: Int) {
        precondition(length >= 0 && length <= count, "a line cut within its bytes")
        count = length
    }

    /// Empties the line, keeping its room.
    public mutating func removeAll() { count = 0 }

    /// Room for `extra` more bytes: the bytes moved to an allocation at least twice as large.
    private mutating func makeRoom(_ extra: Int) {
        guard extra > capacity - count else { return }
        let larger = max(capacity * 2, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = larger
    }
}
