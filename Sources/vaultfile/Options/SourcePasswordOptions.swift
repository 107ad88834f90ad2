import ArgumentParser
import SecureMemory

// MARK: - The password of a file being imported

/// Where `import --format ansible-vault` takes the vault password of the file it reads: the same
/// kinds of source as the vault's own password (`PasswordSource`), under names of their own, so
/// that the two never mix; without one, a prompt on the terminal that names the file.
struct SourcePasswordOptions: ParsableArguments {
    @Option(name: .customLong("source-password-file"), help: ArgumentHelp(
        "ansible-vault: read the imported file's vault password from this file (one trailing newline is removed).", valueName: "file"),
            completion: .file())
    var file: String?

    @Option(name: .customLong("source-password-fd"), help: ArgumentHelp(
        "ansible-vault: read the imported file's vault password from this open descriptor.", valueName: "n"))
    var descriptor: Int32?

    @Option(name: .customLong("source-password-command"), help: ArgumentHelp(
        "ansible-vault: run this command with 'sh -c'; its standard output is the imported file's vault password.", valueName: "command"))
    var command: String?

    func validate() throws {
        guard [file != nil, descriptor != nil, command != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("give at most one of --source-password-file, --source-password-fd and --source-password-command")
        }
    }

    /// Whether any of the options was given.
    var isGiven: Bool { file != nil || descriptor != nil || command != nil }

    /// Reads the password of `what` (e.g. "vault.yml"); an empty one is refused.
    func read(for what: String) throws(CLIError) -> SecureBytes {
        let source: PasswordSource = file.map { .file($0) } ?? descriptor.map { .descriptor($0) } ?? command.map { .command($0) } ?? .prompt
        let password = try source.read(prompt: "Vault password of \(what) (ansible-vault): ")
        guard password.count > 0 else { throw .emptyPassword }
        return password
    }
}
