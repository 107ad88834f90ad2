import SecureMemory
import VaultAgent
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The ssh-agent socket

/// The agent's second socket, `ssh-agent.sock` beside `agent.sock`, where it speaks the ssh-agent
/// protocol to `ssh`, `ssh-add`, `ssh-keygen -Y`, git (docs/AGENT.md, "The ssh-agent socket").
///
/// The same rules as the agent's own socket: the folder is the agent's (0700), the socket 0600,
/// a connection of another uid is closed unanswered, each request must arrive whole
/// `requestTimeout` seconds after its first byte and each answer be taken as fast, and at most
/// `maxConnections` connections are open (one more drops the one idle longest, or is closed
/// when every one is busy). Unlike it, a connection carries any number of requests (ssh keeps its
/// connection for the session, bound to it by `session-bind@openssh.com`): each has a thread of
/// its own, waiting between requests without a deadline.
final class SSHAgentListener: Sendable {
    /// The most connections open at once.
    static let maxConnections = 64
    /// Seconds for a request to arrive whole after its first byte, and for an answer to be taken.
    static let requestTimeout: Double = 2

    /// The listener of this process, once started.
    private static let shared = LockedValue<SSHAgentListener?>(nil)

    private let path: String
    private let listener: Int32
    private let inode: ino_t
    private let keyring: LockedValue<AgentKeyring>
    /// Open connections: descriptor → (last activity, serving now).
    private let connections = LockedValue<[Int32: (since: Double, busy: Bool)]>([:])

    private init(path: String, listener: Int32, inode: ino_t, keyring: LockedValue<AgentKeyring>) {
        self.path = path
        self.listener = listener
        self.inode = inode
        self.keyring = keyring
    }

    // MARK: Starting and ending

    /// Listens at `path` unless this process does already. The agent holds the lock of its
    /// socket's folder, so a socket file found there is one a killed agent left: it is replaced.
    static func start(path: String, keyring: LockedValue<AgentKeyring>) throws(CLIError) {
        try shared.withLock { (current: inout SSHAgentListener?) throws(CLIError) in
            guard current == nil else { return }
            guard path.utf8.count <= AgentSocketPath.maxLength else {
                throw .refused("the ssh socket path \(path) is longer than \(AgentSocketPath.maxLength) bytes",
                               hint: "point VAULTFILE_AGENT_SOCK at a shorter folder")
            }
            unlink(path)
            let (fd, inode) = try UnixSocket.listen(at: path)
            let listener = SSHAgentListener(path: path, listener: fd, inode: inode, keyring: keyring)
            guard Self.spawn({ listener.acceptLoop() }) else {
                close(fd)
                unlink(path)
                throw .agentFailed("the agent cannot start a thread for its ssh socket; try again")
            }
            current = listener
        }
    }

    /// Removes the socket file if it is still the one this process bound (the agent is ending).
    static func removeSocket() {
        shared.withLock { current in
            guard let current else { return }
            var info = stat()
            if lstat(current.path, &info) == 0, info.st_ino == current.inode { unlink(current.path) }
        }
    }

    // MARK: Connections

