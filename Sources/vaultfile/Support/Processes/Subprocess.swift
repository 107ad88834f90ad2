import KDF
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Child processes

/// Starting and waiting for child processes with `posix_spawnp(3)`: `exec`, `edit`, the password
/// command and `git setup` all go through here, so every child gets the same treatment:
///
/// - none of the variables that unlock a vault (`unlockVariables`), unless the caller passes them
///   on on purpose (`exec --allow-nested`);
/// - no descriptor vaultfile opened itself, and not the `--password-fd` descriptor it read;
///   descriptors vaultfile inherited (`exec -- ./deploy.sh 3<conf`) pass through untouched;
/// - the signal mask, the ignored signals and the soft core-file limit vaultfile started with
///   (`Inherited`), not the ones it set for itself.
enum Subprocess {
    /// A started child and, when its output is captured, the read end of its stdout pipe.
    struct Child {
        let pid: pid_t
        /// The read end of the stdout pipe; the caller reads it and closes it (then sets nil).
        var output: Int32?
        /// The write end of the stdin pipe (`feedInput`); the caller writes it and closes it.
        var input: Int32? = nil
        /// The read end of the stderr pipe (`captureErrors`); the caller reads it and closes it.
        var errors: Int32? = nil
        /// Whether the child leads a process group of its own (`ownProcessGroup`): a signal for it
        /// goes to the group (`signal`), so a wrapper's own children get it too.
        var leadsGroup = false

        /// Sends `signal` to the child, or to its whole process group when it leads one. Call only
        /// before the child is reaped: until then its id (and its group's) is no other process's.
        func signal(_ signal: Int32) {
            kill(leadsGroup ? -pid : pid, signal)
        }
    }

    /// Whether a child gets the variables that unlock a vault.
    enum UnlockSources {
        /// Removed from the child's environment: the default for every child.
        case withheld
        /// Passed on, and `VAULTFILE_PASSWORD` and `VAULTFILE_IDENTITY` put back from their guarded copies (`exec --allow-nested`).
        case passedOn
    }

    /// The variables that unlock a vault; variables that start with `unlockVariablePrefixes` too.
    /// `VAULTFILE_PASSWORD` is also removed from vaultfile's own environment at start-up
    /// (`EnvironmentPassword`). `VAULTFILE_AGENT_SOCK` is not here: it only names a socket.
    static let unlockVariables: Set<String> = ["VAULTFILE_PASSWORD", "VAULTFILE_PASSWORD_FILE", "VAULTFILE_PASSWORD_COMMAND", "VAULTFILE_KEYFILE"]
    static let unlockVariablePrefixes = ["VAULTFILE_IDENTITY"]

    /// Whether `name` is a variable that unlocks a vault.
    static func isUnlockVariable(_ name: String) -> Bool {
        unlockVariables.contains(name) || unlockVariablePrefixes.contains { name.hasPrefix($0) }
    }

