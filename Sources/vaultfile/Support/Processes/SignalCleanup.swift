import CPlatform
import Synchronization
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Removing half-written files on a signal

/// Keeps a killed write from leaving its temporary file or folder behind: the `--out` file of
/// `export` and `inject` (plain text for most formats), keygen's and share's files, a vault being
/// sealed, the store folder of `export --format pass`.
///
/// A handler is installed at start-up for every signal whose default action ends the process,
/// unless vaultfile inherited it ignored (`nohup`). It does only async-signal-safe work: it
/// unlinks the temporary files `AtomicFileWriter` registered (`TemporaryFiles`), sends SIGTERM to
/// the gpg encrypting for the registered store folder and removes that folder
/// (`vaultfile_remove_tree_signal_safe`), then exits with 128 + the signal, as `edit` does
/// (`CleanupOnSignal`). When nothing was registered the signal's default action is taken, exactly
/// as without the handler. A handler runs in whichever thread takes the signal, so no thread
/// needs the signals blocked; `edit`, which blocks them and takes them with `sigwait`, calls
/// `removeRegistered` itself. A child process starts with the default action again (exec resets
/// caught signals). A short sequence of renames that must not be cut (a pass store's commit) runs
/// in `deferringSignals`. The crash signals get their default action back from the runtime's
/// backtracer (`crash`).
enum SignalCleanup {
    /// The signals whose default action ends the process (Ctrl-\\ sends SIGQUIT), not only the
    /// three a terminal sends most; `edit` and `import` take the same ones.
    static let fatal = [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR]

