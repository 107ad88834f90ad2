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
/// caught signals).
enum SignalCleanup {
    /// The signals whose default action ends the process (Ctrl-\\ sends SIGQUIT), not only the
    /// three a terminal sends most; `edit` and `import` take the same ones.
    static let fatal = [SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPWR]

    /// Installs the handler; called once, first thing in `main` (`Hardening.apply`).
    static func install() {
        TemporaryFiles.prepare()
        _ = folderState.load(ordering: .relaxed)
        _ = child.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in SignalCleanup.handle(signal) }
        action.sa_flags = SA_RESTART
        // A second signal waits until the first one's removal is done (the handler then exits).
        sigemptyset(&action.sa_mask)
        for signal in fatal { sigaddset(&action.sa_mask, signal) }
        for signal in fatal {
            var current = sigaction()
            // Only a default disposition: one inherited as ignored stays ignored.
            guard sigaction(signal, nil, &current) == 0, unsafeBitCast(current.__sigaction_handler.sa_handler, to: UInt.self) == 0 else { continue }
            _ = sigaction(signal, &action, nil)
        }
    }

    /// Removes what is registered; returns how many files and folders were. Async-signal-safe.
    /// A registered child (gpg encrypting a pass store's file) is sent SIGTERM first.
    static func removeRegistered() -> Int {
        let gpg = child.exchange(0, ordering: .sequentiallyConsistent)
        if gpg > 0 { kill(gpg, SIGTERM) }
        var removed = TemporaryFiles.removeAll()
        if folderState.compareExchange(expected: 2, desired: 3, ordering: .sequentiallyConsistent).exchanged {
            _ = vaultfile_remove_tree_signal_safe(folderParent.pointee, folderName, 64)
            removed += 1
        }
        return removed
    }

    // MARK: The store folder of export --format pass

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

    // MARK: Private

    /// The handler: removes what is registered and exits 128 + `signal`; with nothing registered,
    /// takes the signal's default action (delivered again when the handler returns).
    private static func handle(_ signal: Int32) {
        if removeRegistered() > 0 { _exit(ExitStatus.killed(by: signal).rawValue) }
        Glibc.signal(signal, SIG_DFL)
        raise(signal)
    }
}
