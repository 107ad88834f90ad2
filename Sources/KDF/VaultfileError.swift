// MARK: - Errors shared by every module

/// The process exit statuses of `vaultfile`, a documented contract for scripts.
///
/// Library errors carry one so that the CLI decides the status in one place
/// without knowing each error's details.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what was asked.
    case success = 0
    /// The named entry (or field) does not exist.
    case notFound = 1
    /// Any other failure: I/O, permissions, a missing vault, bad input.
    case failure = 2
    /// No keyslot opens with the given password.
    case wrongPassword = 3
    /// The vault is damaged, tampered with, truncated, or not a vault.
    case damaged = 4
    /// The vault's lock was not acquired in time.
    case busy = 5
    /// A limit was exceeded: a KDF cap or a size limit.
    case overLimit = 6
    /// The command line was malformed.
    case usage = 64
}

/// An error that can be shown to a person: what happened, what to do, and how to exit.
///
/// `description` never contains a secret. `hint`, when present, names the next step.
public protocol VaultfileError: Error, CustomStringConvertible {
    /// A next step the user can take, or `nil` when there is none.
    var hint: String? { get }
    /// The exit status the CLI uses for this error.
    var exitStatus: ExitStatus { get }
}
