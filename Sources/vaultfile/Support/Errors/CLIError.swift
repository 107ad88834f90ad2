import KDF
import SecureMemory
import VaultAgent
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Errors of the command line

/// Failures that belong to the command line: password sources, its own files, input, output.
///
/// Its hints and exit statuses are decided in `ErrorReport`, with those of every other error.
enum CLIError: CategorizedError {
    /// No password source was given and there is no terminal to prompt on.
    case noPasswordSource
    /// No password was given for another tool's file (`what`: "the KeePass database F") and there is
    /// no terminal to ask on; `options` are the options that give it (not the vault's own).
    case noForeignPasswordSource(what: String, options: String)
    /// No source opened the vault: the one wording of that (`NothingOpens`), naming the sources tried.
    case nothingOpens(NothingOpens)
    /// git's credential helper (`operation`: `git-credential-get`, …) found the vault at `path`
    /// locked: the agent does not hold it (`agentMiss` says why, when its socket exists) and no
    /// source in the environment opens it, and the helper never prompts for a write (nor for `get`
    /// under GIT_TERMINAL_PROMPT=0). `vaultOption`: the helper's `--vault`, named in the hint.
    case gitCredentialVaultLocked(path: String, vaultOption: String?, operation: String, agentMiss: AgentMiss?)
    /// Every password typed at the prompt (`tries` of them) was wrong.
    case typedPasswordWrong(tries: Int)
    /// A protected identity (`identity`, its source) needs its passphrase: no passphrase source
    /// was given and there is no terminal to ask on.
    case noIdentityPassphraseSource(identity: String)
    /// The passphrase source of protected identities (`source`) could not be read (`why`).
    case identityPassphraseSourceFailed(source: String, why: String)
    /// `exec --prefix` matched no entry (a typo would otherwise run the command with no secrets).
    case execMatchesNothing(prefix: String)
    /// init, passwd or slot add was asked for KDF `settings` that the caps on open refuse (`cap`):
    /// every later open of the vault would fail.
    case kdfOverOpenCaps(settings: String, cap: KDFError)
    /// A password source could not be read.
    case passwordSourceFailed(String)
    /// The password (or a value typed at a prompt) is empty.
    case emptyPassword
    /// `tool` (gpg, age) could not decrypt `file` of an import: it exited with `status` (its own
    /// message went to stderr before), or its output passed `limit` bytes (`status` nil).
    case sourceDecryptionFailed(tool: String, file: String, status: Int32?, limit: Int)
    /// `import --format sops`: no age stanza of `file`'s data key opened with the identities in `keys`.
    case sopsDataKeyNotOpened(file: String, keys: String)
    /// `import --format passage`: the identities `file` is encrypted with a passphrase (`age -p`)
    /// and there is no terminal to ask it on; no age ran.
    case identitiesFileNoTerminal(file: String)
    /// `import --format passage`: no passphrase typed (`tries` of them) decrypts the identities `file`.
    case identitiesFilePassphraseWrong(file: String, tries: Int)
    /// `export --format pass`: gpg could not encrypt the file of `entry` (it exited with `status`,
    /// its own message on stderr before, or wrote nothing); no store was written (exit 2).
    case storeEncryptionFailed(entry: String, status: Int32)
    /// The `files` files `tool` decrypted for an import came to more than `limit` bytes in all (exit 6).
    case sourceDecryptionTotalOverLimit(tool: String, files: Int, limit: Int)
    /// The two typed passwords differ.
    case passwordsDiffer
    /// `--password-command` exited unsuccessfully.
    case passwordCommandFailed(status: Int32)
    /// Reading input (a value) failed.
    case inputFailed(String)
    /// Input (a value, a file) holds more than `limit` bytes, the largest value a vault holds.
    case inputTooLarge(what: String, limit: Int)
    /// A system call on one of the command line's own files failed (not the vault's).
    case io(operation: String, path: String, errno: Int32)
    /// Writing standard output failed.
    case outputFailed(errno: Int32)
    /// A value given on the command line or in the environment is malformed.
    case invalidArgument(String)
    /// A child process could not be started (`posix_spawnp` failed with `errno`); E2BIG is told
    /// apart, since `exec` then says how to export fewer variables.
    case cannotRun(command: String, errno: Int32)
    /// Refused to do something without an explicit option.
    case refused(String, hint: String)
    /// `import`: the input is not in the format `--format` names; it looks like `looksLike` (exit 2).
    case importFormatMismatch(source: String, given: String, looksLike: String, hint: String)
    /// `import --format auto` (or no `--format`): the format cannot be told from the content (exit 64).
    case importFormatUnknown(source: String, why: String, hint: String? = nil)
    /// `import`: `source` could not be read as `format` (`why`: the reader's message, its line
    /// when it has one): nothing was imported (the exit status of the reader's own error).
    case importUnreadable(source: String, format: String, why: String, hint: String?)
    /// `search --regex` spent its work budget (`LinearRegex.WorkBudget`): more than `initialSteps`
    /// steps of its automaton plus `stepsPerCharacter` for each character read.
    case regexWorkLimit(pattern: String, initialSteps: Int, stepsPerCharacter: Int)
    /// `search` found no entry that matches `pattern`.
    case noMatch(pattern: String, searchedValues: Bool, caseSensitive: Bool)
    /// The value (or `field`) of entry `name` is binary (not UTF-8, or control characters other
    /// than tab and newline) and was about to be written to a terminal.
    case binaryOnTerminal(name: String, field: String?)
    /// The value read for entry `name` (or its `field`) is empty.
    case emptyValue(name: String, field: String?)
    /// The first word is not a verb; `suggestions` are the verbs it is close to.
    case unknownVerb(String, suggestions: [String])
    /// Standard input was read already (for `reader`, e.g. "the value"), and `second` wants it too.
    case standardInputTaken(reader: String, second: String)
    /// The agent could not be started, did not answer, or answered with a failure.
    case agentFailed(String)
    /// The agent answered in protocol `agentVersion`, not this build's: it is of another release
    /// (a running agent outlives an upgrade of the binary). Never a silent fall-back to a password.
    case agentOfAnotherRelease(agentVersion: UInt8)
    /// `unlock`: the agent holds the vault at `path` under other keys than the one unlocked, so it
    /// changed nothing (an `add` must carry a key the agent holds for the vault).
    case agentHoldsOtherKeys(path: String)
    /// `unlock`: the vault's confirm command refused a change that weakens what the agent holds.
    case agentChangeDenied(path: String)
    /// A write through the agent to the signed vault at `path`: the agent would not sign its seal
    /// (no delegation, expired, the delegating slot gone, the key not held). Nothing was written.
    case agentCannotSign(path: String, reason: AgentSignRefusal)
    /// A write through the agent: the vault's confirm command refused the signature. Nothing was written.
    case agentSignDenied(path: String)
    /// `get`/`share --field label`: the entry has no field `label`, and an import kept that label
    /// for several fields (`fields`, the names they are stored under), so it names none of them.
    case fieldLabelShared(entry: String, label: String, fields: [String])
    /// `name` names no entry, but `count` entries lie under the folder `name/` (get, show).
    case folderNotEntry(name: String, count: Int)
    /// `name` names neither an entry nor a folder with entries under it (ls).
    case noEntryOrFolder(String)
    /// No entry lies under `folder` (rm -r); `entry` is the entry NAME that was looked for too, if any.
    case nothingUnder(folder: String, entry: String?)
    /// A `vf://` reference (`read`, `exec --env-file`) names an entry or field the vault lacks:
    /// `reference` as written back, `why` the lookup's own words, `place` where it was written (or nil).
    case referenceNotFound(reference: String, why: String, place: String?)
    /// A command that writes a vault, with a state folder another user owns or others may write.
    case stateFolderUnsafe(StateFolder.Unsafe)
    /// The age plugin runs where another program can read its memory (`why`: a tracer, a loader variable).
    case pluginObserved(String)

