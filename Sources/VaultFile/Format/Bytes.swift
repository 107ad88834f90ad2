// MARK: - Reading untrusted bytes through a limit

/// A cursor over untrusted bytes: every read checks the bounds first and throws instead of trapping.
///
/// What is being read is an autoclosure: its text is built only for an error message, never on the hot path.
/// Generic so that the decrypted contents are read where they lie (a raw buffer) and the header from the file's array.
struct ByteReader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    private let bytes: Bytes
    private(set) var offset: Int
    /// What the caller is reading, for error messages ("header", "contents").
    private let context: String
    private let makeError: (String) -> VaultError

    init(_ bytes: Bytes, context: String, error: @escaping (String) -> VaultError) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.context = context
        self.makeError = error
    }

    /// Bytes left to read.
    var remaining: Int { bytes.endIndex - offset }

    /// Reads `count` bytes, or throws when fewer are left (never allocates more than is present).
    @inline(__always)
    mutating func read(_ count: Int, _ what: @autoclosure () -> String) throws(VaultError) -> Bytes.SubSequence {
        guard count >= 0, count <= remaining else {
            throw makeError("\(what()) needs \(count) bytes at offset \(offset - bytes.startIndex) of the \(context), only \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    @inline(__always) mutating func readU8(_ what: @autoclosure () -> String) throws(VaultError) -> UInt8 { try read(1, what()).first! }
    @inline(__always) mutating func readU16(_ what: @autoclosure () -> String) throws(VaultError) -> UInt16 { UInt16(try readUInt(2, what())) }
    @inline(__always) mutating func readU32(_ what: @autoclosure () -> String) throws(VaultError) -> UInt32 { UInt32(try readUInt(4, what())) }
    @inline(__always) mutating func readU64(_ what: @autoclosure () -> String) throws(VaultError) -> UInt64 { try readUInt(8, what()) }

    @inline(__always)
    private mutating func readUInt(_ width: Int, _ what: @autoclosure () -> String) throws(VaultError) -> UInt64 {
        guard width <= remaining else { _ = try read(width, what()); fatalError("unreachable: read threw") }
        var value: UInt64 = 0
        for index in 0..<width { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += width
        return value
    }
}

// MARK: Reading decrypted contents where they lie

extension ByteReader where Bytes == Slice<UnsafeRawBufferPointer> {
    // The same checks and errors as the generic readers; the value is one unaligned load
    // instead of a bounds-checked read per byte (these run a few times per entry of a vault).
    @inline(__always) mutating func readU16(_ what: @autoclosure () -> String) throws(VaultError) -> UInt16 { try load(what()) }
    @inline(__always) mutating func readU32(_ what: @autoclosure () -> String) throws(VaultError) -> UInt32 { try load(what()) }
    @inline(__always) mutating func readU64(_ what: @autoclosure () -> String) throws(VaultError) -> UInt64 { try load(what()) }

    @inline(__always)
    private mutating func load<Value: FixedWidthInteger>(_ what: @autoclosure () -> String) throws(VaultError) -> Value {
        let width = MemoryLayout<Value>.size
        guard width <= remaining else { _ = try read(width, what()); fatalError("unreachable: read threw") }
        let value = bytes.base.loadUnaligned(fromByteOffset: offset, as: Value.self)
        offset += width
        return Value(littleEndian: value)
    }
}

// MARK: - Writing

/// Where encoded bytes go: a growing array (`ByteWriter`), or the payload being encrypted
/// chunk by chunk as it is written (`Payload.SealingStream`), so the contents need no second copy.
protocol ByteSink {
    /// Appends `run` as it is.
    mutating func append(raw run: UnsafeRawBufferPointer)
}

extension ByteSink {
    mutating func append(_ value: UInt8) { withUnsafeBytes(of: value) { append(raw: $0) } }
    mutating func append(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { append(raw: $0) } }
    mutating func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { append(raw: $0) } }
    mutating func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { append(raw: $0) } }
    mutating func append(_ run: [UInt8]) { run.withUnsafeBytes { append(raw: $0) } }
    mutating func append(_ run: String.UTF8View) {
        var text = String(run)
        text.withUTF8 { append(raw: UnsafeRawBufferPointer($0)) }
    }
}

/// Appends little-endian integers and byte runs to a growing array.
///
/// Give secrets the exact capacity up front: a growing array leaves its earlier, unwiped buffers behind.
struct ByteWriter: ByteSink {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(raw run: UnsafeRawBufferPointer) { bytes.append(contentsOf: run.assumingMemoryBound(to: UInt8.self)) }
    mutating func append(_ run: some Sequence<UInt8>) { bytes.append(contentsOf: run) }
}
