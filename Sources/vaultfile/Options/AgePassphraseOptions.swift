import ArgumentParser
import SecureMemory

// MARK: - The passphrase of an age file

/// `--passphrase`, `--passphrase-file` and `--passphrase-fd`: the passphrase of an age file
/// (age's scrypt recipient), for `share` (the file is encrypted with it) and `receive` (a file
/// encrypted with one). Never the vault's password: that has its own sources.
struct AgePassphraseOptions: ParsableArguments {
    @Flag(name: .customLong("passphrase"), help: "share: encrypt with a passphrase (age -p) instead of recipients, asked twice on the terminal. receive: the file was made with one; it is asked on the terminal (also without this flag).")
    var passphrase = false

    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the age file's passphrase from this file (one final newline dropped; - is stdin).", valueName: "file"), completion: .file())
    var passphraseFile: String?

    @Option(name: .customLong("passphrase-fd"), help: ArgumentHelp("Read the age file's passphrase from this descriptor.", valueName: "n"))
    var passphraseFD: Int32?

    /// Whether a passphrase was asked for (the flag or a source).
    var isGiven: Bool { passphrase || passphraseFile != nil || passphraseFD != nil }

    func validate() throws {
        if passphraseFile != nil && passphraseFD != nil { throw ValidationError("give at most one of --passphrase-file and --passphrase-fd") }
    }

    /// The passphrase: from the file or descriptor given, else typed on the terminal (twice when
    /// `confirm`, for a new file). An empty one is refused. With no terminal the refusal names the
    /// age file (`file`, the one read) and these options, never a vault's password sources.
    func read(prompt: String, confirm: Bool, file: String? = nil) throws -> SecureBytes {
        let secret: SecureBytes
        if let passphraseFile {
            secret = try PasswordSource.file(passphraseFile).read(prompt: "")
        } else if let passphraseFD {
            secret = try PasswordSource.descriptor(passphraseFD).read(prompt: "")
        } else {
            secret = try Self.prompted(prompt, confirm: confirm, file: file)
        }
        guard secret.count > 0 else {
            throw CLIError.refused("the age file's passphrase is empty", hint: "give a passphrase of at least one character")
        }
        return secret
    }

    /// The passphrase typed on the terminal; with none, a refusal naming the age file and the options.
    private static func prompted(_ prompt: String, confirm: Bool, file: String?) throws -> SecureBytes {
        guard Terminal.promptsAllowed, Terminal.isAvailable else { throw noTerminal(confirm: confirm, file: file) }
        if confirm { return try Terminal.readNewSecret(prompt: prompt, confirm: "Repeat the passphrase: ") }
        return try Terminal.readSecret(prompt: prompt)
    }

    /// No passphrase source and no terminal: what is missing is the age file's passphrase, never a vault password.
    private static func noTerminal(confirm: Bool, file: String?) -> CLIError {
        let named = file.map { " " + $0 } ?? ""
        let what = confirm ? "the new age file's passphrase has no source, and there is no terminal to ask it on"
            : "the age file" + named + " is encrypted with a passphrase (age -p), and there is no terminal to ask it on"
        return CLIError.refused(what, hint: "give the passphrase with --passphrase-file FILE or --passphrase-fd N")
    }
}
