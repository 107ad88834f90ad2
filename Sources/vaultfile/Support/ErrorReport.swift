import KDF
import VaultFile

// MARK: - Exit statuses

/// The process exit statuses of `vaultfile`, a documented contract for scripts
/// (`vaultfile --help`, man/vaultfile.1).
enum ExitStatus: Int32, CaseIterable {
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

    /// The status of every error of `category`.
    init(_ category: ErrorCategory) {
        switch category {
        case .notFound: self = .notFound
        case .wrongPassword: self = .wrongPassword
        case .damaged, .unsupported: self = .damaged
        case .busy: self = .busy
        case .overLimit: self = .overLimit
        case .invalidArgument: self = .usage
        case .invalidInput, .conflict, .refused, .io, .internalFailure: self = .failure
        }
    }
}

// MARK: - What the user is told

/// What the command line makes of an error: the message, the next step, and the exit status.
///
/// The one place that turns errors into `vaultfile: error: …`, `vaultfile: hint: …` and a status:
/// libraries say what happened and its category; every hint (and every option it names) is here.
struct ErrorReport: Equatable {
    /// What happened; never a secret.
    let description: String
    /// What the user can do next, or nil.
    let hint: String?
    /// The process exit status.
    let status: ExitStatus

    /// The report of `error`, or nil for an error that is not vaultfile's (ArgumentParser's own
    /// `ExitCode`, `ValidationError` and parse errors, which it reports itself).
    init?(_ error: any Error) {
        switch error {
        case let batch as BatchError:
            let inner = ErrorReport(batch.underlying)
                ?? ErrorReport(description: String(describing: batch.underlying), hint: nil, status: .failure)
            self.init(description: "line \(batch.line): \(inner.description); nothing was changed", hint: inner.hint, status: inner.status)
        case let error as any CategorizedError:
            self.init(description: error.description, hint: Self.hint(for: error), status: ExitStatus(error.category))
        default:
            return nil
        }
    }

    init(description: String, hint: String?, status: ExitStatus) {
        self.description = description
        self.hint = hint
        self.status = status
    }

    // MARK: Hints

    /// The next step for `error`, by its type.
    static func hint(for error: any CategorizedError) -> String? {
        switch error {
        case let error as VaultError: return hint(for: error)
        case let error as KDFError: return hint(for: error)
        case let error as CLIError: return hint(for: error)
        default: return nil  // XChaCha20Poly1305.Failure: a bug or damage, nothing for the user to do
        }
    }

    static func hint(for error: VaultError) -> String? {
        switch error {
        case .notAVault: return "check the path; vault files start with the bytes \\x89VAULT\\r\\n"
        case .unsupportedVersion, .unsupportedFeature: return "upgrade vaultfile to open this vault"
        case .wrongPassword: return "check the password source (--password-file, --password-fd, --password-command, VAULTFILE_PASSWORD)"
        case .headerDamaged, .headerTampered, .payloadDamaged, .contentsDamaged:
            return "restore the vault from a backup or an earlier git commit"
        case .vaultMissing: return "create one with 'vaultfile init', or name another with --vault or VAULTFILE_PATH"
        case .vaultExists: return "choose another path, or remove the file first"
        case .busy: return "wait for the other process, or raise the wait with --lock-timeout"
        case .changedOnDisk: return "run the command again"
        case .entryNotFound, .referenceNotFound: return "'vaultfile list' shows the names in the vault"
        case .entryExists: return "pass --force to replace it"
        case .nameTwin(let name, let existing):
            return "use the existing entry's name, or give it the new spelling first: "
                + "vaultfile mv \(EntryName.spelledOut(existing)) \(EntryName.spelledOut(name))"
        case .environmentVariableClash:
            return "each variable holds one entry: rename one of the two, or leave one out with --prefix (or exec's --only)"
        case .mergeRefused(.unrelatedVaults):
            return "keep one side with 'git checkout --ours FILE' or '--theirs FILE', then move entries with export/import"
        case .mergeRefused(.passwordFails):
            return "merge with the password of each side: check out that side, run 'vaultfile passwd' to the same password, and merge again"
        case .mergeRefused(.lowerKeyDerivation):
            return "if that change was meant, merge again with VAULTFILE_MERGE_ALLOW_WEAK=1 in the environment (after 'git merge --abort'); "
                + "else strengthen it on that branch with 'vaultfile passwd'"
        case .invalidName, .malformedInput, .limitExceeded, .notARegularFile, .io, .notDurable: return nil
        }
    }

    static func hint(for error: KDFError) -> String? {
        switch error {
        case .memoryOverCap(let asked, _):
            return "if you trust this file, raise the limit with --kdf-max-memory \(ByteSize.argument(asked)) (or VAULTFILE_KDF_MAX_MEMORY)"
        case .workOverCap(let asked, _):
            let bytes = asked.multipliedReportingOverflow(by: 1024).partialValue
            return "if you trust this file, raise the limit with --kdf-max-work \(ByteSize.argument(bytes)) (or VAULTFILE_KDF_MAX_WORK)"
        case .workTotalOverCap(let spent, let asked, _):
            let total = ByteSize.bytes(kibibytes: KDFError.total(spent, asked))
            return "if you trust this file, raise the limit on the total with --kdf-max-work \(ByteSize.argument(total)) (or VAULTFILE_KDF_MAX_WORK)"
        case .iterationsOverCap(let asked, _):
            return "if you trust this file, raise the limit with --kdf-max-iterations \(asked) (or VAULTFILE_KDF_MAX_ITERATIONS)"
        case .iterationsTotalOverCap(let spent, let asked, _):
            return "if you trust this file, raise the limit on the total with --kdf-max-iterations \(KDFError.total(spent, asked)) (or VAULTFILE_KDF_MAX_ITERATIONS)"
        case .belowMinimum: return "use stronger settings, or pass --allow-weak-kdf if you accept faster guessing"
        case .unknownAlgorithm: return "upgrade vaultfile"
        case .invalidParameters, .invalidSaltLength, .derivationFailed: return nil
        }
    }

    static func hint(for error: CLIError) -> String? {
        switch error {
        case .noPasswordSource: return "use --password-file FILE, --password-fd N, --password-command CMD or VAULTFILE_PASSWORD"
        case .passwordCommandFailed: return "run the command by hand to see why; its stdout must be the password"
        case .refused(_, let hint): return hint
        case .passwordSourceFailed, .emptyPassword, .passwordsDiffer, .inputFailed, .inputTooLarge, .io, .outputFailed, .invalidArgument:
            return nil
        }
    }
}
