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
        "Unlock with this age identity file (AGE-SECRET-KEY-1… or post-quantum AGE-SECRET-KEY-PQ-1…, as age-keygen writes them) or OpenSSH ed25519 or RSA key; an age -p or ssh-keygen -N protected one asks for its passphrase; repeatable. Env VAULTFILE_IDENTITY_FILE, or VAULTFILE_IDENTITY (the key itself). Without it the default identities (identity.txt, identities/) are tried.",
        valueName: "file"))
    var identities: [String] = []

    @Option(name: Table.identityPassphraseFile.long, help: ArgumentHelp(
        "Read the passphrase of protected identities from this file ('-' for stdin) instead of the terminal. Env VAULTFILE_IDENTITY_PASSPHRASE_FILE.",
        valueName: "file"), completion: .file())
    var identityPassphraseFile: String?

    @Option(name: Table.identityPassphraseFD.long, help: ArgumentHelp(
        "Read the passphrase of protected identities from this open file descriptor.", valueName: "n"))
    var identityPassphraseFD: Int32?

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
        if identityPassphraseFile != nil && identityPassphraseFD != nil {
            throw ValidationError("give at most one of --identity-passphrase-file and --identity-passphrase-fd")
        }
    }
}

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension KeySourceOptions: QuickOptionGroup {
    /// The options of `KeySourceOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case identity, keyfile, recovery, recoveryFile = "recovery-file"
        case identityPassphraseFile = "identity-passphrase-file", identityPassphraseFD = "identity-passphrase-fd"

        var kind: OptionKind {
            switch self {
            case .recovery: .flag
            case .keyfile, .recoveryFile, .identityPassphraseFile, .identityPassphraseFD: .option
            case .identity: .repeatable
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout KeySourceOptions) throws(QuickArguments.Declined) {
            switch self {
            case .identity: options.identities = arguments.strings(self)
            case .keyfile: options.keyfile = arguments.string(self)
            case .recovery: options.recovery = arguments.flag(self)
            case .recoveryFile: options.recoveryFile = arguments.string(self)
            case .identityPassphraseFile: options.identityPassphraseFile = arguments.string(self)
            case .identityPassphraseFD: options.identityPassphraseFD = try arguments.value(self)
            }
        }
    }
}
