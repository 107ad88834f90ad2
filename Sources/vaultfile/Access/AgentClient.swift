import SecureMemory
import VaultAgent
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Talking to the agent

/// One request to the agent per connection (docs/AGENT.md). The client checks the peer's uid
/// before it sends a byte: an agent of another user (a `VAULTFILE_AGENT_SOCK` pointing at someone
/// else's socket) is refused, so `unlock` never hands it a key and no verb takes a key from it.
struct AgentClient {
    /// Where the agent listens.
    let socket: AgentSocketPath

    /// How long an answer may take, in seconds, unless the agent says a confirm command runs.
    static let answerTimeout: Double = 5
    /// How long an answer may take once the agent says its confirm command runs (it gets
    /// `AgentConfirmation.deadline`), in seconds.
    static let confirmingTimeout: Double = AgentConfirmation.deadline + 5

    /// The client for the socket in force (`AgentSocketPath.current`).
    init(socket: AgentSocketPath = .current) { self.socket = socket }

    /// Sends `request` and returns the answer; nil when no agent listens (no socket, or a stale one).
    /// Throws when the agent is another user's, does not answer in time, answers garbage, or is of
    /// another release (`agentOfAnotherRelease`: its answer is of another protocol version).
    func send(_ request: AgentRequest) throws(CLIError) -> AgentResponse? {
        guard let body = try exchange(request.frame()) else { return nil }
        do {
            return try body.withUnsafeBytes { raw throws(AgentProtocolError) in try AgentResponse.decode(body: raw) }
        } catch {
            throw .agentFailed("the agent at \(socket.path) sent an answer this vaultfile cannot read: \(error.description)")
        }
    }

    /// Asks the agent to stop, whatever its release (`AgentVersioning`): an agent of another
    /// version is asked again in its own. False when no agent listens.
    func stop() throws(CLIError) -> Bool {
        do throws(CLIError) {
            guard let response = try send(.stop) else { return false }
            switch response {
            case .done: return true
            case .failed(let why): throw CLIError.agentFailed("the agent did not stop: \(why)")
            default: throw CLIError.agentFailed("the agent at \(socket.path) answered with something other than 'done'")
            }
        } catch {
            guard case .agentOfAnotherRelease(let version) = error else { throw error }
            guard let body = try exchange(AgentVersioning.stopFrame(version: version), in: version) else { return false }
            guard body.withUnsafeBytes({ AgentVersioning.isDone($0) }) else {
                throw .agentFailed("the agent at \(socket.path) (of another release) did not stop; end its process")
            }
            return true
        }
    }

    /// Sends one frame and returns the body of the answer (after an interim `confirming`); nil when
    /// no agent listens. An answer in another version than `version` is an agent of another release.
    /// One deadline per answer: `answerTimeout`, `confirmingTimeout` after a `confirming`.
    private func exchange(_ frame: SecureBytes, in version: UInt8 = AgentProtocol.version) throws(CLIError) -> SecureBytes? {
        guard let fd = try UnixSocket.connect(to: socket.path) else { return nil }
        defer { close(fd) }
        guard let peer = UnixSocket.peer(fd) else {
            throw .agentFailed("cannot tell who runs the agent at \(socket.path) (SO_PEERCRED failed)")
        }
        guard peer.uid == geteuid() else {
            throw .refused("the agent at \(socket.path) runs as uid \(peer.uid), not as you (uid \(geteuid())); refusing to use it",
                           hint: "check VAULTFILE_AGENT_SOCK and the folder it names; --no-agent or VAULTFILE_NO_AGENT=1 skips the agent")
        }
        var deadline = UnixSocket.now() + Self.answerTimeout
        guard UnixSocket.send(frame, to: fd, deadline: deadline) else {
            throw .agentFailed("the agent at \(socket.path) closed the connection before the request was sent")
        }
        while true {
            let body = try receive(fd, deadline: deadline)
            let (answered, interim) = body.withUnsafeBytes { (AgentVersioning.version(of: $0), AgentResponse.isConfirming($0)) }
            if let answered, answered != version { throw .agentOfAnotherRelease(agentVersion: answered) }
            // The agent runs the vault's confirm command before it answers.
            guard interim else { return body }
            deadline = UnixSocket.now() + Self.confirmingTimeout
        }
    }

