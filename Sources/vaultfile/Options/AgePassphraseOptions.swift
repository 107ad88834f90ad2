import ArgumentParser
import SecureMemory

// MARK: - The passphrase of an age file

/// `--passphrase`, `--passphrase-file` and `--passphrase-fd`: the passphrase of an age file
/// (age's scrypt recipient), for `share` (the file is encrypted with it) and `receive` (a file
/// encrypted with one). Never the vault's password: that has its own sources.
struct AgePassphraseOptions: ParsableArguments {
    @Flag(name: .customLong("passphrase"), help: "Use a passphrase (age -p), asked on the terminal (twice for share), instead of recipients.")
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
    /// `confirm`, for a new file). An empty one is refused.
    func read(prompt: String, confirm: Bool) throws -> SecureBytes {
        let secret: SecureBytes
        if let passphraseFile {
            secret = try PasswordSource.file(passphraseFile).read(prompt: "")
        } else if let passphraseFD {
            secret = try PasswordSource.descriptor(passphraseFD).read(prompt: "")
        } else if confirm {
            secret = try Terminal.readNewSecret(prompt: prompt, confirm: "Repeat the passphrase: ")
        } else {
            secret = try Terminal.readSecret(prompt: prompt)
        }
        guard secret.count > 0 else {
            throw CLIError.refused("the age file's passphrase is empty", hint: "give a passphrase of at least one character")
        }
        return secret
    }
}
