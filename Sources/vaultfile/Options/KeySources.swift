import ArgumentParser
import SecureMemory
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Unlock sources beside the password

/// `--identity`, `--keyfile`, `--recovery` and `--recovery-file`, with their variables: the unlock
/// sources tried before the password sources, in this order: `--identity FILE` (each),
/// `VAULTFILE_IDENTITY_FILE`, `VAULTFILE_IDENTITY`, `--keyfile FILE`, `VAULTFILE_KEYFILE`, the
/// recovery code.
struct KeySourceOptions: ParsableArguments {
    @Option(name: Table.identity.long, help: ArgumentHelp(
        "Unlock with this age identity file (AGE-SECRET-KEY-1…, as age-keygen writes it) or unencrypted OpenSSH ed25519 key; repeatable. Env VAULTFILE_IDENTITY_FILE, or VAULTFILE_IDENTITY (the key itself).",
        valueName: "file"))
    var identities: [String] = []

    @Option(name: Table.keyfile.long, help: ArgumentHelp(
        "Unlock with this keyfile (its whole content is the secret). Env VAULTFILE_KEYFILE.", valueName: "file"))
    var keyfile: String?

    @Flag(name: Table.recovery.long, help: "Unlock with a recovery code, asked on the terminal.")
    var recovery = false

    @Option(name: Table.recoveryFile.long, help: ArgumentHelp(
        "Unlock with the recovery code in this file.", valueName: "file"))
    var recoveryFile: String?

    func validate() throws {
        if recovery && recoveryFile != nil { throw ValidationError("give at most one of --recovery and --recovery-file") }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension KeySourceOptions {
    /// The options of `KeySourceOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case identity, keyfile, recovery, recoveryFile = "recovery-file"

        var kind: OptionKind {
            switch self {
            case .recovery: .flag
            case .keyfile, .recoveryFile: .option
            case .identity: .repeatable
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout KeySourceOptions) {
            switch self {
            case .identity: options.identities = arguments.strings(self)
            case .keyfile: options.keyfile = arguments.string(self)
            case .recovery: options.recovery = arguments.flag(self)
            case .recoveryFile: options.recoveryFile = arguments.string(self)
            }
        }
    }

    static let quickGrammar = Table.grammar

    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        try arguments.read(Table.self, into: &options)
        try QuickArguments.validate(options)
        return options
    }
}
