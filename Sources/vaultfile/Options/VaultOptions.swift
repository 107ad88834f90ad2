import ArgumentParser
import KDF
import SecureMemory
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Which vault

/// The title of the help section that holds the options of `VaultOptions` and `UnlockOptions`.
///
/// Each group gives it to its options from inside (a title set where a verb declares the group
/// would need every verb to say it); `HelpLayout` moves the section after the verb's own options,
/// since swift-argument-parser prints titled sections before the untitled one.
let vaultOptionsTitle = "Vault options"

/// `--vault` and `--lock-timeout`, shared by every verb that touches a vault.
struct VaultOptions: ParsableArguments {
    @OptionGroup(title: vaultOptionsTitle) private var options: VaultPathOptions

    /// `--vault`, or nil.
    var vault: String? {
        get { options.vault }
        set { options.vault = newValue }
    }
    /// `--lock-timeout`, in seconds.
    var lockTimeout: Double { options.lockTimeout }
}

/// The options of `VaultOptions`, in a group of their own so that they carry the help title.
struct VaultPathOptions: ParsableArguments {
    @Option(name: Table.vault.long, help: ArgumentHelp(
        "The vault file. Default: $VAULTFILE_PATH, else $XDG_DATA_HOME/vaultfile/default.vault.",
        valueName: "path"), completion: .file())
    var vault: String?

    @Option(name: Table.lockTimeout.long, help: ArgumentHelp(
        "Seconds to wait for another vaultfile to release the vault.", valueName: "seconds"))
    var lockTimeout: Double = Self.defaultLockTimeout

    /// `--lock-timeout` when it is not given.
    static let defaultLockTimeout: Double = 10

    func validate() throws {
        guard lockTimeout.isFinite, lockTimeout >= 0, lockTimeout <= 86_400 else {
            throw ValidationError("--lock-timeout must be between 0 and 86400 seconds")
        }
    }
}

// MARK: - The option tables and the quick reading (QuickArguments.swift)

extension VaultPathOptions {
    /// The options of `VaultPathOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case vault, lockTimeout = "lock-timeout"

        var kind: OptionKind { .option }

        func read(from arguments: inout QuickArguments, into options: inout VaultPathOptions) throws(QuickArguments.Declined) {
            switch self {
            case .vault: options.vault = arguments.string(self)
            case .lockTimeout: options.lockTimeout = try arguments.value(self) ?? VaultPathOptions.defaultLockTimeout
            }
        }
    }
}

extension UnlockSourceOptions {
    /// The options of `UnlockSourceOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case passwordFile = "password-file", passwordFD = "password-fd", passwordCommand = "password-command"
        case maxMemory = "kdf-max-memory", maxWork = "kdf-max-work", maxIterations = "kdf-max-iterations"
        case allowRollback = "allow-rollback", acceptRotation = "accept-rotation", allowUntrusted = "allow-untrusted", noAgent = "no-agent"

        var kind: OptionKind {
            switch self {
            case .allowRollback, .acceptRotation, .allowUntrusted, .noAgent: .flag
            case .passwordFile, .passwordFD, .passwordCommand, .maxMemory, .maxWork, .maxIterations: .option
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout UnlockSourceOptions) throws(QuickArguments.Declined) {
            switch self {
            case .passwordFile: options.passwordFile = arguments.string(self)
            case .passwordFD: options.passwordFD = try arguments.value(self)
            case .passwordCommand: options.passwordCommand = arguments.string(self)
            case .maxMemory: options.maxMemory = arguments.string(self)
            case .maxWork: options.maxWork = arguments.string(self)
            case .maxIterations: options.maxIterations = try arguments.value(self)
            case .allowRollback: options.allowRollback = arguments.flag(self)
            case .acceptRotation: options.acceptRotation = arguments.flag(self)
            case .allowUntrusted: options.allowUntrusted = arguments.flag(self)
            case .noAgent: options.noAgent = arguments.flag(self)
            }
        }
    }
}

extension VaultOptions {
    static let quickGrammar = VaultPathOptions.Table.grammar

    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var path = VaultPathOptions()
        try arguments.read(VaultPathOptions.Table.self, into: &path)
        try QuickArguments.validate(path)
        var location = Self()
        location.options = path
        try QuickArguments.validate(location)
        return location
    }
}

extension UnlockOptions {
    static let quickGrammar = VaultOptions.quickGrammar.adding(KeySourceOptions.quickGrammar).adding(UnlockSourceOptions.Table.grammar)

    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var unlock = Self()
        unlock.location = try VaultOptions.quick(&arguments)
        unlock.keys = try KeySourceOptions.quick(&arguments)
        var sources = UnlockSourceOptions()
        try arguments.read(UnlockSourceOptions.Table.self, into: &sources)
        try QuickArguments.validate(sources)
        unlock.options = sources
        try QuickArguments.validate(unlock)
        return unlock
    }
}

