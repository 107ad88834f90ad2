import ArgumentParser
import VaultAgent

extension VaultfileCommand {
    /// Makes the agent forget (and wipe) the keys of this vault, or every key.
    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lock",
            abstract: "Make the agent forget and wipe this vault's keys (or every key with --all).",
            discussion: """
                The vault is named by its id, read from its header (no password needed); every key the \
                agent holds for that id goes, the old ones a passwd left included. An agent that 'unlock' \
                started exits when it holds no key. Nothing to do (no agent, or no key of this vault) is not \
                an error.
                """)

        @OptionGroup var location: VaultOptions
        @Flag(name: .customLong("all"), help: "Forget every key the agent holds, of every vault.") var all = false

        func run() throws {
            let request: AgentRequest = all ? .lockAll : .lock(vaultID: try location.store.readHeader().header.vaultID)
            let client = AgentClient()
            guard try client.socket.directoryExists() else { return }
            switch try client.send(request) {
            case .forgotten?, nil: return
            case .failed(let why)?: throw CLIError.agentFailed("the agent did not forget the keys: \(why)")
            default: throw CLIError.agentFailed("the agent at \(client.socket.path) answered with something other than a count")
            }
        }
    }
}
