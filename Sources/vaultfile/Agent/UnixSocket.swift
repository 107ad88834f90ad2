import CPlatform
import SecureMemory
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Unix stream sockets

/// The few socket calls the agent and its clients make, each retrying on EINTR. Every descriptor
/// is close-on-exec. Frames are read into guarded memory: a request or an answer may carry a key.
enum UnixSocket {
    /// How a read ended when it did not get its bytes.
    enum ReadFailure: Error {
        /// The peer closed the connection first.
        case closed
        /// Nothing arrived within the socket's receive timeout.
        case timedOut
        /// The length prefix announced more than the limit.
        case tooLong(Int)
        /// Another error (errno).
        case failed(Int32)
    }

    /// The address of `path` (at most `AgentSocketPath.maxLength` bytes).
    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(AgentSocketPath.maxLength))
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// A new stream socket (close-on-exec), or -1.
    private static func makeSocket() -> Int32 { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }

    // MARK: Client side

    /// Connects to `path`. Returns nil when nobody listens there (no socket: ENOENT; a stale one
    /// left by a killed agent: ECONNREFUSED); throws the errno of other failures.
    static func connect(to path: String) throws(CLIError) -> Int32? {
        let fd = makeSocket()
        guard fd >= 0 else { throw .io(operation: "creating a socket for", path: path, errno: errno) }
        var address = address(path)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let code = errno
            close(fd)
            if code == ENOENT || code == ECONNREFUSED || code == ENOTDIR { return nil }
            throw .io(operation: "connecting to the agent at", path: path, errno: code)
        }
        return fd
    }

    // MARK: Server side

    /// Binds a new 0600 socket at `path` (which must not exist) and listens; returns the
    /// descriptor and the socket file's inode, so that only this socket is ever removed.
    static func listen(at path: String) throws(CLIError) -> (fd: Int32, inode: ino_t) {
        let fd = makeSocket()
        guard fd >= 0 else { throw .io(operation: "creating a socket for", path: path, errno: errno) }
        var address = address(path)
        // The mode is set by bind from the umask: 0600 from the first moment the socket exists.
        let previous = umask(0o177)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard status == 0 else {
            let code = errno
            close(fd)
            throw .io(operation: "binding the agent's socket", path: path, errno: code)
        }
        var info = stat()
        guard chmod(path, 0o600) == 0, lstat(path, &info) == 0, Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .io(operation: "listening on", path: path, errno: code)
        }
        return (fd, info.st_ino)
    }

    /// Accepts one connection (close-on-exec); nil when none is waiting or on a transient error.
    static func accept(_ fd: Int32) -> Int32? {
        let client = vaultfile_accept_cloexec(fd)
        return client >= 0 ? client : nil
    }

    // MARK: Both sides

    /// The process id and uid of the process at the other end, as the kernel recorded them.
    static func peer(_ fd: Int32) -> (pid: Int32, uid: uid_t)? {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        guard vaultfile_peer_credentials(fd, &pid, &uid) == 0 else { return nil }
        return (pid, uid)
    }

    /// Sets the send and receive timeouts: a blocked read or write fails after `seconds`.
    static func setTimeouts(_ fd: Int32, seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes every byte of `frame`; false when the peer is gone or the send timeout passed.
    /// MSG_NOSIGNAL: a vanished peer is an error, not a SIGPIPE.
    @discardableResult
    static func send(_ frame: SecureBytes, to fd: Int32) -> Bool {
        frame.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = Glibc.send(fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return true
        }
    }

    /// Reads and drops what the peer sent and this side did not read (at most 64 KiB, without
    /// waiting), so that closing after an error answer does not reset the connection before the
    /// peer has read the answer.
    static func discardPending(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 4_096)
        var rounds = 0
        while rounds < 16 && recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 { rounds += 1 }
    }

    /// Reads one frame: the 4-byte little-endian length, at most `limit`, then the body, which is
    /// returned in guarded memory. The length is checked before anything is allocated.
    static func receiveFrame(from fd: Int32, limit: Int) throws(ReadFailure) -> SecureBytes {
        var prefix: UInt32 = 0
        let failure = withUnsafeMutableBytes(of: &prefix) { buffer -> ReadFailure? in
            do throws(ReadFailure) { try readExactly(fd, into: buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
        let length = Int(UInt32(littleEndian: prefix))
        guard length <= limit else { throw .tooLong(length) }
        let body = SecureBytes(count: length)
        try body.withUnsafeMutableBytes { buffer throws(ReadFailure) in try readExactly(fd, into: buffer) }
        return body
    }

    private static func readExactly(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(ReadFailure) {
        var filled = 0
        while filled < buffer.count {
            let count = recv(fd, buffer.baseAddress! + filled, buffer.count - filled, 0)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                throw .failed(errno)
            }
            if count == 0 { throw .closed }
            filled += count
        }
    }
}
