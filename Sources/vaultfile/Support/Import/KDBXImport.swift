import KDF
import SecureMemory
import VaultInterchange
import VaultModel

// MARK: - import --format kdbx

/// Opens a KeePass database for `import`: its password (`--kdbx-password-file`, else asked on the
/// terminal) and/or key file (`--kdbx-keyfile`), then `KDBXReader` under the vault's KDF caps.
/// The database is decrypted in memory only, and every secret read here is wiped after use.
enum KDBXImport {
    /// The entries of the database `bytes` read from `file` (nil or `-`: stdin), built as its XML
    /// is read (`KDBXReader.entries`: its items are not all held at once); `bytes` is taken
    /// (emptied once the payload is decrypted: the file and its payload are not held twice).
    static func entries(taking bytes: inout [UInt8], file: String?, options: KDBXSourceOptions, limits: KDFLimits,
                        build: ForeignBuildOptions) throws -> ImportedEntries {
        let shown = self.shown(file)
        let credentials = try self.credentials(for: shown, options: options)
        return try KDBXReader.entries(taking: &bytes, file: shown, credentials: credentials, limits: limits, options: build)
    }

    /// How messages name `file` (nil or `-`: standard input, "stdin" as in every import message).
    private static func shown(_ file: String?) -> String {
        let path = file ?? Input.standardInputName
        return path == Input.standardInputName ? "stdin" : path
    }

    /// The password and key file's key that `options` give. With a key file and no password file,
    /// the password is asked on the terminal where there is one (an empty answer: none), as
    /// keepassxc-cli asks; without a terminal, the key file alone is used.
    private static func credentials(for file: String, options: KDBXSourceOptions) throws -> KDBXCredentials {
        var keyFileKey: SecureBytes?
        if let keyFile = options.keyFile { keyFileKey = try KDBXKeyFileInput.key(keyFile) }
        let prompt = "Password of the KeePass database \(file): "
        var password: SecureBytes?
        if let passwordFile = options.passwordFile {
            password = try PasswordSource.file(passwordFile).read(prompt: prompt)
        } else if !options.noPassword {
            switch Result(catching: { () throws(CLIError) -> SecureBytes in try PasswordSource.prompt.read(prompt: prompt) }) {
            case .success(let typed): password = typed
            case .failure(let error):
                // No terminal: a key file alone opens the database, as keepassxc-cli's --no-password.
                guard case .noPasswordSource = error else { throw error }
                guard keyFileKey != nil else {
                    throw CLIError.noForeignPasswordSource(what: "the KeePass database \(file)",
                                                           options: "--kdbx-password-file FILE ('-': standard input), and/or its key file with --kdbx-keyfile FILE")
                }
            }
            if keyFileKey != nil, password?.count == 0 { password = nil }
        }
        guard password != nil || keyFileKey != nil else {
            throw CLIError.refused("\(file) would open with nothing: the password is empty and no key file was given",
                                   hint: "give the database's password (--kdbx-password-file or the prompt), its key file (--kdbx-keyfile), or both")
        }
        return KDBXCredentials(password: password, keyFileKey: keyFileKey)
    }
}