    private func acceptLoop() {
        while true {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 1000) > 0, let client = UnixSocket.accept(listener) else { continue }
            guard let peer = UnixSocket.peer(client), peer.uid == geteuid(), admit(client) else {
                close(client)
                continue
            }
            guard Self.spawn({ self.serve(client, pid: peer.pid) }) else {
                connections.withLock { $0[client] = nil }
                close(client)
                continue
            }
        }
    }

    /// Registers `fd`; at the bound, shuts down the connection idle longest, or refuses when all are busy.
    private func admit(_ fd: Int32) -> Bool {
        connections.withLock { open in
            if open.count >= Self.maxConnections {
                guard let oldest = open.filter({ !$0.value.busy }).min(by: { $0.value.since < $1.value.since })?.key else { return false }
                // Its thread sees the end of its connection, unregisters and closes it.
                shutdown(oldest, Int32(SHUT_RDWR))
                open[oldest] = nil
            }
            open[fd] = (UnixSocket.now(), false)
            return true
        }
    }

    /// Answers the requests of one connection in order until the client closes it, a request is
    /// late or malformed in its framing, or an answer cannot be sent in time.
    private func serve(_ fd: Int32, pid: Int32) {
        defer {
            connections.withLock { $0[fd] = nil }
            close(fd)
        }
        var session = SSHAgentSession()
        while let body = readRequest(fd) {
            connections.withLock { if $0[fd] != nil { $0[fd] = (UnixSocket.now(), true) } }
            let answer = SSHAgentResponder.answer(body, session: &session, keyring: keyring, now: AgentServer.now) { request in
                AgentConfirmation.approves(command: request.command, action: .sshSign, vaultID: request.vaultID, path: request.path,
                                           clientPID: pid, extra: Self.confirmEnvironment(request))
            }
            guard UnixSocket.send(SecureBytes(copying: answer.frame), to: fd, deadline: UnixSocket.now() + Self.requestTimeout) else { return }
            let open = connections.withLock { open -> Bool in
                guard open[fd] != nil else { return false }
                open[fd] = (UnixSocket.now(), false)
                return true
            }
            guard open else { return }
        }
    }

    /// One request's body: waits for its first byte without a deadline (an idle ssh session),
    /// then gives the rest `requestTimeout`. Nil when the client closed, was late, or announced
    /// more than `SSHAgentProtocol.maxMessageLength` (answered FAILURE first) or an empty body.
    private func readRequest(_ fd: Int32) -> [UInt8]? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&entry, 1, -1) < 0 { guard errno == EINTR else { return nil } }
        let deadline = UnixSocket.now() + Self.requestTimeout
        guard let prefix = receive(fd, count: 4, deadline: deadline) else { return nil }
        let length = prefix.reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= SSHAgentProtocol.maxMessageLength else {
            UnixSocket.send(SecureBytes(copying: SSHAgentResponse.failure.frame), to: fd, deadline: UnixSocket.now() + 0.1)
            return nil
        }
        return receive(fd, count: length, deadline: deadline)
    }

    /// Exactly `count` bytes by `deadline`, or nil.
    private func receive(_ fd: Int32, count: Int, deadline: Double) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let received = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, count - filled, Int32(MSG_DONTWAIT)) }
            if received > 0 {
                filled += received
            } else if received == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                return nil
            } else if errno != EINTR, !UnixSocket.wait(fd, for: Int32(POLLIN), until: deadline) {
                return nil
            }
        }
        return bytes
    }

    /// The variables the confirm command gets for an ssh signature, beside the usual ones.
    static func confirmEnvironment(_ request: SSHConfirmRequest) -> [String: String] {
        var environment = [
            "VAULTFILE_CONFIRM_SSH_FINGERPRINT": request.fingerprint,
            "VAULTFILE_CONFIRM_SSH_COMMENT": request.comment,
            "VAULTFILE_CONFIRM_SSH_PURPOSE": request.purpose,
            "VAULTFILE_CONFIRM_SSH_FORWARDED": request.forwarded ? "1" : "0",
        ]
        environment["VAULTFILE_CONFIRM_SSH_HOST_KEY"] = request.hostKeyFingerprint
        environment["VAULTFILE_CONFIRM_SSH_USER"] = request.user
        environment["VAULTFILE_CONFIRM_SSH_NAMESPACE"] = request.namespace
        return environment
    }

    // MARK: Threads

    private final class Job {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a detached thread of its own; false when no thread could be made.
    private static func spawn(_ body: @escaping @Sendable () -> Void) -> Bool {
        let job = Unmanaged.passRetained(Job(body)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { raw in
            Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, job) == 0 else {
            Unmanaged<Job>.fromOpaque(job).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
