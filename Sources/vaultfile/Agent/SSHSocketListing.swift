import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - What the ssh socket serves, as `agent status` shows it

/// The keys the agent's ssh socket lists, asked as any ssh-agent client asks (REQUEST_IDENTITIES),
/// for `agent status`: the status request of vaultfile's own protocol stays as it was, and what is
/// shown is exactly what `ssh-add -l` would see. One connection, one deadline (2 s), the same
/// peer-uid check as every client of the agent.
struct SSHSocketListing {
    /// One key listed: its fingerprint, type and comment.
    struct Key {
        let fingerprint: String
        let type: String
        let comment: String
    }

    /// The ssh socket's path (`ssh-agent.sock` beside the agent's socket).
    let path: String
    /// Whether something listens there.
    let listening: Bool
    /// The keys listed (empty when nothing listens).
    let keys: [Key]

    /// The deadline of the whole exchange.
    static let timeout = 2.0

    /// Asks the ssh socket beside `socket` for its keys; `listening` false when no socket answers
    /// there. Throws when a socket answers with something that is not an identities answer.
    static func ask(beside socket: AgentSocketPath) throws(CLIError) -> SSHSocketListing {
        let path = socket.directory + "/ssh-agent.sock"
        guard let fd = try UnixSocket.connect(to: path) else { return SSHSocketListing(path: path, listening: false, keys: []) }
        defer { close(fd) }
        guard let peer = UnixSocket.peer(fd), peer.uid == geteuid() else {
            throw .refused("the ssh socket \(path) is not run by you (uid \(geteuid())); refusing to use it",
                           hint: "check VAULTFILE_AGENT_SOCK and the folder it names")
        }
        let deadline = UnixSocket.now() + timeout
        guard UnixSocket.send(SecureBytes(copying: [0, 0, 0, 1, 11]), to: fd, deadline: deadline),
              let body = readFrame(fd, deadline: deadline), let keys = parse(body) else {
            throw .agentFailed("the agent's ssh socket \(path) did not list its keys in time or sent an answer that is not a key list")
        }
        return SSHSocketListing(path: path, listening: true, keys: keys)
    }

    /// One big-endian framed message of at most 256 KiB, read by `deadline`.
    private static func readFrame(_ fd: Int32, deadline: Double) -> [UInt8]? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            if buffer.count >= 4 {
                let length = Int(buffer.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                guard length <= 256 * 1024 else { return nil }
                if buffer.count >= 4 + length { return Array(buffer[4..<(4 + length)]) }
            }
            guard UnixSocket.wait(fd, for: Int32(POLLIN), until: deadline) else { return nil }
            let count = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                buffer += chunk.prefix(count)
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return nil
            }
        }
    }

    /// An IDENTITIES_ANSWER (12): a count, then each key's blob and comment.
    private static func parse(_ body: [UInt8]) -> [Key]? {
        var reader = SSHReader(body[...])
        guard reader.byte() == 12, let count = reader.uint32(), count <= 4_096 else { return nil }
        var keys: [Key] = []
        for _ in 0..<count {
            guard let blob = reader.string(), let comment = reader.string() else { return nil }
            var typeReader = SSHReader(blob)
            let type = typeReader.string().map { String(decoding: $0, as: UTF8.self) } ?? "?"
            let fingerprint = (try? SSHHostKey(wire: Array(blob)))?.fingerprint ?? "(a key of type \(type))"
            keys.append(Key(fingerprint: fingerprint, type: type, comment: String(decoding: comment, as: UTF8.self)))
        }
        return reader.isAtEnd ? keys : nil
    }
}
