import SecureMemory
import Synchronization
import VaultAgent
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The agent process

/// `vaultfile agent run`: holds file keys in guarded memory and hands each to processes of the
/// same user that send the header it opens (docs/AGENT.md, docs/SECURITY.md).
///
/// One thread waits for connections, signals and idle expiry (`poll`) and reads every request as
/// its bytes arrive, with one 2-second deadline for the whole request (`AgentPendingRequests`);
/// each request read whole gets a thread of its own, so a client that connects and stays silent or
/// dribbles (or a confirm command that waits for a person) holds up nobody else. Connections of
/// another uid are closed at once, before a byte is read. The keys are in `AgentKeyring` behind one
/// lock; the agent never opens a vault file and never writes a key, a path or an entry name to its
/// output.
///
/// SIGTERM, SIGINT and SIGHUP (unless ignored when the agent started) wipe every key and end it,
/// as `agent stop` does. A flock on `<socket>.lock`, held for the agent's life, keeps two agents
/// off one socket; the kernel drops it when an agent is killed, so the next one removes the
/// stale socket and starts.
final class AgentServer: Sendable {
    /// How long a client has to send its whole request, and to take each answer, in seconds.
    static let requestTimeout: Double = 2
    /// The most requests served at once (each on a thread of its own); a request read whole while
    /// as many are served is answered `failed`. Requests still arriving hold none of these.
    static let maxClients = 32
    /// How long an agent started by `unlock` waits for its first key before it exits, in seconds.
    static let firstKeyGrace: Double = 10
    /// How often, at the longest, the agent checks that its socket is still there, in seconds.
    static let socketCheckInterval: Double = 30

    let socket: AgentSocketPath
    private let startedByUnlock: Bool
    /// `agent run --ssh`: the ssh socket listens from the start (else from the first `unlock --ssh`).
    private let sshAtStart: Bool
    let keyring = LockedValue(AgentKeyring())
    /// Set once a key was held: an agent started by `unlock` exits when it holds none again.
    private let everHeld = Atomic<Bool>(false)
    private let clients = Atomic<Int>(0)
    /// The descriptor holding the flock on `<socket>.lock` (-1 until taken).
    private let agentLock = Atomic<Int32>(-1)
    /// Written to wake the main loop: `c` something changed, `s` stop, or a signal number.
    private let wake: (read: Int32, write: Int32)

