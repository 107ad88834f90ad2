import KDF
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Errors of the command line

/// Failures that belong to the command line: password sources, input, output.
enum CLIError: VaultfileError {
    /// No password source was given and there is no terminal to prompt on.
    case noPasswordSource
    /// A password source could not be read.
    case passwordSourceFailed(String)
    /// The password (or a value typed at a prompt) is empty.
    case emptyPassword
    /// The two typed passwords differ.
    case passwordsDiffer
    /// `--password-command` exited unsuccessfully.
    case passwordCommandFailed(status: Int32)
    /// Reading input (a value) failed.
    case inputFailed(String)
    /// Writing standard output failed.
    case outputFailed(errno: Int32)
    /// A value given on the command line or in the environment is malformed.
    case invalidArgument(String)
    /// Refused to do something without an explicit option.
    case refused(String, hint: String)

    var description: String {
        switch self {
        case .noPasswordSource: return "no password source, and no terminal to ask on"
        case .passwordSourceFailed(let why): return "could not read the password: \(why)"
        case .emptyPassword: return "the password is empty"
        case .passwordsDiffer: return "the two passwords differ"
        case .passwordCommandFailed(let status): return "the password command failed (exit status \(status))"
        case .inputFailed(let why): return why
        case .outputFailed(let code): return "writing to standard output failed: \(String(cString: strerror(code)))"
        case .invalidArgument(let why): return why
        case .refused(let why, _): return why
        }
    }

    var hint: String? {
        switch self {
        case .noPasswordSource:
            return "use --password-file FILE, --password-fd N, --password-command CMD or VAULTFILE_PASSWORD"
        case .passwordCommandFailed: return "run the command by hand to see why; its stdout must be the password"
        case .refused(_, let hint): return hint
        default: return nil
        }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .invalidArgument: return .usage
        default: return .failure
        }
    }
}
