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
        /// The whole frame did not arrive by its deadline.
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

    /// Seconds on CLOCK_MONOTONIC: the clock of every deadline here.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Waits until `fd` is ready for `events` or `deadline` (on `now()`) passes; false at the deadline.
    static func wait(_ fd: Int32, for events: Int32, until deadline: Double) -> Bool {
        while true {
            let left = deadline - now()
            guard left > 0 else { return false }
            var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 3_600_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // the next call reports the error
        }
    }

    /// Writes every byte of `frame` by `deadline` (on `now()`); false when the peer is gone or the
    /// deadline passed. MSG_NOSIGNAL: a vanished peer is an error, not a SIGPIPE.
    @discardableResult
    static func send(_ frame: SecureBytes, to fd: Int32, deadline: Double) -> Bool {
        frame.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = Glibc.send(fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if count >= 0 {
                    written += count
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    guard wait(fd, for: Int32(POLLOUT), until: deadline) else { return false }
                } else if errno != EINTR {
                    return false
                }
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

    /// Reads one frame by `deadline` (on `now()`): one deadline for the whole frame, however its
    /// bytes are paced. The length is checked against `limit` before anything is allocated; the
    /// body is returned in guarded memory.
    static func receiveFrame(from fd: Int32, limit: Int, deadline: Double) throws(ReadFailure) -> SecureBytes {
        var reader = FrameReader(limit: limit)
        while true {
            if let body = try reader.readAvailable(from: fd) { return body }
            guard wait(fd, for: Int32(POLLIN), until: deadline) else { throw .timedOut }
        }
    }
}
