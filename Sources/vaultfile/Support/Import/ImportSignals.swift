#if canImport(Glibc)
import Glibc
#endif

// MARK: - Signals while the user's tools decrypt a store

/// Keeps a signal from ending vaultfile while gpg or age children run (`ParallelDecryption`):
/// the signals whose default action ends the process are blocked in the calling thread for the
/// run and taken with `sigtimedwait(2)` between reads, so the run can end and reap its children
/// before exiting. Signals inherited as ignored (`nohup`) stay ignored; children start with the
/// caller's own mask (`Subprocess`), so gpg still gets Ctrl-C from the terminal when it runs in
/// vaultfile's foreground group (elsewhere each child leads its own group: `ParallelDecryption`).
///
/// The mask is the calling thread's: it holds because `import` reads its source before it opens
/// the vault, so no other thread (Argon2's, Dispatch's) exists yet to take the signal instead.
struct ImportSignals {
    private var set = sigset_t()
    private var previous = sigset_t()

    /// Blocks the signals in this thread until `restore`: those that end a process by default, as
    /// for `edit` (`SignalCleanup.fatal`).
    static func block() -> ImportSignals {
        var signals = ImportSignals()
        signals.set = SignalCleanup.fatalSet(leavingOutIgnored: true)
        _ = pthread_sigmask(SIG_BLOCK, &signals.set, &signals.previous)
        return signals
    }

    /// A signal that arrived since `block`, taken (no longer pending), or nil.
    func taken() -> Int32? {
        var set = self.set
        var info = siginfo_t()
        var now = timespec(tv_sec: 0, tv_nsec: 0)
        let signal = sigtimedwait(&set, &info, &now)
        return signal > 0 ? signal : nil
    }

    /// Unblocks the signals: one that arrived after the last `taken` is delivered now, before
    /// anything is sealed, and acts as it would have.
    func restore() {
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
