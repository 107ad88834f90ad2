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
    /// Throws when the agent is another user's, does not answer in time, or answers garbage.
    func send(_ request: AgentRequest) throws(CLIError) -> AgentResponse? {
        guard let fd = try UnixSocket.connect(to: socket.path) else { return nil }
        defer { close(fd) }
        guard let peer = UnixSocket.peer(fd) else {
            throw .agentFailed("cannot tell who runs the agent at \(socket.path) (SO_PEERCRED failed)")
        }
        guard peer.uid == geteuid() else {
            throw .refused("the agent at \(socket.path) runs as uid \(peer.uid), not as you (uid \(geteuid())); refusing to use it",
                           hint: "check VAULTFILE_AGENT_SOCK and the folder it names; --no-agent or VAULTFILE_NO_AGENT=1 skips the agent")
        }
        UnixSocket.setTimeouts(fd, seconds: Self.answerTimeout)
        guard UnixSocket.send(request.frame(), to: fd) else {
            throw .agentFailed("the agent at \(socket.path) closed the connection before the request was sent")
        }
        while true {
            let response = try receive(fd)
            guard case .confirming = response else { return response }
            // The agent runs the confirm command of this vault before it answers.
            UnixSocket.setTimeouts(fd, seconds: Self.confirmingTimeout)
        }
    }

    /// Reads and decodes one answer.
    private func receive(_ fd: Int32) throws(CLIError) -> AgentResponse {
        let body: SecureBytes
        do {
            body = try UnixSocket.receiveFrame(from: fd, limit: AgentProtocol.maxResponseLength)
        } catch {
            switch error {
            case .closed: throw .agentFailed("the agent at \(socket.path) closed the connection without an answer")
            case .timedOut: throw .agentFailed("the agent at \(socket.path) did not answer in time")
            case .tooLong(let length): throw .agentFailed("the agent at \(socket.path) sent an answer of \(length) bytes, over the limit")
            case .failed(let code): throw .io(operation: "reading the agent's answer from", path: socket.path, errno: code)
            }
        }
        do {
            return try body.withUnsafeBytes { raw throws(AgentProtocolError) in try AgentResponse.decode(body: raw) }
        } catch {
            throw .agentFailed("the agent at \(socket.path) sent an answer this vaultfile cannot read: \(error.description)")
        }
    }
}

// MARK: - The agent as an unlock source

/// How a verb that unlocks a vault asks the agent first (every verb but `passwd`'s old password).
enum AgentAccess {
    /// Whether `VAULTFILE_NO_AGENT` is set (to anything but 0): the agent is not asked.
    static var disabledByEnvironment: Bool {
        guard let value = environment("VAULTFILE_NO_AGENT") else { return false }
        return value != "0"
    }

    /// The lookup a verb hands the store: the agent's key for the header read, or nil. It never
    /// prompts and never starts an agent; when no agent runs it costs one failed `connect`.
    /// Problems (a refused folder, an agent of another user, no answer in time) are warnings
    /// and mean "no key": the verb goes on to the password sources.
    static func lookup(vaultPath: String) -> Unlocker.FileKeyLookup {
        { header in key(for: header, vaultPath: vaultPath, warn: true) }
    }

    /// The agent's key for `header`, or nil; problems are warnings when `warn`, else silent
    /// (shell completion must print nothing but candidates).
    static func key(for header: VaultHeader, vaultPath: String, warn: Bool) -> SecureBytes? {
        let client = AgentClient()
        do {
            guard try client.socket.directoryExists() else { return nil }
            switch try client.send(.key(path: absolutePath(vaultPath), header: header.encoded())) {
            case .key(let key)?: return key
            case .noKey?, nil: return nil
            case .denied?:
                if warn { Messages.warning("the agent's confirm command refused to hand out the key of \(vaultPath)") }
                return nil
            case .failed(let why)?:
                if warn { Messages.warning("the agent at \(client.socket.path) failed: \(why)") }
                return nil
            case .done?, .forgotten?, .status?, .confirming?:
                if warn { Messages.warning("the agent at \(client.socket.path) answered a key request with another kind of answer") }
                return nil
            }
        } catch {
            if warn { Messages.warning("not using the agent: \(error.description)") }
            return nil
        }
    }
}
