import ArgumentParser
import SecureMemory

// MARK: - Exit statuses

/// Every process exit status of `vaultfile`, a documented contract for scripts (`vaultfile --help`,
/// man/vaultfile.1, the README): the one owner of the numbers. Callers name a case, never a number
/// (`throw ExitCode(.conflicts)`, `_exit(ExitStatus.killed(by: signal).rawValue)`).
enum ExitStatus: Equatable {
    /// The command did what was asked (0).
    case success
    /// The named entry (or field) does not exist (1).
    case notFound
    /// A merge left conflicts, or a refusal a person settles as one, such as a lowered KDF (1, as
    /// git expects of a merge driver).
    case conflicts
    /// Any other failure: I/O, permissions, a missing vault, bad input (2).
    case failure
    /// No keyslot opens with the given password (3).
    case wrongPassword
    /// The vault is damaged, tampered with, truncated, or not a vault (4).
    case damaged
    /// The vault's lock was not acquired in time (5).
    case busy
    /// A limit was exceeded: a KDF cap or a size limit (6).
    case overLimit
    /// A write to a copy older than one seen on this machine was refused (`--allow-rollback`) (7).
    case staleCopy
    /// `audit` found a weak, reused, old or breached secret (8), so that CI can gate on it.
    case auditFound
    /// The command line was malformed (64).
    case usage
    /// `exec`: the command was found but cannot be run (126, as in shells).
    case cannotRun
    /// `exec`: the command was not found (127, as in shells).
    case commandNotFound
    /// Ended by `signal` (128 + its number, as shells report it): SIGINT at a prompt is 130.
    case killed(by: Int32)
    /// `exec`: the command's own status, passed on.
    case command(Int32)

    /// The number the process exits with.
    var rawValue: Int32 {
        switch self {
        case .success: return 0
        case .notFound, .conflicts: return 1
        case .failure: return 2
        case .wrongPassword: return 3
        case .damaged: return 4
        case .busy: return 5
        case .overLimit: return 6
        case .staleCopy: return 7
        case .auditFound: return 8
        case .usage: return 64
        case .cannotRun: return 126
        case .commandNotFound: return 127
        case .killed(let signal): return 128 + signal
        case .command(let status): return status
        }
    }

    /// The status of every error of `category`.
    init(_ category: ErrorCategory) {
        switch category {
        case .notFound: self = .notFound
        case .wrongPassword: self = .wrongPassword
        case .damaged, .unsupported: self = .damaged
        case .busy: self = .busy
        case .overLimit: self = .overLimit
        case .stale: self = .staleCopy
        case .invalidArgument: self = .usage
        case .invalidInput, .conflict, .refused, .io, .internalFailure: self = .failure
        }
    }
}

extension ExitCode {
    /// ArgumentParser's exit of `status`.
    init(_ status: ExitStatus) { self.init(status.rawValue) }
}
