import CPlatform
import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Process hardening

/// Steps taken before any secret is read.
enum Hardening {
    /// Records what vaultfile inherited (`Inherited`), then disables core dumps (the soft
    /// `RLIMIT_CORE` to 0) and makes the process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`),
    /// which also keeps other processes of the same user from attaching with ptrace.
    ///
    /// Only the soft limit is lowered: a hard limit once lowered can never be raised again, and
    /// every child gets the caller's limits back (`Subprocess`). Non-dumpability alone already
    /// stops core dumps; the soft limit is the second lock.
    ///
    /// Also ignores SIGXFSZ, so a write past `ulimit -f` fails with EFBIG and the vault is left
    /// as it was, instead of the process dying mid-write. Installs the handler that removes a
    /// half-written temporary file on a signal (`SignalCleanup`), and starts libcrypto without
    /// openssl.cnf or `OPENSSL_CONF` (`LibCrypto.start`). Finally wipes what a killed
    /// `edit` left in its private folder (`PrivateTemporaryFolder.sweepLeftovers`).
    static func apply() {
        Inherited.record()
        var limit = Inherited.coreLimit
        limit.rlim_cur = 0
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit)
        _ = vaultfile_set_not_dumpable()
        signal(SIGXFSZ, SIG_IGN)
        // An ignored SIGCHLD (inherited through exec) has the kernel reap every child unasked:
        // waitpid would then fail and a child's ending be lost (exec's status, a tool's failure).
        signal(SIGCHLD, SIG_DFL)
        SignalCleanup.install()
        LibCrypto.start()
        EnvironmentPassword.take()
        EnvironmentIdentity.take()
        PrivateTemporaryFolder.sweepLeftovers()
    }
}

// MARK: - What vaultfile inherited

/// The process state vaultfile started with, recorded before anything changes it, so that every
/// child process starts with it again (`Subprocess.start`): the soft core-file limit, the signal
/// mask, which signals were ignored, and the open descriptors.
enum Inherited {
    /// The signals whose disposition vaultfile may change: SIGXFSZ (ignored at start-up), SIGINT
    /// and SIGTERM (a password prompt restores the terminal on them), SIGHUP, SIGINT and SIGTERM
    /// (blocked while `edit` holds a private file), SIGPIPE. The handler of `SignalCleanup`, on
    /// these and the other fatal signals, needs no reset: exec gives a child the default again.
    static let trackedSignals: [Int32] = [SIGHUP, SIGINT, SIGPIPE, SIGTERM, SIGXFSZ]

    /// `RLIMIT_CORE` as vaultfile found it.
    nonisolated(unsafe) private(set) static var coreLimit = rlimit(rlim_cur: 0, rlim_max: 0)
    /// The signal mask vaultfile started with.
    nonisolated(unsafe) private(set) static var signalMask = sigset_t()
    /// Those of `trackedSignals` that were ignored at start-up.
    nonisolated(unsafe) private(set) static var ignoredSignals: [Int32] = []
    /// The descriptors open at start-up (nil when /proc is not mounted); they pass to children untouched.
    nonisolated(unsafe) private(set) static var descriptors: Set<Int32>?
    /// Inherited descriptors vaultfile used up (`--password-fd`): no child gets them.
    nonisolated(unsafe) private(set) static var consumedDescriptors: Set<Int32> = []

    /// Records the state; called first thing in `main`.
    static func record() {
        _ = getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &coreLimit)
        _ = pthread_sigmask(SIG_SETMASK, nil, &signalMask)
        ignoredSignals = trackedSignals.filter(isIgnoredNow)
        descriptors = openDescriptors()
    }

    /// Whether `signal` was ignored when vaultfile started.
    static func wasIgnored(_ signal: Int32) -> Bool { ignoredSignals.contains(signal) }

    /// Closes an inherited descriptor that held a secret, after it was read to its end, so that no
    /// child can read it again (through `/proc/self/fd/N` or by seeking back). Standard input,
    /// output and error stay open in vaultfile; children get `/dev/null` in their place.
    static func consume(_ fd: Int32) {
        consumedDescriptors.insert(fd)
        guard fd > STDERR_FILENO else { return }
        close(fd)
        descriptors?.remove(fd)
    }

    /// The descriptors open now, from `/proc/self/fd`; nil when it cannot be read.
    static func openDescriptors() -> Set<Int32>? {
        guard let handle = opendir("/proc/self/fd") else { return nil }
        defer { closedir(handle) }
        let own = dirfd(handle)
        var result = Set<Int32>()
        while let entry = readdir(handle) {
            let fd = withUnsafeBytes(of: entry.pointee.d_name) { bytes -> Int32? in
                var value: Int32 = 0
                for byte in bytes.prefix(while: { $0 != 0 }) {
                    guard (0x30...0x39).contains(byte), value < 100_000_000 else { return nil }
                    value = value * 10 + Int32(byte - 0x30)
                }
                return bytes.first == 0 ? nil : value
            }
            if let fd, fd != own { result.insert(fd) }
        }
        return result
    }

    /// Runs `body` (a spawn) with the soft core-file limit the caller gave vaultfile, so the child
    /// inherits it; lowers it again at once. `posix_spawn` cannot set a child's limits. For the
    /// microseconds in between the process stays non-dumpable (`prctl`), so it still writes no core.
    static func withCallerCoreLimit<R>(_ body: () -> R) -> R {
        var caller = coreLimit
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &caller)
        defer {
            var lowered = coreLimit
            lowered.rlim_cur = 0
            _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &lowered)
        }
        return body()
    }

    /// Sets the signals that were ignored at start-up back to ignored (a prompt leaves SIGINT and
    /// SIGTERM at their default), so a child, which inherits "ignored", gets what vaultfile got.
    static func reignoreSignals() {
        for signal in ignoredSignals where !isIgnoredNow(signal) && isDefaultNow(signal) {
            Glibc.signal(signal, SIG_IGN)
        }
    }

    private static func isIgnoredNow(_ signal: Int32) -> Bool { handlerAddress(signal) == 1 }
    private static func isDefaultNow(_ signal: Int32) -> Bool { handlerAddress(signal) == 0 }

    /// The current handler as a number: 0 is SIG_DFL, 1 is SIG_IGN.
    private static func handlerAddress(_ signal: Int32) -> UInt {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return 0 }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: UInt.self)
    }
}

// MARK: - The password in the environment

/// `VAULTFILE_PASSWORD`, moved out of the environment at start-up into guarded
/// memory, so no child process (a password command, an editor) inherits it.
enum EnvironmentPassword {
    nonisolated(unsafe) private static var value: SecureBytes?

    /// Copies the variable into guarded memory and removes it from the environment.
    static func take() {
        guard let raw = getenv("VAULTFILE_PASSWORD") else { return }
        value = SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: strlen(raw)))
        memset(raw, 0, strlen(raw))
        unsetenv("VAULTFILE_PASSWORD")
    }

    /// The password taken at start-up, if the variable was set.
    static var password: SecureBytes? { value }
}
