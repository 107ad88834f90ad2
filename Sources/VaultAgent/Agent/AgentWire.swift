import SecureMemory
import VaultModel

// MARK: - Frame reading and writing

// The encoders and the bounds-checked reader of the agent's frames (docs/AGENT.md); AgentProtocol.swift
// holds the messages.

// Encodings go through `ByteSink` (VaultModel/Bytes.swift): first a sizer, to allocate the frame
// once, then the frame itself. Reads go through `ByteReader`'s `take`, with this protocol's errors.

extension ByteSink {
    /// A string as a 16-bit little-endian length and its UTF-8 bytes; cut at a character boundary
    /// to the limit of every string, `maxPathLength` bytes (callers check a command's length first).
    mutating func appendAgentString(_ text: String) {
        var text = shortened(text)
        text.withUTF8 { utf8 in
            append(UInt16(truncatingIfNeeded: utf8.count))
            append(raw: UnsafeRawBufferPointer(utf8))
        }
    }
}

/// Counts the bytes of a body.
struct FrameSizer: ByteSink {
    var count = 0
    mutating func append(raw bytes: UnsafeRawBufferPointer) { count += bytes.count }
}

/// Writes a frame into guarded memory of its exact size.
struct SecureFrameWriter: ByteSink {
    private let frame: SecureBytes
    private var offset = 0

    init(bodyLength: Int) {
        frame = SecureBytes(count: AgentProtocol.lengthPrefix + bodyLength)
        append(UInt32(bodyLength))
    }

    mutating func append(raw bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        let start = offset
        frame.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        offset += bytes.count
    }

    func finish() -> SecureBytes {
        precondition(offset == frame.count, "the sizer and the writer disagree")
        return frame
    }
}

/// A cursor over an untrusted body: every read checks the bounds first (`ByteReader.take`) and
/// throws `AgentProtocolError.truncated` naming what was read.
struct WireReader {
    private var reader: ByteReader<UnsafeRawBufferPointer>

    init(_ bytes: UnsafeRawBufferPointer) { reader = ByteReader(bytes, reading: .agentMessage) }

    mutating func raw(_ count: Int, _ what: @autoclosure () -> String) throws(AgentProtocolError) -> UnsafeRawBufferPointer {
        guard let run = reader.take(count) else { throw .truncated(what()) }
        return UnsafeRawBufferPointer(rebasing: run)
    }

    mutating func bytes(_ count: Int, _ what: @autoclosure () -> String) throws(AgentProtocolError) -> [UInt8] {
        Array(try raw(count, what()))
    }

    mutating func byte(_ what: @autoclosure () -> String) throws(AgentProtocolError) -> UInt8 { try integer(UInt8.self, what()) }

    mutating func uint16(_ what: @autoclosure () -> String) throws(AgentProtocolError) -> UInt16 { try integer(UInt16.self, what()) }

    mutating func uint32(_ what: @autoclosure () -> String) throws(AgentProtocolError) -> UInt32 { try integer(UInt32.self, what()) }

    mutating func uint64(_ what: @autoclosure () -> String) throws(AgentProtocolError) -> UInt64 { try integer(UInt64.self, what()) }

    private mutating func integer<Value: FixedWidthInteger & UnsignedInteger>(
        _: Value.Type, _ what: @autoclosure () -> String
    ) throws(AgentProtocolError) -> Value {
        guard let value = reader.take(Value.self) else { throw .truncated(what()) }
        return value
    }

    /// A 16-bit length and that many bytes of UTF-8 without NUL, at most `limit` bytes.
    mutating func string(_ what: @autoclosure () -> String, limit: Int) throws(AgentProtocolError) -> String {
        let name = what()
        let length = Int(try uint16("the length of \(name)"))
        guard length <= limit else { throw .tooLong(what: name, length: length, limit: limit) }
        let raw = try raw(length, name)
        guard !raw.contains(0), let text = String(validating: raw, as: UTF8.self) else {
            throw .malformed("\(name) is not UTF-8 text without NUL")
        }
        return text
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { reader.remaining == 0 }

    func expectEnd() throws(AgentProtocolError) {
        guard reader.remaining == 0 else { throw .malformed("\(reader.remaining) bytes after the last field") }
    }
}

/// `text` cut to at most `maxPathLength` UTF-8 bytes, at a character boundary.
func shortened(_ text: String) -> String {
    guard text.utf8.count > AgentProtocol.maxPathLength else { return text }
    var result = ""
    for character in text {
        guard result.utf8.count + character.utf8.count <= AgentProtocol.maxPathLength else { break }
        result.append(character)
    }
    return result
}