    /// An agent for `socket`; `startedByUnlock` for the one `unlock` starts in the background.
    init(socket: AgentSocketPath, startedByUnlock: Bool, sshAtStart: Bool = false) throws(CLIError) {
        self.socket = socket
        self.startedByUnlock = startedByUnlock
        self.sshAtStart = sshAtStart
        var fds: [Int32] = [-1, -1]
        // Made before any thread exists, so setting close-on-exec after pipe(2) races with no spawn.
        guard pipe(&fds) == 0 else { throw .io(operation: "creating a pipe for", path: socket.path, errno: errno) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        wake = (fds[0], fds[1])
    }

    // MARK: Running

    /// Listens until `stop`, a signal, or (when started by `unlock`) the last key is gone; then
    /// wipes every key, removes the socket and exits the process with status 0.
    func run() throws(CLIError) -> Never {
        try socket.prepareDirectory()
        guard takeAgentLock() else {
            // Another agent serves this socket. One that `unlock` started just lost a race: fine.
            if startedByUnlock { exit(ExitStatus.success.rawValue) }
            throw .refused("an agent is already running at \(socket.path)",
                           hint: "'vaultfile agent status' shows it; 'vaultfile agent stop' ends it")
        }
        // The lock is ours, so a socket file left here belongs to an agent that was killed.
        unlink(socket.path)
        let (listener, inode) = try UnixSocket.listen(at: socket.path)
        startSignalThread()
        signal(SIGPIPE, SIG_IGN)
        if sshAtStart { try SSHAgentListener.start(path: sshSocketPath, keyring: keyring) }
        if !startedByUnlock { Messages.info("vaultfile: agent \(getpid()) listening on \(socket.path)") }
        let started = Self.now()
        var reason = "stopped"
        // The requests still arriving: read on this thread only.
        let pending = AgentPendingRequests(timeout: Self.requestTimeout)
        while true {
            let now = Self.now()
            let idle = keyring.withLock { keyring -> Bool in
                keyring.expire(now: now)
                keyring.expireDelegations(wallClock: Self.wallClock())
                return keyring.isEmpty
            }
            if startedByUnlock && idle && (everHeld.load(ordering: .relaxed) || now - started >= Self.firstKeyGrace) {
                reason = "holds no key"
                break
            }
            // No client can reach an agent whose socket was removed or replaced: it ends instead of
            // holding keys for nobody.
            guard ownsSocket(inode) else {
                reason = "lost its socket"
                break
            }
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                + pending.pollEntries()
            let timeout = min(pollTimeout(now: now, started: started), pending.msUntilNextDeadline() ?? .max)
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 && errno != EINTR { reason = "poll failed: \(String(cString: strerror(errno)))"; break }
            if fds[1].revents != 0, let event = readWake() {
                if event == UInt8(ascii: "s") { break }
                if event != UInt8(ascii: "c") { reason = "signal \(event)"; break }
            }
            for request in pending.service(fds[2...]) { dispatch(request) }
            if fds[0].revents != 0, let client = UnixSocket.accept(listener) { admit(client, to: pending) }
        }
        shutDown(listener: listener, inode: inode, reason: reason)
    }

    /// Wipes every key, removes the socket (only the one this agent made) and exits.
    private func shutDown(listener: Int32, inode: ino_t, reason: String) -> Never {
        keyring.withLock { keyring -> Never in
            keyring.forgetAll()
            close(listener)
            if ownsSocket(inode) { unlink(socket.path) }
            SSHAgentListener.removeSocket()
            removeAgentLock()
            if !startedByUnlock { Messages.info("vaultfile: agent \(getpid()) \(reason); every key wiped") }
            exit(ExitStatus.success.rawValue)
        }
    }

    // MARK: Connections

    /// Closes a connection of another uid at once; reads the others' requests as they arrive.
    private func admit(_ client: Int32, to pending: AgentPendingRequests) {
        guard let peer = UnixSocket.peer(client), peer.uid == geteuid() else {
            close(client)
            return
        }
        if let request = pending.admit(fd: client, pid: peer.pid) { dispatch(request) }
    }

    /// Serves a request read whole on a thread of its own, or answers that the agent is busy.
    private func dispatch(_ request: AgentPendingRequests.Complete) {
        guard clients.add(1, ordering: .relaxed).newValue <= Self.maxClients else {
            clients.subtract(1, ordering: .relaxed)
            refuse(request.fd, "the agent serves \(Self.maxClients) requests already (confirm commands that wait); try again")
            return
        }
        let job = Unmanaged.passRetained(ClientJob(server: self, request: request)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { raw in
            let job = Unmanaged<ClientJob>.fromOpaque(raw!).takeRetainedValue()
            job.server.serve(job.request)
            return nil
        }, job) == 0 else {
            Unmanaged<ClientJob>.fromOpaque(job).release()
            clients.subtract(1, ordering: .relaxed)
            refuse(request.fd, "the agent cannot start a thread for the request; try again")
            return
        }
        pthread_detach(thread)
    }

    /// Answers `failed` with `message` (without waiting) and closes the connection.
    private func refuse(_ fd: Int32, _ message: String) {
        UnixSocket.send(AgentResponse.failed(message).frame(), to: fd, deadline: UnixSocket.now() + 0.1)
        close(fd)
    }

    /// What a client thread needs.
    private final class ClientJob {
        let server: AgentServer
        let request: AgentPendingRequests.Complete
        init(server: AgentServer, request: AgentPendingRequests.Complete) { self.server = server; self.request = request }
    }

    /// Answers one request read whole, closes the connection. A request that does not decode gets a
    /// `failed` answer; one of another version the answer `AgentVersioning` gives (a stop of any
    /// version stops this agent).
    private func serve(_ request: AgentPendingRequests.Complete) {
        let fd = request.fd
        defer {
            close(fd)
            clients.subtract(1, ordering: .relaxed)
        }
        let (version, stopVersion) = request.body.withUnsafeBytes { (AgentVersioning.version(of: $0), AgentVersioning.stopVersion(of: $0)) }
        if let stopVersion, stopVersion != AgentProtocol.version {
            UnixSocket.send(AgentVersioning.doneFrame(version: stopVersion), to: fd, deadline: Self.answerDeadline())
            notify("s")
            return
        }
        if let version, version != AgentProtocol.version {
            UnixSocket.send(AgentVersioning.otherVersionAnswer(requestVersion: version), to: fd, deadline: Self.answerDeadline())
            return
        }
        let decoded: AgentRequest
        do {
            decoded = try request.body.withUnsafeBytes { raw throws(AgentProtocolError) in try AgentRequest.decode(body: raw) }
        } catch {
            UnixSocket.send(AgentResponse.failed(error.description).frame(), to: fd, deadline: Self.answerDeadline())
            return
        }
        UnixSocket.send(answer(decoded, fd: fd, clientPID: request.pid).frame(), to: fd, deadline: Self.answerDeadline())
        // Only once the answer is sent: the main loop may end the agent on this news (stop, the
        // last key forgotten), and an exit before the send would leave the client without one.
        switch decoded {
        case .stop: notify("s")
        case .add, .lock, .lockAll, .serveSSHKeys: notify("c")
        case .key, .status, .sign: break
        }
    }

    /// The deadline of one answer: the client has `requestTimeout` to take it.
    static func answerDeadline() -> Double { UnixSocket.now() + requestTimeout }

    /// The answer to one request.
    private func answer(_ request: AgentRequest, fd: Int32, clientPID: Int32) -> AgentResponse {
        switch request {
        case .add(let handOver):
            return add(handOver, fd: fd, clientPID: clientPID)
        case .key(let path, let header, let use):
            return handOut(path: path, header: header, use: use, fd: fd, clientPID: clientPID)
        case .lock(let vaultID):
            return .forgotten(UInt32(keyring.withLock { $0.forget(vaultID: vaultID) }))
        case .lockAll:
            return .forgotten(UInt32(keyring.withLock { $0.forgetAll() }))
        case .sign(let path, let prefix, let payloadHash):
            return sign(path: path, headerPrefix: prefix, payloadHash: payloadHash, fd: fd, clientPID: clientPID)
        case .serveSSHKeys(let handOver):
            return serveSSHKeys(handOver)
        case .status:
            let vaults = keyring.withLock { $0.status(now: Self.now(), wallClock: Self.wallClock()) }
            return .status(AgentStatus(pid: UInt32(getpid()), startedByUnlock: startedByUnlock, vaults: vaults))
        case .stop:
            return .done
        }
    }

    /// Takes `handOver`; a change that weakens a held vault first waits for its confirm command
    /// (`change-settings`). A vault whose confirm command changed while it ran (another approved
    /// change) asks its new command, once.
    private func add(_ handOver: AgentKeyHandOver, fd: Int32, clientPID: Int32) -> AgentResponse {
        var approval: String?
        for round in 0..<3 {
            let outcome: AgentKeyring.AddOutcome
            do {
                outcome = try keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.add(handOver, now: Self.now(), approvedBy: approval) }
            } catch {
                return error == .unproven ? .unproven : .failed(error.description)
            }
            guard case .needsApproval(let command) = outcome else {
                guard outcome == .held else { return .noKey }
                everHeld.store(true, ordering: .relaxed)
                return .done
            }
            guard round < 2 else { break }
            if round == 0 { UnixSocket.send(AgentResponse.confirming.frame(), to: fd, deadline: Self.answerDeadline()) }
            guard AgentConfirmation.approves(command: command, action: .changeSettings, vaultID: handOver.vaultID, path: handOver.path,
                                             clientPID: clientPID) else { return .denied }
            approval = command
        }
        return .failed("the vault's confirm command changed while it ran; nothing changed, try again")
    }

