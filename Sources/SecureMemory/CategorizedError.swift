// MARK: - Errors shared by every module

/// What kind of failure an error is, so that a caller can react to it without knowing each error's cases.
///
/// Library errors say what happened and which category it falls in; the command line alone
/// decides what a category means to a user (its exit status, and the hint it prints).
public enum ErrorCategory: Sendable, Hashable, CaseIterable {
    /// A named entry (or field) is not in the vault.
    case notFound
    /// No keyslot opens with the given password.
    case wrongPassword
    /// The file is not a vault, or it is damaged, tampered with or truncated.
    case damaged
    /// The vault uses a format version or a feature this build cannot read.
    case unsupported
    /// The vault's lock was not acquired in time.
    case busy
    /// A limit was exceeded: a KDF cap or a size or count limit.
    case overLimit
    /// A name, setting or option value the caller chose breaks the rules.
    case invalidArgument
    /// Data read from a file or a stream (an import file, a template) is malformed or unusable.
    case invalidInput
    /// The operation clashes with what exists: an entry or a file of that name, a change made
    /// on disk meanwhile, vaults that are not one vault, two entries for one variable.
    case conflict
    /// The operation is not done without an explicit option or a step the user takes first.
    case refused
    /// A write to a copy older than one seen before, which would lose the newer copy's changes.
    case stale
    /// A system call, or another program, failed.
    case io
    /// A linked library failed (for example, out of memory) or a caller broke a documented precondition.
    case internalFailure
}

/// An error that says what happened and what kind of failure it is.
///
/// `description` states the failure with its data (names, paths, numbers) and never contains
/// a secret. It names no option of a program: what to do next is the caller's to say.
public protocol CategorizedError: Error, CustomStringConvertible {
    /// The kind of failure, for callers that react to kinds rather than cases.
    var category: ErrorCategory { get }
}
