#if canImport(Glibc)
import Glibc
#endif

// MARK: - Reading untrusted bytes through a limit

/// The one little-endian reader: a cursor over untrusted bytes whose every read checks the
/// bounds first and throws instead of trapping.
///
/// What is being read is an autoclosure: its text is built only for an error message, never on the hot path.
/// Generic so that the decrypted contents are read where they lie (a raw buffer) and the header from the file's array.
package struct ByteReader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    private let bytes: Bytes
    package private(set) var offset: Int
    /// What the caller is reading, for error messages. A plain enum, not a string or closure:
    /// readers are made for every record a lookup touches and must cost nothing to make or drop.
    private let subject: ReadSubject

    /// A reader at the start of `bytes`, which are the `subject` its errors name.
    package init(_ bytes: Bytes, reading subject: ReadSubject) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.subject = subject
    }

    /// Bytes left to read.
    package var remaining: Int { bytes.endIndex - offset }

    /// Reads `count` bytes, or throws when fewer are left (never allocates more than is present).
    @inline(__always)
    package mutating func read(_ count: Int, _ what: @autoclosure () -> String) throws(VaultError) -> Bytes.SubSequence {
        guard let run = take(count) else { throw shortRead(count, what()) }
        return run
    }

    /// Reads an unsigned integer of `Value`'s width, least significant byte first.
    @inline(__always)
    package mutating func read<Value: FixedWidthInteger & UnsignedInteger>(
        _: Value.Type, _ what: @autoclosure () -> String
    ) throws(VaultError) -> Value {
        guard let value = take(Value.self) else { throw shortRead(MemoryLayout<Value>.size, what()) }
        return value
    }

    // MARK: Reads that fail without an error

    /// Takes `count` bytes, or returns nil and reads nothing when fewer are left: for a reader
    /// that throws errors of its own (the agent's wire, AgentWire.swift).
    @inline(__always)
    package mutating func take(_ count: Int) -> Bytes.SubSequence? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Takes an unsigned integer of `Value`'s width, least significant byte first, or returns nil
    /// and reads nothing when fewer bytes are left.
    @inline(__always)
    package mutating func take<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type) -> Value? {
        let width = MemoryLayout<Value>.size
        guard width <= remaining else { return nil }
        var value: Value = 0
        for index in 0..<width { value |= Value(bytes[offset + index]) << (8 * index) }
        offset += width
        return value
    }

    /// The error of a read of `count` bytes that are not all there.
    fileprivate func shortRead(_ count: Int, _ what: String) -> VaultError {
        subject.damaged("\(what) needs \(count) bytes at offset \(offset - bytes.startIndex) of the \(subject), only \(remaining) left")
    }
}

/// What a `ByteReader` reads: named in its error messages, and it decides which error they are.
package enum ReadSubject: String, CustomStringConvertible {
    case header, contents, plaintext
    /// A message of the agent's protocol: its reader (`WireReader`) takes bytes with `take` and
    /// throws `AgentProtocolError`s of its own.
    case agentMessage = "agent message"

    package var description: String { rawValue }

    /// Damage found while reading this.
    func damaged(_ why: String) -> VaultError {
        switch self {
        case .header: return .headerDamaged(why)
        case .contents, .plaintext: return .contentsDamaged(why)
        case .agentMessage: return .malformedInput(why)
        }
    }
}

// MARK: Reading decrypted contents where they lie

extension ByteReader where Bytes == Slice<UnsafeRawBufferPointer> {
    /// Reads an integer as the generic reader does, with the same checks and errors, in one
    /// unaligned load instead of a bounds-checked read per byte (these run a few times per entry of a vault).
    @inline(__always)
    package mutating func read<Value: FixedWidthInteger & UnsignedInteger>(
        _: Value.Type, _ what: @autoclosure () -> String
    ) throws(VaultError) -> Value {
        let width = MemoryLayout<Value>.size
        guard width <= remaining else { throw shortRead(width, what()) }
        let value = bytes.base.loadUnaligned(fromByteOffset: offset, as: Value.self)
        offset += width
        return Value(littleEndian: value)
    }

    /// Reads `count` bytes as a raw buffer (valid while the underlying memory is).
    @inline(__always)
    package mutating func readRaw(_ count: Int, _ what: @autoclosure () -> String) throws(VaultError) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: try read(count, what()))
    }
}

// MARK: - Writing

/// Where encoded bytes go: a growing array (`ByteWriter`), or the payload being encrypted
/// chunk by chunk as it is written (`Payload.SealingStream`), so the contents need no second copy.
package protocol ByteSink {
    /// Appends `run` as it is.
    mutating func append(raw run: UnsafeRawBufferPointer)
}

extension ByteSink {
    /// Appends an unsigned integer, least significant byte first.
    package mutating func append<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) {
        withUnsafeBytes(of: value.littleEndian) { append(raw: $0) }
    }

    /// Appends `run` as it is.
    package mutating func append(_ run: [UInt8]) { run.withUnsafeBytes { append(raw: $0) } }

    /// Appends the UTF-8 bytes of `run`.
    package mutating func append(_ run: String.UTF8View) {
        var text = String(run)
        text.withUTF8 { append(raw: UnsafeRawBufferPointer($0)) }
    }
}

/// Writes into memory the caller has made room in, from `start` on: it checks the room before it
/// writes (an import's records, written in place into a `PlaintextBuffer`).
package struct UnsafeByteCursor: ByteSink {
    /// Where the next byte goes.
    package private(set) var position: UnsafeMutableRawPointer

    /// A cursor that writes from `start` on.
    package init(_ start: UnsafeMutableRawPointer) { position = start }

    /// Copies `run` to the cursor and moves past it.
    @inline(__always)
    package mutating func append(raw run: UnsafeRawBufferPointer) {
        guard let source = run.baseAddress, run.count > 0 else { return }
        position.copyMemory(from: source, byteCount: run.count)
        position += run.count
    }
}

/// Appends little-endian integers and byte runs to a growing array.
///
/// Give secrets the exact capacity up front: a growing array leaves its earlier, unwiped buffers behind.
package struct ByteWriter: ByteSink {
    package private(set) var bytes: [UInt8] = []

    /// An empty writer with room for `capacity` bytes.
    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends `run` as it is.
    package mutating func append(raw run: UnsafeRawBufferPointer) { bytes.append(contentsOf: run.assumingMemoryBound(to: UInt8.self)) }
    /// Appends the bytes of `run`.
    package mutating func append(_ run: some Sequence<UInt8>) { bytes.append(contentsOf: run) }
}

// MARK: - Order

/// Byte-wise order: negative, zero or positive as `a` sorts before, equal to or after `b`
/// (a prefix sorts first, as `lexicographicallyPrecedes`).
package func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0 {
        let order = memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return Int(order) }
    }
    return a.count - b.count
}
