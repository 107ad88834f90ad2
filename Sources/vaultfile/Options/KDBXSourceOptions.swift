import ArgumentParser

// MARK: - What opens an imported KeePass database

/// `import --format kdbx`'s own credentials: the database's password and/or key file, never the
/// vault's (which `--password-file` and the other unlock sources give).
struct KDBXSourceOptions: ParsableArguments {
    @Option(name: .customLong("kdbx-password-file"), help: ArgumentHelp(
        "kdbx: read the KeePass database's password from this file (one trailing newline is removed); - is stdin.", valueName: "file"),
            completion: .file())
    var passwordFile: String?

    @Option(name: .customLong("kdbx-keyfile"), help: ArgumentHelp(
        "kdbx: the database's key file (KeePass XML key file 1.0/2.0, 32 raw bytes, 64 hex digits, or any file, hashed).", valueName: "file"),
            completion: .file())
    var keyFile: String?

    @Flag(name: .customLong("kdbx-no-password"), help: "kdbx: the database has a key file and no password; ask for none.")
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
