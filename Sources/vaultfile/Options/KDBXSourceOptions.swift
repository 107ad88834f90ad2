import ArgumentParser

// MARK: - What opens an imported KeePass database

/// `import --format kdbx`'s own credentials: the database's password and/or key file, never the
/// vault's (which `--password-file` and the other unlock sources give).
struct KDBXSourceOptions: ParsableArguments {
    @Option(name: Table.passwordFile.long, help: ArgumentHelp(
        "kdbx: read the KeePass database's password from this file (one trailing newline is removed); - is stdin.", valueName: "file"),
            completion: .file())
    var passwordFile: String?

    @Option(name: Table.keyFile.long, help: ArgumentHelp(
        "kdbx: the database's key file (KeePass XML key file 1.0/2.0, 32 raw bytes, 64 hex digits, or any file, hashed).", valueName: "file"),
            completion: .file())
    var keyFile: String?

    @Flag(name: Table.noPassword.long, help: "kdbx: the database has a key file and no password; ask for none.")
    var noPassword = false

    func validate() throws {
        if noPassword && passwordFile != nil { throw ValidationError("--kdbx-no-password and --kdbx-password-file contradict each other; give one") }
        if noPassword && keyFile == nil { throw ValidationError("--kdbx-no-password needs --kdbx-keyfile: a database opens with a password, a key file or both") }
    }

    /// Whether any of the options was given.
    var isGiven: Bool { passwordFile != nil || keyFile != nil || noPassword }

    /// The options given, by name (`--kdbx-password-file`…), for a refusal that names them.
    var given: [String] {
        (passwordFile != nil ? ["--kdbx-password-file"] : []) + (keyFile != nil ? ["--kdbx-keyfile"] : []) + (noPassword ? ["--kdbx-no-password"] : [])
    }
}

extension KDBXSourceOptions: QuickOptionGroup {
    /// The options of `KDBXSourceOptions`: named by their declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case passwordFile = "kdbx-password-file", keyFile = "kdbx-keyfile", noPassword = "kdbx-no-password"

        var kind: OptionKind {
            switch self {
            case .passwordFile, .keyFile: .option
            case .noPassword: .flag
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout KDBXSourceOptions) {
            switch self {
            case .passwordFile: options.passwordFile = arguments.string(self)
            case .keyFile: options.keyFile = arguments.string(self)
            case .noPassword: options.noPassword = arguments.flag(self)
            }
        }
    }
}
