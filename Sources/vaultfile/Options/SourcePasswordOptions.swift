import ArgumentParser
import SecureMemory

// MARK: - The passwords of a file being imported

/// Where `import --format ansible-vault` takes the vault passwords of the file it reads: the same
/// kinds of source as the vault's own password (`PasswordSource`), under names of their own, so
/// that the two never mix; without one, a prompt on the terminal that names the file.
///
/// Each option may be given several times (a file whose values are under several vault ids, as
/// ansible's repeated `--vault-id`): every password given is tried on every value, files first,
/// then descriptors, then commands, each kind in the order given.
struct SourcePasswordOptions: ParsableArguments {
    @Option(name: Table.files.long, help: ArgumentHelp(
        "ansible-vault: read a vault password of the imported file from this file (one trailing newline is removed); "
            + "repeat for several vault ids.", valueName: "file"),
            completion: .file())
    var files: [String] = []

    @Option(name: Table.descriptors.long, help: ArgumentHelp(
        "ansible-vault: read a vault password of the imported file from this open descriptor; repeatable.", valueName: "n"))
    var descriptors: [Int32] = []

    @Option(name: Table.commands.long, help: ArgumentHelp(
        "ansible-vault: run this command with 'sh -c'; its standard output is a vault password of the imported file; repeatable.",
        valueName: "command"))
    var commands: [String] = []

    /// Whether any of the options was given.
    var isGiven: Bool { !files.isEmpty || !descriptors.isEmpty || !commands.isEmpty }

    /// The options to name when no password could be had.
    static let names = "--source-password-file FILE, --source-password-fd N or --source-password-command CMD (each repeatable)"

    /// Reads the passwords of `what` (e.g. "vault.yml"), every source given, else the prompt;
    /// an empty one is refused. Without a source and without a terminal, the error names the
    /// file and these options (not the vault's own `--password-file`, which opens the vault).
    func read(for what: String) throws(CLIError) -> [SecureBytes] {
        let sources: [PasswordSource] = files.map { .file($0) } + descriptors.map { .descriptor($0) } + commands.map { .command($0) }
        guard !sources.isEmpty else {
            let password: SecureBytes
            do throws(CLIError) {
                password = try PasswordSource.prompt.read(prompt: "Vault password of \(what) (ansible-vault): ")
            } catch .noPasswordSource {
                throw .noForeignPasswordSource(what: "the ansible-vault file \(what)", options: Self.names)
            } catch {
                throw error
            }
            guard password.count > 0 else { throw .emptyPassword }
            return [password]
        }
        var passwords: [SecureBytes] = []
        for source in sources {
            let password = try source.read(prompt: "")
            guard password.count > 0 else { throw .emptyPassword }
            passwords.append(password)
        }
        return passwords
    }
}

extension SourcePasswordOptions: QuickOptionGroup {
    /// The options of `SourcePasswordOptions`: named by their declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case files = "source-password-file", descriptors = "source-password-fd", commands = "source-password-command"

        var kind: OptionKind { .repeatable }

        func read(from arguments: inout QuickArguments, into options: inout SourcePasswordOptions) throws(QuickArguments.Declined) {
            switch self {
            case .files: options.files = arguments.strings(self)
            case .descriptors:
                // Each value read as ArgumentParser reads an `Int32`; one it does not read declines.
                var descriptors: [Int32] = []
                for text in arguments.strings(self) {
                    guard let descriptor = Int32(argument: text) else { throw QuickArguments.Declined() }
                    descriptors.append(descriptor)
                }
                options.descriptors = descriptors
            case .commands: options.commands = arguments.strings(self)
            }
        }
    }
}