    /// The key that verifies `header`, after the vault's confirm command approves, or why not.
    private func handOut(path: String, header: [UInt8], use: AgentKeyUse?, fd: Int32, clientPID: Int32) -> AgentResponse {
        let match: AgentKeyring.Match?
        do {
            match = try keyring.withLock { keyring throws(VaultError) in try keyring.match(header: header, now: Self.now()) }
        } catch {
            return .failed(error.description)
        }
        guard let match else { return .noKey }
        if let command = match.confirmCommand {
            UnixSocket.send(AgentResponse.confirming.frame(), to: fd, deadline: Self.answerDeadline())
            guard AgentConfirmation.approves(command: command, action: .handOut, vaultID: match.vaultID, path: path, clientPID: clientPID, use: use)
            else { return .denied }
        }
        // Locked or expired while the command ran: then it is not handed out.
        guard keyring.withLock({ $0.handedOut(match, path: path, now: Self.now()) }) else { return .noKey }
        return .key(match.fileKey)
    }

    // MARK: The main loop's helpers

    /// The flock on `<socket>.lock`; false when another agent holds it. An agent started by
    /// `unlock` waits up to 2 s for it: the agent holding it may be on its way out (its last key
    /// was just forgotten), and then this one takes over its socket.
    ///
    /// The lock file is removed when the agent ends (`removeAgentLock`), so a lock taken on a
    /// file that was removed (or replaced) meanwhile is dropped and taken again on the file now
    /// at the path: two agents never hold locks on two different files of one name.
    private func takeAgentLock() -> Bool {
        let path = socket.path + ".lock"
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
        var attempts = startedByUnlock ? 100 : 0
        // Each reopen follows a removal by an agent on its way out: a handful at most.
        for _ in 0..<100 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { return false }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard attempts > 0 else {
                    close(fd)
                    return false
                }
                attempts -= 1
                nanosleep(&pause, nil)
            }
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                // Kept open (and locked) until the process ends.
                agentLock.store(fd, ordering: .relaxed)
                return true
            }
            close(fd)  // the file was removed by the agent that held it: take the lock on the one there now
        }
        return false
    }

    /// Removes `<socket>.lock` while its flock is still held (the process then exits, dropping it):
    /// an agent that ended leaves no lock file behind; one waiting on the removed file retries
    /// on a new one (`takeAgentLock`).
    private func removeAgentLock() {
        let fd = agentLock.load(ordering: .relaxed)
        guard fd >= 0 else { return }
        var held = stat(), named = stat()
        let path = socket.path + ".lock"
        if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino { unlink(path) }
    }

    /// Milliseconds until the next vault expires (or, for an agent started by `unlock` that never
    /// held a key, until its grace ends); at most `socketCheckInterval`, when the socket is checked.
    private func pollTimeout(now: Double, started: Double) -> Int32 {
        var deadlines: [Double] = [now + Self.socketCheckInterval]
        if let expiry = keyring.withLock({ $0.nextExpiry }) { deadlines.append(expiry) }
        if startedByUnlock && !everHeld.load(ordering: .relaxed) { deadlines.append(started + Self.firstKeyGrace) }
        let next = deadlines.min()!
        return Int32(max(0, (next - now) * 1000).rounded(.up) + 1)
    }

    /// Whether the socket file at the path is still the one this agent bound.
    private func ownsSocket(_ inode: ino_t) -> Bool {
        var info = stat()
        return lstat(socket.path, &info) == 0 && info.st_ino == inode
    }

    private func notify(_ event: Character) {
        var byte = event.asciiValue!
        _ = write(wake.write, &byte, 1)
    }

    private func readWake() -> UInt8? {
        var byte: UInt8 = 0
        return read(wake.read, &byte, 1) == 1 ? byte : nil
    }

    /// Blocks SIGTERM, SIGINT and SIGHUP in every thread (those not ignored at start-up) and takes
    /// them on one thread with `sigwait`, which wakes the main loop to wipe and exit.
    private func startSignalThread() {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] where !Inherited.wasIgnored(signal) { sigaddset(&set, signal) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
        let job = Unmanaged.passRetained(SignalJob(set: set, wake: wake.write)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { raw in
            let job = Unmanaged<SignalJob>.fromOpaque(raw!).takeRetainedValue()
            var set = job.set
            var received: Int32 = 0
            while sigwait(&set, &received) != 0 {}
            var byte = UInt8(truncatingIfNeeded: received)
            _ = write(job.wake, &byte, 1)
            return nil
        }, job) == 0 else { return }
        pthread_detach(thread)
    }

    private final class SignalJob {
        let set: sigset_t
        let wake: Int32
        init(set: sigset_t, wake: Int32) { self.set = set; self.wake = wake }
    }

    /// Seconds on CLOCK_BOOTTIME, which keeps counting while the machine sleeps: a laptop
    /// suspended for an hour has been idle for an hour.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