    /// Starts `arguments` (the first looked up in PATH). With `environment` nil the child gets ours;
    /// either way without the unlock variables unless `unlockSources` is `.passedOn`. stdin and
    /// stderr are always inherited. With `captureOutput`, stdout is a pipe.
    /// Environment strings vaultfile builds are zeroed before they are freed: they may hold secrets (`exec`).
    /// With `feedInput`, stdin is a pipe (a secret for a clipboard tool goes there, never in argv).
    /// With `detached`, the child leads a new session (`setsid`) with stdout and stderr on /dev/null.
    /// With `captureErrors`, stderr is a pipe too (the caller relays it: `ParallelDecryption`).
    /// With `standardInput`, stdin is that open file (the caller closes it after the start).
    /// With `descriptor3`, the child's descriptor 3 is that open file (the caller's, closed by the
    /// caller after the start; e.g. the read end of a pipe of identities for `age -i /dev/fd/3`).
    /// With `ownProcessGroup`, the child leads a new process group (`POSIX_SPAWN_SETPGROUP`), so
    /// that `Child.signal` reaches what it starts itself; give it only to a child that never reads
    /// the terminal, or while the caller is not in the terminal's foreground (`ParallelDecryption`
    /// asks for each tool): one outside the terminal's foreground group that reads it is stopped (SIGTTIN).
    static func start(_ arguments: [String], environment: [String: String]? = nil, unlockSources: UnlockSources = .withheld,
                      captureOutput: Bool = false, feedInput: Bool = false, detached: Bool = false,
                      captureErrors: Bool = false, standardInput: Int32? = nil, descriptor3: Int32? = nil,
                      ownProcessGroup: Bool = false) throws(CLIError) -> Child {
        precondition(!(feedInput && standardInput != nil), "one standard input")
        var pipeFDs: [Int32] = [-1, -1]
        var inputFDs: [Int32] = [-1, -1]
        var errorFDs: [Int32] = [-1, -1]
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
        if feedInput {
            guard pipe(&inputFDs) == 0 else { throw .invalidArgument("cannot create a pipe: \(String(cString: strerror(errno)))") }
            _ = fcntl(inputFDs[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(inputFDs[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, inputFDs[0], STDIN_FILENO)
        }
        // A file the caller opened (and still owns) as the child's stdin.
        if let standardInput { posix_spawn_file_actions_adddup2(&actions, standardInput, STDIN_FILENO) }
        if captureErrors {
            guard pipe(&errorFDs) == 0 else {
                if captureOutput { close(pipeFDs[0]); close(pipeFDs[1]) }
                if feedInput { close(inputFDs[0]); close(inputFDs[1]) }
                throw .invalidArgument("cannot create a pipe: \(String(cString: strerror(errno)))")
            }
            _ = fcntl(errorFDs[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(errorFDs[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, errorFDs[1], STDERR_FILENO)
        }
        if detached {
            for fd in [STDOUT_FILENO, STDERR_FILENO] where !(fd == STDOUT_FILENO && captureOutput) {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0)
            }
            // A child that outlives us (the clearer, xclip serving the selection) must not hold
            // a caller's pipe open: whoever waits for its end would wait for the child too.
            for fd in (Inherited.openDescriptors() ?? []).sorted() where fd > STDERR_FILENO {
                posix_spawn_file_actions_addclose(&actions, fd)
            }
        }
        closeOwnDescriptors(in: &actions, keepingStandardOutput: captureOutput, keepingStandardError: captureErrors)
        // After the closes above (which may name 3), and never from 3 itself: a dup2 onto the same
        // descriptor would keep its close-on-exec flag (the caller gives a descriptor above 3).
        if let descriptor3 {
            precondition(descriptor3 > 3, "descriptor 3 is given from a higher descriptor")
            posix_spawn_file_actions_adddup2(&actions, descriptor3, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        restoreSignals(in: &attributes)
        if detached { detach(&attributes) }
        if ownProcessGroup && !detached { leadNewGroup(&attributes) }

        let argv = arguments.map { strdup($0) } + [nil]
        let environment = ChildEnvironment(environment, unlockSources: unlockSources)
        defer {
            argv.forEach { free($0) }
            environment.release()
        }
        var pid = pid_t()
        let status = Inherited.withCallerCoreLimit {
            environment.pointers.withUnsafeBufferPointer { envp in
                posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, UnsafeMutablePointer(mutating: envp.baseAddress!))
            }
        }
        if captureOutput { close(pipeFDs[1]) }
        if feedInput { close(inputFDs[0]) }
        if captureErrors { close(errorFDs[1]) }
        guard status == 0 else {
            if captureOutput { close(pipeFDs[0]) }
            if feedInput { close(inputFDs[1]) }
            if captureErrors { close(errorFDs[0]) }
            throw .cannotRun(command: arguments[0], errno: status)
        }
        return Child(pid: pid, output: captureOutput ? pipeFDs[0] : nil, input: feedInput ? inputFDs[1] : nil,
                     errors: captureErrors ? errorFDs[0] : nil, leadsGroup: ownProcessGroup && !detached)
    }

    /// Waits until `pid` has exited without reaping it: its process id stays its own until `wait`,
    /// so a signal sent to it meanwhile (`SignalCleanup`, `CleanupOnSignal`) reaches no other process.
    static func waitUntilExited(_ pid: pid_t) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    /// Whether `pid` has exited (or is no child of ours), without reaping it or waiting.
    static func hasExited(_ pid: pid_t) -> Bool {
        var info = siginfo_t()
        var result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        while result < 0 && errno == EINTR { result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) }
        return result < 0 || info._sifields._sigchld.si_pid != 0
    }

    /// Waits for `pid`; returns its exit status, or 128 + the signal that killed it.
    static func wait(_ pid: pid_t) -> Int32 {
        let (status, signal) = ending(pid)
        return signal.map { 128 + $0 } ?? status
    }

    /// Waits for `pid`; returns its exit status, or the signal that killed it (status 0 then).
    /// An ending that cannot be read (waitpid fails: no such child) is a failure, status 1, never
    /// a success; `Hardening` gives SIGCHLD its default action, since an inherited ignored SIGCHLD
    /// makes the kernel reap children unasked.
    static func ending(_ pid: pid_t) -> (status: Int32, signal: Int32?) {
        var waitStatus: Int32 = 0
        var result = waitpid(pid, &waitStatus, 0)
        while result < 0 && errno == EINTR { result = waitpid(pid, &waitStatus, 0) }
        guard result == pid else { return (1, nil) }
        return decoded(waitStatus)
    }

    /// `wait(pid)` without waiting: nil while `pid` runs, else its status as `wait` gives it
    /// (a loop that must take signals meanwhile polls this).
    static func endedStatus(_ pid: pid_t) -> Int32? {
        var waitStatus: Int32 = 0
        var result = waitpid(pid, &waitStatus, WNOHANG)
        while result < 0 && errno == EINTR { result = waitpid(pid, &waitStatus, WNOHANG) }
        if result == 0 { return nil }
        guard result == pid else { return 1 }
        let (status, signal) = decoded(waitStatus)
        return signal.map { 128 + $0 } ?? status
    }

    /// The exit status, or the signal that ended the process (status 0 then), of a wait status.
    private static func decoded(_ waitStatus: Int32) -> (status: Int32, signal: Int32?) {
        // WIFSIGNALED/WTERMSIG are macros Swift cannot import: the low 7 bits hold the signal.
        let signal = waitStatus & 0x7F
        return signal == 0 ? ((waitStatus >> 8) & 0xFF, nil) : (0, signal)
    }

    // MARK: Private

    /// Closes in the child every descriptor vaultfile opened without close-on-exec (there should be
    /// none: every `open` in vaultfile passes O_CLOEXEC; this catches a library that forgot), and
    /// puts `/dev/null` where a consumed standard descriptor was.
    private static func closeOwnDescriptors(in actions: inout posix_spawn_file_actions_t, keepingStandardOutput: Bool,
                                            keepingStandardError: Bool = false) {
        for fd in Inherited.consumedDescriptors.sorted() where fd <= STDERR_FILENO {
            if fd == STDOUT_FILENO && keepingStandardOutput { continue }
            if fd == STDERR_FILENO && keepingStandardError { continue }
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0)
        }
        guard let inherited = Inherited.descriptors, let open = Inherited.openDescriptors() else { return }
        for fd in open.subtracting(inherited).sorted() where fd > STDERR_FILENO {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { posix_spawn_file_actions_addclose(&actions, fd) }
        }
    }

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

    /// Adds `POSIX_SPAWN_SETPGROUP` with group 0: the child's group is its own process id.
    private static func leadNewGroup(_ attributes: inout posix_spawnattr_t) {
        var flags: Int16 = 0
        posix_spawnattr_getflags(&attributes, &flags)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, flags | Int16(POSIX_SPAWN_SETPGROUP))
    }

    /// Adds `POSIX_SPAWN_SETSID`: the child leads a new session, so closing the terminal does not end it.
    private static func detach(_ attributes: inout posix_spawnattr_t) {
        var flags: Int16 = 0
        posix_spawnattr_getflags(&attributes, &flags)
        posix_spawnattr_setflags(&attributes, flags | 0x80)  // POSIX_SPAWN_SETSID (glibc 2.26+), hidden from Swift behind _GNU_SOURCE
    }
}

// MARK: - A child's environment

/// The `envp` array of one child: ours or the caller's, without the unlock variables unless they
/// are passed on. Strings this type copies are zeroed on release; entries of our own environment
/// are pointed to, not copied.
private struct ChildEnvironment {
    private(set) var pointers: [UnsafeMutablePointer<CChar>?] = []
    private var owned: [UnsafeMutablePointer<CChar>] = []

    init(_ given: [String: String]?, unlockSources: Subprocess.UnlockSources) {
        let keepUnlock = unlockSources == .passedOn
        if let given {
            for (name, value) in given where keepUnlock || !Subprocess.isUnlockVariable(name) {
                let copy = strdup("\(name)=\(value)")!
                owned.append(copy)
                pointers.append(copy)
            }
        } else {
            var entry = environ
            while let pointer = entry.pointee {
                let nameLength = strchr(pointer, 0x3D).map { $0 - pointer } ?? strlen(pointer)
                let name = String(decoding: UnsafeRawBufferPointer(start: pointer, count: nameLength), as: UTF8.self)
                if keepUnlock || !Subprocess.isUnlockVariable(name) { pointers.append(pointer) }
                entry += 1
            }
        }
        let guarded = [("VAULTFILE_PASSWORD", EnvironmentPassword.password), ("VAULTFILE_IDENTITY", EnvironmentIdentity.identity)]
        for case (let name, let secret?) in guarded where keepUnlock && secret.count > 0 {
            // Straight from guarded memory into a buffer that is zeroed on release.
            let prefix = Array((name + "=").utf8)
            let bytes = malloc(prefix.count + secret.count + 1)!
            prefix.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: prefix.count) }
            secret.withUnsafeBytes { bytes.advanced(by: prefix.count).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            bytes.storeBytes(of: 0, toByteOffset: prefix.count + secret.count, as: UInt8.self)
            let buffer = bytes.assumingMemoryBound(to: CChar.self)
            pointers.removeAll { $0.map { strncmp($0, name + "=", prefix.count) == 0 } ?? false }
            owned.append(buffer)
            pointers.append(buffer)
        }
        pointers.append(nil)
    }

    /// Zeroes and frees the copies.
    func release() {
        for copy in owned {
            memset(copy, 0, strlen(copy))
            free(copy)
        }
    }
}