    /// Reads one answer's body by `deadline`.
    private func receive(_ fd: Int32, deadline: Double) throws(CLIError) -> SecureBytes {
        do {
            return try UnixSocket.receiveFrame(from: fd, limit: AgentProtocol.maxResponseLength, deadline: deadline)
        } catch {
            switch error {
            case .closed: throw .agentFailed("the agent at \(socket.path) closed the connection without an answer")
            case .timedOut: throw .agentFailed("the agent at \(socket.path) did not answer in time")
            case .tooLong(let length): throw .agentFailed("the agent at \(socket.path) sent an answer of \(length) bytes, over the limit")
            case .failed(let code): throw .io(operation: "reading the agent's answer from", path: socket.path, errno: code)
            }
        }
    }
}

// MARK: - The agent as an unlock source

/// How a verb that unlocks a vault asks the agent first (every verb but `passwd`'s old password).
enum AgentAccess {
    /// What this process's `key` requests say the key is for (`AgentKeyUse`); nil: an unlock.
    /// Set by the age plugin, one thread, before it asks the agent.
    nonisolated(unsafe) static var keyUse: AgentKeyUse?

    /// Whether `VAULTFILE_NO_AGENT` is set (to anything but 0): the agent is not asked.
    static var disabledByEnvironment: Bool {
        guard let value = environment("VAULTFILE_NO_AGENT") else { return false }
        return value != "0"
    }

    /// The lookup a verb hands the store: the agent's key for the header read, or nil. It never
    /// prompts and never starts an agent; when no agent runs it costs one failed `connect`.
    /// Problems (a refused folder, an agent of another user, no answer in time) are warnings
    /// and mean "no key": the verb goes on to the password sources.
    /// `missed` hears why an agent whose socket exists had no key (`NothingOpens` says it).
    static func lookup(vaultPath: String, missed: ((AgentMiss) -> Void)? = nil) -> Unlocker.FileKeyLookup {
        { header in try key(for: header, vaultPath: vaultPath, warn: true, missed: missed) }
    }

    /// Throws `agentOfAnotherRelease` when the agent that listens is of another release (asked
    /// for its status); any other problem is left to the request that follows.
    static func refuseAnotherRelease() throws(CLIError) {
        do {
            _ = try AgentClient().send(.status)
        } catch {
            if case .agentOfAnotherRelease = error { throw error }
        }
    }

    /// The agent's key for `header`, or nil; problems are warnings when `warn`, else silent
    /// (shell completion must print nothing but candidates). An agent of another release is an
    /// error when `warn` (the verb stops: it never falls back silently to the password).
    static func key(for header: VaultHeader, vaultPath: String, warn: Bool, missed: ((AgentMiss) -> Void)? = nil) throws(CLIError) -> SecureBytes? {
        let client = AgentClient()
        do {
            guard try client.socket.directoryExists() else { return nil }
            switch try client.send(.key(path: absolutePath(vaultPath), header: header.encoded(), use: keyUse)) {
            case .key(let key)?: return key
            case .noKey?:
                missed?(.notHeld(socket: client.socket.path))
                return nil
            case nil:
                if client.socket.socketExists { missed?(.noAnswer(socket: client.socket.path)) }
                return nil
            case .denied?:
                if warn { Messages.warning("the agent's confirm command refused to hand out the key of \(vaultPath)") }
                return nil
            case .failed(let why)?:
                if warn { Messages.warning("the agent at \(client.socket.path) failed: \(why)") }
                return nil
            case .done?, .forgotten?, .status?, .confirming?, .unproven?, .signature?, .cannotSign?:
                if warn { Messages.warning("the agent at \(client.socket.path) answered a key request with another kind of answer") }
                return nil
            }
        } catch {
            if case .agentOfAnotherRelease = error, warn { throw error }
            if warn { Messages.warning("not using the agent: \(error.description)") }
            return nil
        }
    }
}
