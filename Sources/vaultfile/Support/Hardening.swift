import CPlatform
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Process hardening

/// Steps taken before any secret is read.
enum Hardening {
    /// Disables core dumps (`setrlimit(RLIMIT_CORE, 0)`) and makes the process
    /// non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`), which also keeps other
    /// processes of the same user from attaching with ptrace.
    static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = vaultfile_set_not_dumpable()
    }
}
