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
    @Option(name: .customLong("identity"), help: ArgumentHelp(
        "Unlock with this age identity file (AGE-SECRET-KEY-1…, as age-keygen writes it) or unencrypted OpenSSH ed25519 key; repeatable. Env VAULTFILE_IDENTITY_FILE, or VAULTFILE_IDENTITY (the key itself).",
        valueName: "file"))
    var identities: [String] = []

    @Option(name: .customLong("keyfile"), help: ArgumentHelp(
        "Unlock with this keyfile (its whole content is the secret). Env VAULTFILE_KEYFILE.", valueName: "file"))
    var keyfile: String?

    @Flag(name: .customLong("recovery"), help: "Unlock with a recovery code, asked on the terminal.")
    var recovery = false

    @Option(name: .customLong("recovery-file"), help: ArgumentHelp(
        "Unlock with the recovery code in this file.", valueName: "file"))
    var recoveryFile: String?

    func validate() throws {
        if recovery && recoveryFile != nil { throw ValidationError("give at most one of --recovery and --recovery-file") }
    }
}

// MARK: - The quick reading (QuickArguments.swift)

extension KeySourceOptions {
    static let quickGrammar = QuickArguments.Grammar(flags: ["recovery"], options: ["identity", "keyfile", "recovery-file"], repeatable: ["identity"])

    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        options.identities = arguments.strings("identity")
        options.keyfile = arguments.string("keyfile")
        options.recovery = arguments.flag("recovery")
        options.recoveryFile = arguments.string("recovery-file")
        try QuickArguments.validate(options)
        return options
    }
}
