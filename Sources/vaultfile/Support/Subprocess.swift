#if canImport(Glibc)
import Glibc
#endif

// MARK: - Child processes

/// Starting and waiting for child processes with `posix_spawnp(3)`: `exec`, `edit`, the password
/// command and `git setup` all go through here, so every child starts with the signal mask, the
/// ignored signals and the soft core-file limit vaultfile started with (`Inherited`), not the ones
/// it set for itself.
enum Subprocess {
    /// A started child and, when its output is captured, the read end of its stdout pipe.
    struct Child {
        let pid: pid_t
        /// The read end of the stdout pipe; the caller reads it and closes it.
        let output: Int32?
    }

    /// Starts `arguments` (the first looked up in PATH). With `environment` nil the child
    /// inherits ours; stdin and stderr are always inherited. With `captureOutput`, stdout is a pipe.
    /// Environment strings are zeroed before they are freed: they may hold secrets (`exec`).
    static func start(_ arguments: [String], environment: [String: String]? = nil, captureOutput: Bool = false) throws(CLIError) -> Child {
        var pipeFDs: [Int32] = [-1, -1]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if captureOutput {
            guard pipe(&pipeFDs) == 0 else { throw .invalidArgument("cannot create a pipe: \(String(cString: strerror(errno)))") }
            // Close-on-exec, so the child sees the pipe only as its stdout (dup2 clears the flag there).
            _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], STDOUT_FILENO)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        restoreSignals(in: &attributes)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            for entry in envp ?? [] { if let entry { memset(entry, 0, strlen(entry)); free(entry) } }
        }
        var pid = pid_t()
        let status = Inherited.withCallerCoreLimit {
            envp.map { posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, $0) }
                ?? posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        }
        if captureOutput { close(pipeFDs[1]) }
        guard status == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            throw .invalidArgument("cannot run '\(arguments[0])': \(String(cString: strerror(status)))")
        }
        return Child(pid: pid, output: captureOutput ? pipeFDs[0] : nil)
    }

    /// Waits for `pid`; returns its exit status, or 128 + the signal that killed it.
    static func wait(_ pid: pid_t) -> Int32 {
        var waitStatus: Int32 = 0
        while waitpid(pid, &waitStatus, 0) < 0 && errno == EINTR {}
        let signal = waitStatus & 0x7F
        return signal == 0 ? (waitStatus >> 8) & 0xFF : 128 + signal
    }

    // MARK: Private

    /// The signal mask vaultfile started with; the tracked signals at their default, except those
    /// that were ignored at start-up, which the child inherits ignored. (A caught signal is reset
    /// to its default by exec itself.)
    private static func restoreSignals(in attributes: inout posix_spawnattr_t) {
        Inherited.reignoreSignals()
        var mask = Inherited.signalMask
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in Inherited.trackedSignals where !Inherited.wasIgnored(signal) { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }
}
