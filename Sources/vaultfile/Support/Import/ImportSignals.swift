import CPlatform
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Signals while the user's tools decrypt a store

/// Keeps a signal from ending vaultfile while gpg or age children run (`ParallelDecryption`):
/// the signals whose default action ends the process are blocked in the calling thread for the
/// run and taken between reads, so the run can end and reap its children before exiting. Signals
/// inherited as ignored (`nohup`) stay ignored; children start with the caller's own mask
/// (`Subprocess`), so gpg still gets Ctrl-C from the terminal when it runs in vaultfile's
/// foreground group (elsewhere each child leads its own group: `ParallelDecryption`).
///
/// SIGCHLD (a child stopped, `ParallelDecryption`'s watch for a tool stopped by the terminal) and
/// SIGCONT (vaultfile continued: `fg`) are blocked too, and all of them are read from a
/// `signalfd(2)` (`descriptor`) that the run's `poll(2)` waits on with its pipes: the run sleeps
/// until something happens, rather than waking to look.
///
/// The mask is the calling thread's: it holds because `import` reads its source before it opens
/// the vault, so no other thread (Argon2's, Dispatch's) exists yet to take the signal instead.
struct ImportSignals {
    /// The signals that end the run (`fatalSet`).
    private var fatal = sigset_t()
    private var previous = sigset_t()
    /// Readable while a watched signal is pending (`signalfd(2)`, non-blocking); -1 when the
    /// kernel gave none: the run then wakes every 50 ms to look (`taken`).
    private(set) var descriptor: Int32 = -1

    /// What arrived since the last look.
    struct Arrived {
        /// A signal that ends the run, taken (no longer pending), or nil.
        var fatal: Int32?
        /// Whether a child may have changed state (SIGCHLD) or vaultfile was continued (SIGCONT):
        /// always true without a `descriptor`, which cannot tell.
        var children = false
    }

    /// Blocks the signals in this thread until `restore`: those that end a process by default, as
    /// for `edit` (`SignalCleanup.fatal`), and SIGCHLD and SIGCONT.
    static func block() -> ImportSignals {
        var signals = ImportSignals()
        signals.fatal = SignalCleanup.fatalSet(leavingOutIgnored: true)
        var watched = signals.fatal
        sigaddset(&watched, SIGCHLD)
        sigaddset(&watched, SIGCONT)
        _ = pthread_sigmask(SIG_BLOCK, &watched, &signals.previous)
        signals.descriptor = vaultfile_signalfd(&watched)
        return signals
    }

    /// Takes every watched signal that arrived since `block` or the last call.
    func taken() -> Arrived {
        guard descriptor >= 0 else {
            var set = fatal
            var info = siginfo_t()
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            let signal = sigtimedwait(&set, &info, &now)
            return Arrived(fatal: signal > 0 ? signal : nil, children: true)
        }
        var arrived = Arrived()
        while true {
            let signal = vaultfile_signalfd_take(descriptor)
            guard signal > 0 else { break }
            if signal == SIGCHLD || signal == SIGCONT {
                arrived.children = true
            } else if arrived.fatal == nil {
                arrived.fatal = signal
            }
        }
        return arrived
    }

    /// Unblocks the signals: one that arrived after the last `taken` is delivered now, before
    /// anything is sealed, and acts as it would have (a SIGCHLD or SIGCONT left pending does nothing).
    func restore() {
        if descriptor >= 0 { close(descriptor) }
        var previous = self.previous
        _ = pthread_sigmask(SIG_SETMASK, &previous, nil)
    }

    /// Ends vaultfile as `edit` does on a signal: exit status 128 + the signal, after one line on
    /// stderr saying so (cold60 L3). Called from the normal code path once the children are ended
    /// and reaped, never from a signal handler: writing a message there would not be safe.
    static func exit(_ signal: Int32) -> Never {
        Messages.info("vaultfile: interrupted (\(name(of: signal))): nothing was imported")
        _exit(ExitStatus.killed(by: signal).rawValue)
    }

    /// The name of `signal` (`SIGINT`), or its number for one not among `SignalCleanup.fatal`.
    static func name(of signal: Int32) -> String {
        let names: [Int32: String] = [SIGTERM: "SIGTERM", SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGUSR1: "SIGUSR1",
                                      SIGUSR2: "SIGUSR2", SIGALRM: "SIGALRM", SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF",
                                      SIGXCPU: "SIGXCPU", SIGPWR: "SIGPWR"]
        return names[signal] ?? "signal \(signal)"
    }
}