// MARK: - How to unlock it

/// The unlock sources (identities, keyfiles, recovery codes: `KeySourceOptions`; then the
/// password sources) and the KDF caps, shared by every verb that opens a vault.
struct UnlockOptions: ParsableArguments {
    @OptionGroup var location: VaultOptions
    @OptionGroup(title: vaultOptionsTitle) var keys: KeySourceOptions

    @OptionGroup(title: vaultOptionsTitle) private var options: UnlockSourceOptions

    /// `--password-file`.
    var passwordFile: String? { options.passwordFile }
    /// `--password-fd`.
    var passwordFD: Int32? { options.passwordFD }
    /// `--password-command`.
    var passwordCommand: String? { options.passwordCommand }
    /// `--kdf-max-memory`.
    var maxMemory: String? { options.maxMemory }
    /// `--kdf-max-work`.
    var maxWork: String? { options.maxWork }
    /// `--kdf-max-iterations`.
    var maxIterations: UInt64? { options.maxIterations }

    /// `--allow-rollback`.
    var allowRollback: Bool { options.allowRollback }
    /// `--accept-rotation`.
    var acceptRotation: Bool { options.acceptRotation }
    /// `--allow-untrusted`.
    var allowUntrusted: Bool { options.allowUntrusted }
    /// `--no-agent`.
    var noAgent: Bool { options.noAgent }

    func validate() throws {
        let explicit = [passwordFile != nil, passwordFD != nil, passwordCommand != nil].filter { $0 }.count
        guard explicit <= 1 else {
            throw ValidationError("give at most one of --password-file, --password-fd and --password-command")
        }
        // The caps (options and variables) are read here, so that a bad one is a usage error (Access/Credentials.swift).
        do { _ = try limits() } catch let error as CLIError { throw ValidationError(error.description) }
    }
}

/// The options of `UnlockOptions` but the vault's path, in a group of their own so that they
/// carry the help title.
struct UnlockSourceOptions: ParsableArguments {
    @Option(name: Table.passwordFile.long, help: ArgumentHelp(
        "Read the password from this file (one trailing newline is removed).", valueName: "file"), completion: .file())
    var passwordFile: String?

    @Option(name: Table.passwordFD.long, help: ArgumentHelp(
        "Read the password from this open file descriptor (one trailing newline is removed).", valueName: "n"))
    var passwordFD: Int32?

    @Option(name: Table.passwordCommand.long, help: ArgumentHelp(
        "Run this command with 'sh -c'; its standard output is the password (one trailing newline is removed).",
        valueName: "command"))
    var passwordCommand: String?

    @Option(name: Table.maxMemory.long, help: ArgumentHelp(
        "Skip keyslots whose KDF needs more memory (K/M/G suffixes; a cap per slot). Default: the lower of 1G and half the RAM; env VAULTFILE_KDF_MAX_MEMORY.",
        valueName: "size"))
    var maxMemory: String?

    @Option(name: Table.maxWork.long, help: ArgumentHelp(
        "The most Argon2id work (memory × iterations, K/M/G suffixes) one unlock spends, summed over the keyslots tried; a slot that would pass it is skipped. Default 32G; env VAULTFILE_KDF_MAX_WORK.",
        valueName: "size"))
    var maxWork: String?

    @Option(name: Table.maxIterations.long, help: ArgumentHelp(
        "The most PBKDF2 iterations one unlock runs, summed over the keyslots tried; a slot that would pass it is skipped. Default 50000000; env VAULTFILE_KDF_MAX_ITERATIONS.",
        valueName: "n"))
    var maxIterations: UInt64?

    @Flag(name: Table.allowRollback.long, help: ArgumentHelp(
        "Let a write replace a copy older than one seen on this machine (else exit 7); the copy becomes the newest."))
    var allowRollback = false

    @Flag(name: Table.acceptRotation.long, help: ArgumentHelp(
        "Take a copy rotated on another machine that this machine refuses as possibly planted (else exit 7 on a write); check 'vaultfile slot list' first."))
    var acceptRotation = false

    @Flag(name: Table.allowUntrusted.long, help: ArgumentHelp(
        "Use a copy this machine does not trust as its members' (else exit 7 on a write, exec or inject), for this command only; nothing is pinned."))
    var allowUntrusted = false

    @Flag(name: Table.noAgent.long, help: "Do not ask the agent for the vault's key (env VAULTFILE_NO_AGENT=1).")
    var noAgent = false
}

/// Checks an entry name (and field name) from the command line, as a usage error.
func validateEntryArguments(name: String, field: String?) throws {
    do {
        _ = try EntryName.validate(name)
        if let field { try EntryName.validateField(field) }
    } catch {
        throw ValidationError(error.description)
    }
}
