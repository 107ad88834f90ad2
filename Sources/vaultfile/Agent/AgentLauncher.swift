#if canImport(Glibc)
import Glibc
#endif

// MARK: - Starting the agent in the background

/// Starts `vaultfile agent run --background` for `unlock` when no agent answers: this very binary
/// (`/proc/self/exe`), detached (its own session, working in `/`), standard input, output and
/// error on /dev/null, no other descriptor, none of the password sources in its environment, the
/// signal mask and dispositions vaultfile started with. It exits when it holds no key.
enum AgentLauncher {
    /// How long `unlock` waits for a new agent to listen, in seconds.
    static let startTimeout: Double = 5

    /// Starts the agent for `socket` and waits until it accepts connections.
    static func start(_ socket: AgentSocketPath) throws(CLIError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0)
        }
        // Nothing the caller handed vaultfile (a pipe git or a test waits on) stays open in the agent.
        for fd in (Inherited.openDescriptors() ?? []).sorted() where fd > STDERR_FILENO {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = Inherited.signalMask
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Inherited.trackedSignals where !Inherited.wasIgnored(signal) { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = ["vaultfile", "agent", "run", "--background"]
        let argv = arguments.map { strdup($0) } + [nil]
        // The agent resolves the socket from its environment: give it the path resolved here.
        var environment = VaultfileCommand.Exec.currentEnvironment().filter { !Subprocess.isUnlockVariable($0.key) }
        environment["VAULTFILE_AGENT_SOCK"] = socket.path
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let status = envp.withUnsafeBufferPointer { env in
            posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv, UnsafeMutablePointer(mutating: env.baseAddress!))
        }
        guard status == 0 else { throw .agentFailed("cannot start the agent: \(String(cString: strerror(status)))") }
        try waitUntilListening(socket, pid: pid)
    }

    /// Polls the socket every 5 ms until it accepts a connection; fails when the agent exits with
    /// an error first or `startTimeout` passes.
    private static func waitUntilListening(_ socket: AgentSocketPath, pid: pid_t) throws(CLIError) {
        var pause = timespec(tv_sec: 0, tv_nsec: 5_000_000)
        var exited = false
        for _ in 0..<Int(startTimeout * 200) {
            if let fd = try? UnixSocket.connect(to: socket.path) {
                close(fd)
                return
            }
            if !exited {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    // Status 0: another agent took the socket first (two unlocks at once); wait for it.
                    guard status == 0 else {
                        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                        throw .agentFailed("the agent did not start (exit status \(code)); 'vaultfile agent run' in a terminal shows why")
                    }
                    exited = true
                }
            }
            nanosleep(&pause, nil)
        }
        throw .agentFailed("the agent started but did not listen on \(socket.path) within \(Int(startTimeout)) s")
    }
}
