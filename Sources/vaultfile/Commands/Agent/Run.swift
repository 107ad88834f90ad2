import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// Runs the agent in the foreground (or, for `unlock`, detached in the background).
struct AgentRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent in the foreground (for systemd user units and other service managers).",
        discussion: """
            Listens on $VAULTFILE_AGENT_SOCK, else $XDG_RUNTIME_DIR/vaultfile/agent.sock, else \
            /tmp/vaultfile-$UID/agent.sock, until 'vaultfile agent stop', SIGTERM, SIGINT or SIGHUP; every key \
            is wiped on the way out. Refuses to start when an agent already runs there. Writes one line when it \
            starts and one when it stops, to standard error, and never a key, a path of a vault or an entry name.
            """)

    @Flag(name: .customLong("background"), help: .private) var background = false
    @Flag(name: .customLong("ssh"), help: "Listen on the ssh socket (ssh-agent.sock beside the agent's) from the start, not from the first 'unlock --ssh'.")
    var ssh = false

    func run() throws {
        PluginLauncher.forbid("the agent")
        if background {
            // Started by `unlock`: a session of its own (no terminal's SIGHUP), and no folder kept busy.
            _ = setsid()
            _ = chdir("/")
        }
        let server = try AgentServer(socket: .current, startedByUnlock: background, sshAtStart: ssh)
        try server.run()
    }
}
