import CPlatform
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Process hardening

/// Steps taken before any secret is read.
enum Hardening {
    /// Disables core dumps (`setrlimit(RLIMIT_CORE, 0)`) and makes the process
    /// non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`), which also keeps other
    /// processes of the same user from attaching with ptrace.
    ///
    /// Also ignores SIGXFSZ, so a write past `ulimit -f` fails with EFBIG and the
    /// vault is left as it was, instead of the process dying mid-write.
    static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = vaultfile_set_not_dumpable()
        signal(SIGXFSZ, SIG_IGN)
        EnvironmentPassword.take()
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
