import ArgumentParser
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

/// Stops the agent: every key wiped, the socket removed.
struct AgentStop: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the agent: it wipes every key and exits.",
        discussion: """
            Waits (at most 5 s) until the agent has gone. No agent running is not an error. Stops an agent \
            of another release too (one started before vaultfile was upgraded).
            """)

    func run() throws {
        let client = AgentClient()
        guard try client.socket.directoryExists() else { return }
        guard try client.stop() else { return }
        // Gone once its socket no longer accepts connections.
        var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
        for _ in 0..<1_000 {
            guard let fd = try? UnixSocket.connect(to: client.socket.path) else { return }
            close(fd)
            nanosleep(&pause, nil)
        }
        throw CLIError.agentFailed("the agent at \(client.socket.path) was asked to stop but still answers after 5 s")
    }
}
