import SecureMemory
import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Requests still arriving

/// The connections whose request has not all arrived, read on the agent's main loop without
/// blocking, each against one deadline for the whole request (`AgentServer.requestTimeout` after
/// its accept), however its bytes are paced. A connection holds no serving thread until its
/// request is complete, so slow or silent clients take none of the threads that serve requests;
/// and when `maxWaiting` connections wait, the one that waited longest is dropped for the new one:
/// a client whose request arrives at once is never turned away by slow ones.
///
/// Used by the main loop's thread only.
final class AgentPendingRequests {
    /// The most connections waiting for their request at once.
    static let maxWaiting = 64

    /// A request read whole, to be served.
    struct Complete {
        /// The connection.
        let fd: Int32
        /// The client's process id (SO_PEERCRED), for the confirm command.
        let pid: Int32
        /// The request's body (after the length prefix), in guarded memory.
        let body: SecureBytes
    }

    private struct Waiting {
        let fd: Int32
        let pid: Int32
        let deadline: Double
        var reader = FrameReader(limit: AgentProtocol.maxRequestLength)
    }

    /// Oldest first.
    private var waiting: [Waiting] = []
    private let timeout: Double

    /// Pending requests that each get `timeout` seconds to arrive whole.
    init(timeout: Double) { self.timeout = timeout }

    // MARK: Taking and reading

    /// Takes a new connection and reads what has arrived: the request when it came whole already.
    func admit(fd: Int32, pid: Int32) -> Complete? {
        var connection = Waiting(fd: fd, pid: pid, deadline: UnixSocket.now() + timeout)
        if let body = read(&connection) { return Complete(fd: fd, pid: pid, body: body) }
        guard !finished(connection) else { return nil }
        if waiting.count >= Self.maxWaiting { close(waiting.removeFirst().fd) }
        waiting.append(connection)
        return nil
    }

    /// What the main loop polls: one entry per waiting connection, in the order `service` takes.
    func pollEntries() -> [pollfd] {
        waiting.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    }

    /// Reads the connections `entries` (from `pollEntries`, after `poll`) say are ready, and drops
    /// those past their deadline unanswered; returns the requests now whole.
    func service(_ entries: ArraySlice<pollfd>) -> [Complete] {
        var complete: [Complete] = []
        var still: [Waiting] = []
        let now = UnixSocket.now()
        for (index, entry) in zip(waiting.indices, entries) {
            var connection = waiting[index]
            if entry.revents != 0 {
                if let body = read(&connection) {
                    complete.append(Complete(fd: connection.fd, pid: connection.pid, body: body))
                    continue
                }
                if finished(connection) { continue }
            }
            if connection.deadline <= now {
                close(connection.fd)
                continue
            }
            still.append(connection)
        }
        // Connections admitted after `entries` were made were not polled: they wait on.
        still += waiting.dropFirst(entries.count)
        waiting = still
        return complete
    }

    /// Milliseconds until the first deadline (at least 1), or nil when nothing waits.
    func msUntilNextDeadline() -> Int32? {
        guard let first = waiting.map(\.deadline).min() else { return nil }
        return Int32(max(1, ((first - UnixSocket.now()) * 1000).rounded(.up)))
    }

    // MARK: One connection

    /// Reads what arrived; the body once whole. A connection that failed is closed here (a request
    /// over the limit answered first) and marked finished.
    private func read(_ connection: inout Waiting) -> SecureBytes? {
        do {
            return try connection.reader.readAvailable(from: connection.fd)
        } catch {
            if case .tooLong(let length) = error {
                let message = "a request of \(length) bytes is over the limit of \(AgentProtocol.maxRequestLength)"
                UnixSocket.send(AgentResponse.failed(message).frame(), to: connection.fd, deadline: UnixSocket.now() + 0.1)
                UnixSocket.discardPending(connection.fd)
            }
            close(connection.fd)
            connection = Waiting(fd: -1, pid: connection.pid, deadline: connection.deadline)
            return nil
        }
    }

    /// Whether `read` closed the connection.
    private func finished(_ connection: Waiting) -> Bool { connection.fd < 0 }
}