    /// The `fatal` signals as a set, for a signal mask; without those inherited as ignored
    /// (`nohup`) when `leavingOutIgnored`, which must stay ignored rather than be taken.
    static func fatalSet(leavingOutIgnored: Bool = false) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in fatal where !(leavingOutIgnored && Inherited.wasIgnored(signal)) { sigaddset(&set, signal) }
        return set
    }

    /// Installs the handler; called once, first thing in `main` (`Hardening.apply`).
    static func install() {
        TemporaryFiles.prepare()
        _ = folderState.load(ordering: .relaxed)
        _ = child.load(ordering: .relaxed)
        _ = forwardTarget.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, _ in
            // si_code > 0: sent by the kernel (SI_KERNEL: a terminal's keys and hang-up, timers);
            // else by a process (kill, sigqueue, tgkill), whose id is si_pid.
            guard let info, info.pointee.si_code <= 0 else { return SignalCleanup.handle(signal, sender: nil) }
            SignalCleanup.handle(signal, sender: info.pointee._sifields._kill.si_pid)
        }
        action.sa_flags = SA_RESTART | SA_SIGINFO
        // A second signal waits until the first one's removal is done (the handler then exits).
        action.sa_mask = fatalSet()
        for signal in fatal {
            var current = sigaction()
            // One inherited as ignored stays ignored (`nohup`). Any other is replaced: at start-up a
            // handler can only be the Swift runtime's backtracer (debug builds put it on SIGQUIT),
            // which would print register memory and let the process go on (att57, M1).
            guard sigaction(signal, nil, &current) == 0, unsafeBitCast(current.__sigaction_handler.sa_handler, to: UInt.self) != 1 else { continue }
            _ = sigaction(signal, &action, nil)
        }
        takeCrashSignalsFromTheBacktracer()
    }

    /// The signals of a crash, on which builds that find `swift-backtrace` (debug builds, `swift
    /// run`) start the runtime's backtracer: it prints each register with the 16 bytes of memory it
    /// points at (a secret's bytes among them) to standard error.
    static let crash = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT]

    /// Gives the crash signals their default action back (the process ends, no core: `Hardening`),
    /// unless the user asked for backtraces in so many words (`SWIFT_BACKTRACE` holding
    /// `enable=yes`, a developer debugging vaultfile itself). The runtime's "Fatal error" line is
    /// still printed before its trap.
    private static func takeCrashSignalsFromTheBacktracer() {
        if let setting = getenv("SWIFT_BACKTRACE").map({ String(cString: $0) }),
           setting.split(separator: ",").contains(where: { $0.filter { $0 != " " } == "enable=yes" }) { return }
        for signal in crash {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, unsafeBitCast(current.__sigaction_handler.sa_handler, to: UInt.self) > 1 else { continue }
            var standard = sigaction()
            standard.__sigaction_handler.sa_handler = SIG_DFL
            sigemptyset(&standard.sa_mask)
            _ = sigaction(signal, &standard, nil)
        }
    }

    /// Removes what is registered; returns how many files and folders were. Async-signal-safe.
    /// A registered child (gpg encrypting a pass store's file) is sent SIGTERM first.
    static func removeRegistered() -> Int {
        let gpg = child.exchange(0, ordering: .sequentiallyConsistent)
        if gpg > 0 { kill(gpg, SIGTERM) }
        var removed = TemporaryFiles.removeAll()
        if folderState.compareExchange(expected: 2, desired: 3, ordering: .sequentiallyConsistent).exchanged {
            _ = vaultfile_remove_tree_signal_safe(folderParent.pointee, folderName, removalDepth)
            removed += 1
        }
        return removed
    }

    // MARK: Deferring signals

    /// Whether a signal is to wait (`deferringSignals`); the signal that came meanwhile, 0 when none.
    private static let deferring = Atomic<Bool>(false)
    private static let pendingSignal = Atomic<Int32>(0)

    /// Runs `body`, a short sequence of renames that must happen whole or not at all (the commit of
    /// a pass store), with the fatal signals held back: one that arrives meanwhile, in any thread, is
    /// acted on when `body` returns or throws, as if it arrived then (what is registered then is
    /// removed, else the signal's default action ends the process).
    static func deferringSignals<T>(_ body: () throws -> T) rethrows -> T {
        deferring.store(true, ordering: .sequentiallyConsistent)
        defer {
            deferring.store(false, ordering: .sequentiallyConsistent)
            let signal = pendingSignal.exchange(0, ordering: .sequentiallyConsistent)
            if signal != 0 { handle(signal, sender: 0) }
        }
        return try body()
    }

    // MARK: The store folder of export --format pass

    /// How many folder levels the handler's removal enters: deeper entries stay (a leftover).
    static let removalDepth: Int32 = 128

    /// 0 none, 1 being filled, 2 registered, 3 taken by `removeRegistered`.
    private static let folderState = Atomic<Int>(0)
    nonisolated(unsafe) private static let folderParent = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    nonisolated(unsafe) private static let folderName = UnsafeMutablePointer<CChar>.allocate(capacity: Int(NAME_MAX) + 1)

    /// Registers the folder `name` of the folder open as `parent` (kept open until `withdrawFolder`),
    /// to be removed with all it holds on a signal; call before creating it. One at a time.
    static func registerFolder(in parent: Int32, name: String) {
        let bytes = Array(name.utf8)
        guard bytes.count <= Int(NAME_MAX), !bytes.contains(0),
              folderState.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return }
        folderParent.pointee = parent
        for (offset, byte) in bytes.enumerated() { folderName[offset] = CChar(bitPattern: byte) }
        folderName[bytes.count] = 0
        folderState.store(2, ordering: .sequentiallyConsistent)
    }

    /// Withdraws the folder's registration (it was renamed into place, or is about to hold what must stay).
    static func withdrawFolder() {
        _ = folderState.compareExchange(expected: 2, desired: 0, ordering: .releasing)
    }

    // MARK: The child writing for the folder

    /// The process id of the child whose output goes into the registered folder; 0 when none.
    private static let child = Atomic<Int32>(0)

    /// Registers `pid` (gpg, started for the pass store's next file) to be sent SIGTERM on a signal.
    /// Withdraw it after it exited and before reaping it (`Subprocess.waitUntilExited`), so that a
    /// reused process id is never signalled.
    static func registerChild(_ pid: pid_t) {
        child.store(pid, ordering: .sequentiallyConsistent)
    }

    /// Withdraws the child (it is about to be reaped).
    static func withdrawChild() {
        child.store(0, ordering: .sequentiallyConsistent)
    }

    // MARK: The command of exec

    /// The process id of `exec`'s command, to which the fatal signals are passed on; 0 when none.
    private static let forwardTarget = Atomic<Int32>(0)

    /// Starts passing the fatal signals on to `pid` (`exec`'s command) instead of ending vaultfile,
    /// which waits for the command and ends as it ended, as `sudo` and `timeout` do. A signal that
    /// the command got itself is not sent a second time (`reachedTheCommand`). Call
    /// `stopForwarding` once the command has exited and before reaping it
    /// (`Subprocess.waitUntilExited`), so that a reused process id is never signalled.
    static func forwardSignals(to pid: pid_t) {
        forwardTarget.store(pid, ordering: .sequentiallyConsistent)
    }

    /// Stops passing signals on: the command has exited.
    static func stopForwarding() {
        forwardTarget.store(0, ordering: .sequentiallyConsistent)
    }

    /// Ends vaultfile with `signal`'s default action, as the command it ran ended. Returns (the
    /// caller then exits 128 + `signal`) only for a signal whose default action does not end a
    /// process. No core is written (`Hardening`).
    static func endBySignal(_ signal: Int32) {
        Glibc.signal(signal, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, signal)
        pthread_sigmask(SIG_UNBLOCK, &only, nil)
        raise(signal)
    }

    /// Whether `signal`, from `sender` (nil: the kernel), reached `command` without vaultfile: the
    /// kernel sends a terminal's Ctrl-C and Ctrl-\\ to its whole foreground process group, the
    /// command included while it stays in vaultfile's group, and a hang-up to that group too unless
    /// vaultfile leads the terminal's session (`ssh -t host vaultfile exec …`, `script -c`, a tmux
    /// pane), when only vaultfile gets it (recheck-exec N1); the command's own signal to
    /// vaultfile is not sent back to it. Anything else is passed on: a supervisor's kill of
    /// vaultfile, a timer of the kernel, a terminal's key when the command left the group. A
    /// signal sent to the whole group (`kill -- -PGID`, `timeout` without `--foreground`) cannot be
    /// told from one sent to vaultfile alone (it would take `sudo`'s rule, not passing on what a
    /// process of vaultfile's own group sent, which leaves a script's `kill $!` waiting forever), so
    /// the command gets that one twice; the man page says so. getpgid and getpgrp are plain system
    /// calls, safe in a handler.
    private static func reachedTheCommand(_ signal: Int32, from sender: pid_t?, command: pid_t) -> Bool {
        guard let sender else {
            let fromTheTerminal = signal == SIGINT || signal == SIGQUIT || (signal == SIGHUP && getsid(0) != getpid())
            return fromTheTerminal && getpgid(command) == getpgrp()
        }
        return sender == command
    }

    // MARK: Private

    /// The handler: passes the signal on to `exec`'s command while there is one; else removes what
    /// is registered and exits 128 + `signal`, or with nothing registered takes the signal's default
    /// action.
    private static func handle(_ signal: Int32, sender: pid_t?) {
        if deferring.load(ordering: .sequentiallyConsistent) {
            _ = pendingSignal.compareExchange(expected: 0, desired: signal, ordering: .sequentiallyConsistent)
            return
        }
        let command = forwardTarget.load(ordering: .sequentiallyConsistent)
        if command > 0 {
            if !reachedTheCommand(signal, from: sender, command: command) { kill(command, signal) }
            return
        }
        if removeRegistered() > 0 { _exit(ExitStatus.killed(by: signal).rawValue) }
        // The default action, taken at once rather than when the handler returns (the handler
        // runs with `signal` blocked); all async-signal-safe.
        endBySignal(signal)
    }
}
