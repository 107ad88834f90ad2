import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Wiping the private folder on SIGTERM, SIGHUP, SIGINT

/// Keeps a killed `edit` from leaving plaintext behind: while a private folder exists, SIGTERM,
/// SIGHUP and SIGINT (closing the terminal is enough) are forwarded to the editor, the folder is
/// wiped and removed, and vaultfile exits with 128 + the signal.
///
/// No work happens in a signal handler: the signals are blocked in every thread (`start`, before
/// the folder exists; threads made later inherit the mask) and one thread takes them with
/// `sigwait(3)`, then does the cleanup as ordinary code. The main thread changes the folder only
/// under `state`'s lock, and the cleanup thread keeps that lock until it exits, so the main thread
/// never writes, reads or seals after the cleanup has begun. Signals vaultfile inherited as ignored
/// (`nohup`) stay ignored. Children start with the caller's mask again (`Subprocess`).
enum CleanupOnSignal {
    /// What the cleanup thread must clean: the folder and, while it runs, the editor.
    struct State: ~Copyable {
        var folder: PrivateTemporaryFolder?
        var editor: pid_t = 0
        var started = false
    }

    private static let state = LockedValue(State())

    /// How long the editor gets to exit after the forwarded signal before its folder is wiped anyway.
    private static let editorGrace: Double = 2

    /// The signals handled: those that end a process by default (`SignalCleanup.fatal`), unless
    /// they were ignored at start-up.
    private static var signals: sigset_t { SignalCleanup.fatalSet(leavingOutIgnored: true) }

    /// Creates a private folder in `base` that is wiped if one of the signals arrives; blocks the
    /// signals and starts the cleanup thread first.
    static func makeFolder(in base: String) throws -> PrivateTemporaryFolder {
        try state.withLock { state throws -> PrivateTemporaryFolder in
            if !state.started {
                var set = signals
                _ = pthread_sigmask(SIG_BLOCK, &set, nil)
                var thread = pthread_t()
                guard pthread_create(&thread, nil, { _ in CleanupOnSignal.waitForSignal() }, nil) == 0 else {
                    throw CLIError.invalidArgument("cannot start a thread: \(String(cString: strerror(errno)))")
                }
                pthread_detach(thread)
                state.started = true
            }
            let folder = try PrivateTemporaryFolder(base: base)
            state.folder = folder
            return folder
        }
    }

    /// Wipes and removes the folder (at the end of a normal run).
    static func removeFolder() {
        state.withLock { state in
            state.folder?.remove()
            state.folder = nil
        }
    }

    /// Runs `body` (a change to the folder or a read of it) while no cleanup can begin.
    static func exclusive<R: Sendable>(_ body: () throws -> R) throws -> R {
        try state.withLock { _ throws -> R in try body() }
    }

    /// Starts the editor, waits for it, and returns its exit status (128 + signal when killed).
    ///
    /// The child is only reaped after it is no longer registered, so the cleanup thread can never
    /// send the signal to a process id that was already reused.
    static func runEditor(_ command: [String]) throws -> Int32 {
        let pid = try state.withLock { state throws -> pid_t in
            let pid = try Subprocess.start(command).pid
            state.editor = pid
            return pid
        }
        Subprocess.waitUntilExited(pid)
        state.withLock { $0.editor = 0 }
        return Subprocess.wait(pid)
    }

    // MARK: The cleanup thread

    private static func waitForSignal() -> Never {
        var set = signals
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        state.withLock { state -> Never in
            if state.editor > 0 {
                kill(state.editor, received)
                waitForExit(state.editor)
            }
            state.folder?.remove()
            // A vault being sealed meanwhile (the save): its temporary file goes too.
            _ = SignalCleanup.removeRegistered()
            _exit(ExitStatus.killed(by: received).rawValue)
        }
    }

    /// Waits at most `editorGrace` seconds for `pid` to exit, without reaping it.
    private static func waitForExit(_ pid: pid_t) {
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
        for _ in 0..<Int(editorGrace * 50) {
            var info = siginfo_t()
            let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
            if result < 0 && errno != EINTR { return }
            if result == 0 && info._sifields._sigchld.si_pid == pid { return }
            nanosleep(&pause, nil)
        }
    }
}