    var description: String {
        switch self {
        case .noPasswordSource: return "no password source, and no terminal to ask on"
        case .noForeignPasswordSource(let what, _): return "no password for \(what), and no terminal to ask on"
        case .nothingOpens(let report): return report.description
        case .gitCredentialVaultLocked(let path, _, let operation, let agentMiss):
            let outcome = operation.hasSuffix("get") ? "nothing was answered" : operation.hasSuffix("store") ? "nothing was stored" : "nothing was erased"
            let why: String
            switch agentMiss {
            case .notHeld?: why = "the agent does not hold it (it was locked, or its idle timeout passed)"
            case .noAnswer?: why = "no agent answers (it stopped)"
            case nil: why = "no agent holds it"
            }
            return "git credential \(operation.split(separator: "-").last ?? ""): the vault is locked (\(path)): \(why), "
                + "and no source in the environment opens it; \(outcome)"
        case .kdfOverOpenCaps(let settings, let cap):
            let limit: String
            switch cap {
            case .memoryOverCap(_, let bytes): limit = "memory limit (\(ByteSize.format(bytes)))"
            case .workOverCap(_, let kib), .workTotalOverCap(_, _, let kib):
                limit = "Argon2id work limit (\(ByteSize.format(kibibytes: kib)) of memory × iterations)"
            case .iterationsOverCap(_, let most), .iterationsTotalOverCap(_, _, let most): limit = "PBKDF2 limit (\(most) iterations)"
            default: limit = "limits"
            }
            return "\(settings) is over the \(limit) that opening a vault applies, so every later open would fail; nothing was written"
        case .execMatchesNothing(let prefix): return "--prefix \(prefix) matches no entry, so the command would get no secrets; it was not run"
        case .typedPasswordWrong(let tries): return "wrong password \(tries == 1 ? "once" : "\(tries) times"): no keyslot of the vault opens with what was typed"
        case .passwordSourceFailed(let why): return "could not read the password: \(why)"
        case .noIdentityPassphraseSource(let identity):
            return "\(identity) is protected by a passphrase, and there is no passphrase source and no terminal to ask on"
        case .identityPassphraseSourceFailed(let source, let why): return "could not read the identity passphrase from \(source): \(why)"
        case .emptyPassword: return "the password is empty"
        case .sourceDecryptionFailed(let tool, let file, let status?, _):
            return "\(tool) could not decrypt \(file) (exit status \(status)); nothing was imported"
        case .sourceDecryptionFailed(let tool, let file, nil, let limit):
            return "\(tool) decrypted \(file) to more than \(limit) bytes, the most one file of a store may hold; nothing was imported"
        case .identitiesFileNoTerminal(let file):
            return "the age identities file \(file) is protected by a passphrase (age -p), and there is no terminal to ask it on; nothing was imported"
        case .identitiesFilePassphraseWrong(let file, let tries):
            return "the passphrase does not decrypt the age identities file \(file)" + (tries > 1 ? " (\(tries) tries)" : "") + "; nothing was imported"
        case .sopsDataKeyNotOpened(let file, let keys):
            return "the data key of \(file) (its sops.age entries) does not open with the age identities in \(keys); nothing was imported"
        case .storeEncryptionFailed(let entry, let status):
            return "gpg could not encrypt the entry '\(entry)' (exit status \(status)); no store was written"
        case .sourceDecryptionTotalOverLimit(let tool, let files, let limit):
            return "limit exceeded: the \(files) files of the store come to more than \(limit) bytes (\(limit >> 20) MiB) once \(tool) "
                + "decrypts them, the most one import reads in all; nothing was imported"
        case .passwordsDiffer: return "the two passwords differ"
        case .passwordCommandFailed(let status): return "the password command failed (exit status \(status))"
        case .inputFailed(let why): return why
        case .inputTooLarge(let what, let limit):
            return "limit exceeded: \(what) holds more than \(limit) bytes (\(ByteSize.format(UInt64(limit)))), the largest value a vault holds"
        case .io(let operation, let path, let code): return "\(operation) \(path) failed: \(String(cString: strerror(code)))"
        case .outputFailed(let code): return "writing to standard output failed: \(String(cString: strerror(code)))"
        case .invalidArgument(let why): return why
        case .cannotRun(let command, let code):
            // E2BIG names the arguments alone; the environment counts too, and it is what exec fills.
            let reason = code == E2BIG ? "its environment and arguments are larger than the system allows" : String(cString: strerror(code))
            return "cannot run '\(command)': \(reason)"
        case .refused(let why, _): return why
        case .importFormatMismatch(let source, let given, let looksLike, _):
            return "\(source) is not \(given) input: it looks like \(looksLike); nothing was imported"
        case .importFormatUnknown(let source, let why, _): return "cannot tell the format of \(source): \(why); nothing was imported"
        case .importUnreadable(let source, let format, let why, _): return "cannot read \(source) as \(format): \(why); nothing was imported"
        case .noMatch(let pattern, _, _): return "no entry matches \(pattern)"
        case .regexWorkLimit(let pattern, let initial, let perCharacter):
            return "limit exceeded: the regular expression \(pattern) needs more than \(perCharacter) steps per character read "
                + "(live states of the pattern at each character) beyond the first \(initial) steps; the search was stopped"
        case .binaryOnTerminal(let name, let field):
            return "\(Self.part(name, field)) holds binary data (not UTF-8, or control characters); refusing to write it to the terminal"
        case .emptyValue(let name, let field): return "the value read for \(Self.part(name, field)) is empty; nothing was stored"
        case .unknownVerb(let word, _): return "'\(word)' is not a vaultfile verb"
        case .standardInputTaken(let reader, let second):
            return "standard input holds one thing: it was read for \(reader), so \(second) cannot come from it too"
        case .agentFailed(let why): return why
        case .agentOfAnotherRelease: return "the running agent is from another release: run 'vaultfile agent stop', then unlock again"
        case .agentHoldsOtherKeys(let path):
            return "the agent holds \(path) under other keys than the one this unlock opened; nothing changed in the agent"
        case .agentChangeDenied(let path):
            return "the confirm command of \(path) refused to let this unlock change its settings in the agent; nothing changed"
        case .agentCannotSign(_, .noDelegation):
            // The words of `VaultError.slotCannotSign`: the same refusal, but the agent does not know which slot it was.
            return "this vault is signed, and the slot that unlocked it in the agent ('vaultfile unlock') is post-quantum, an age plugin "
                + "slot, ssh-rsa or a 1.0 password: such a slot cannot sign seals, so nothing was written"
        case .agentCannotSign(let path, let reason): return "cannot write \(path) through the agent: \(reason); nothing was written"
        case .agentSignDenied(let path):
            return "the confirm command of \(path) refused to let the agent sign this write; nothing was written"
        case .fieldLabelShared(let entry, let label, let fields):
            return "the entry '\(entry)' has no field '\(label)', and the label '\(label)' an import kept names \(fields.count) of its fields: "
                + fields.joined(separator: ", ")
        case .folderNotEntry(let name, let count):
            return "'\(name)' is a folder of \(count == 1 ? "1 entry" : "\(count) entries"), not an entry"
        case .noEntryOrFolder(let name):
            let entry = name.hasSuffix("/") ? String(name.dropLast()) : name
            return "no entry or folder named '\(entry)' (nothing under '\(entry)/')"
        case .nothingUnder(let folder, let entry):
            return entry.map { "no entry named '\($0)' and nothing under '\(folder)'" } ?? "nothing under '\(folder)'"
        case .stateFolderUnsafe(let unsafe): return "\(unsafe); refusing to write through it, so nothing was written"
        case .referenceNotFound(let reference, let why, let place):
            return "\(reference)\(place.map { " (\($0))" } ?? ""): \(why)"
        case .pluginObserved(let why):
            return "age-plugin-vaultfile refuses to unwrap: \(why), so another program could read the vault's file key "
                + "from this process; neither the agent nor the vault was asked. Run age with no tracer (strace, gdb) "
                + "and without the variable ('env -u LD_PRELOAD age -d …')"
        }
    }

