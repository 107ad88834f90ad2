import SecureMemory
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - One frame, read as its bytes arrive

/// Reads one frame (a 4-byte little-endian length, then the body) without ever blocking, in as
/// many calls as its bytes need: the agent's main loop reads every pending request this way, and
/// `UnixSocket.receiveFrame` waits between calls until its deadline. The length is checked against
/// the limit before the body is allocated, in guarded memory (a request or an answer may carry a key).
struct FrameReader {
    /// The longest body taken.
    let limit: Int
    private var prefix: [UInt8] = []
    private var body: SecureBytes?
    private var filled = 0

    /// A reader of one frame whose body is at most `limit` bytes.
    init(limit: Int) { self.limit = limit }

    /// Reads what has arrived (`recv` with MSG_DONTWAIT, retried on EINTR): the body once the
    /// frame is complete, nil while more is to come. Throws `.closed` when the peer closed first,
    /// `.tooLong` for a length over the limit, `.failed` for another error.
    mutating func readAvailable(from fd: Int32) throws(UnixSocket.ReadFailure) -> SecureBytes? {
        while prefix.count < AgentProtocol.lengthPrefix {
            var bytes: [UInt8] = [0, 0, 0, 0]
            let wanted = AgentProtocol.lengthPrefix - prefix.count
            let received = bytes.withUnsafeMutableBytes { Self.receive(fd, into: $0.baseAddress!, count: wanted) }
            guard let count = try received.get() else { return nil }
            prefix += bytes.prefix(count)
        }
        let body: SecureBytes
        if let started = self.body { body = started } else { body = try startBody() }
        while filled < body.count {
            let start = filled
            let received = body.withUnsafeMutableBytes { Self.receive(fd, into: $0.baseAddress! + start, count: $0.count - start) }
            guard let count = try received.get() else { return nil }
            filled += count
        }
        return body
    }

    /// Allocates the body once the length is known (and within the limit).
    private mutating func startBody() throws(UnixSocket.ReadFailure) -> SecureBytes {
        let length = Int(prefix[0]) | Int(prefix[1]) << 8 | Int(prefix[2]) << 16 | Int(prefix[3]) << 24
        guard length <= limit else { throw .tooLong(length) }
        let allocated = SecureBytes(count: length)
        body = allocated
        return allocated
    }

    /// One `recv` of at most `count` bytes: how many came, nil when nothing is waiting.
    private static func receive(_ fd: Int32, into pointer: UnsafeMutableRawPointer, count: Int) -> Result<Int?, UnixSocket.ReadFailure> {
        while true {
            let received = recv(fd, pointer, count, Int32(MSG_DONTWAIT))
            if received > 0 { return .success(received) }
            if received == 0 { return .failure(.closed) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .success(nil) }
            return .failure(.failed(errno))
        }
    }
}
