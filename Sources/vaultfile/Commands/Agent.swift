import ArgumentParser

extension VaultfileCommand {
    /// `vaultfile agent …`: the process that holds unlocked vaults' file keys.
    struct Agent: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "agent",
            abstract: "The agent that holds unlocked vaults' keys: run, status, stop.",
            discussion: """
                'vaultfile unlock' starts the agent in the background when none runs; 'vaultfile agent run' \
                runs it in the foreground for a service manager (contrib/vaultfile-agent.service), and then \
                it stays until 'vaultfile agent stop' or a signal even when it holds no key. The agent keeps \
                keys in locked, guarded memory, is not dumpable, serves only processes of its own user, and \
                never reads a vault file. See docs/AGENT.md.
                """,
            subcommands: [AgentRun.self, AgentStatusCommand.self, AgentStop.self])
    }
}