    var category: ErrorCategory {
        switch self {
        case .noPasswordSource, .noForeignPasswordSource, .emptyPassword, .passwordsDiffer, .noIdentityPassphraseSource: return .invalidInput
        case .identityPassphraseSourceFailed: return .io
        case .nothingOpens(let report): return report.category
        case .gitCredentialVaultLocked: return .invalidInput
        case .passwordSourceFailed, .passwordCommandFailed, .inputFailed, .io, .outputFailed, .agentFailed, .storeEncryptionFailed: return .io
        case .inputTooLarge, .regexWorkLimit: return .overLimit
        case .invalidArgument, .cannotRun, .kdfOverOpenCaps: return .invalidArgument
        case .importFormatMismatch, .importUnreadable: return .invalidInput
        case .importFormatUnknown: return .invalidArgument
        case .refused, .binaryOnTerminal, .emptyValue, .stateFolderUnsafe, .agentOfAnotherRelease, .agentHoldsOtherKeys,
             .agentChangeDenied, .agentSignDenied, .pluginObserved: return .refused
        // A key from a slot that cannot sign is refused as the direct write through that slot is (`slotCannotSign`, exit 2).
        case .agentCannotSign(_, .noDelegation): return .refused
        case .agentCannotSign, .typedPasswordWrong: return .wrongPassword
        case .sourceDecryptionFailed(_, _, let status, _): return status == nil ? .overLimit : .wrongPassword
        case .sopsDataKeyNotOpened, .identitiesFilePassphraseWrong: return .wrongPassword
        case .identitiesFileNoTerminal: return .invalidInput
        case .sourceDecryptionTotalOverLimit: return .overLimit
        case .noMatch, .fieldLabelShared, .folderNotEntry, .noEntryOrFolder, .nothingUnder, .execMatchesNothing, .referenceNotFound: return .notFound
        case .unknownVerb, .standardInputTaken: return .invalidArgument
        }
    }

    /// How a message names the value of an entry or one of its fields.
    private static func part(_ name: String, _ field: String?) -> String {
        field.map { "field '\($0)' of '\(name)'" } ?? "'\(name)'"
    }
}
