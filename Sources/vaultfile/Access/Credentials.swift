import KDF
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The password source and the KDF caps in force

extension UnlockOptions {
    /// The source in force: an option, else VAULTFILE_PASSWORD_FILE, VAULTFILE_PASSWORD_COMMAND,
    /// VAULTFILE_PASSWORD, else a prompt on the terminal.
    var source: PasswordSource {
        if let passwordFile { return .file(passwordFile) }
        if let passwordFD { return .descriptor(passwordFD) }
        if let passwordCommand { return .command(passwordCommand) }
        if let file = environment("VAULTFILE_PASSWORD_FILE") { return .file(file) }
        if let command = environment("VAULTFILE_PASSWORD_COMMAND") { return .command(command) }
        if EnvironmentPassword.password != nil { return .environment }
        return .prompt
    }

    /// Every unlock source given, in the order they are tried: identities, keyfiles and a
    /// recovery code first, then the password from its source when one is given (an option or a
    /// variable). The default identities and the prompt come after, once the header is read
    /// (`UnlockSteps`). Never the agent (VaultAccess.swift).
    /// `passphrases` is the passphrase source of protected identities, shared with the later steps
    /// (`UnlockSteps`) so that a descriptor is read once; a new one when nil.
    func credentials(passphrases: IdentityPassphraseSource? = nil) throws -> [UnlockCredential] {
        var result = try keys.credentials(vaultPath: location.path, passphrases: passphrases ?? keys.identityPassphrases())
        if source.isExplicit {
            result.append(UnlockCredential(.password(try password()), source: "the password"))
        }
        return result
    }

    /// Reads the password of the vault.
    func password() throws -> SecureBytes {
        let password = try source.read(prompt: "Password for \(location.path): ")
        guard password.count > 0 else { throw CLIError.emptyPassword }
        return password
    }

    /// The KDF caps from the options, else the environment, else the defaults.
    func limits() throws -> KDFLimits {
        var limits = KDFLimits.defaults
        if let memory = try Self.size(maxMemory, option: "--kdf-max-memory", variable: "VAULTFILE_KDF_MAX_MEMORY") {
            limits.maxMemoryBytes = memory
        }
        if let work = try Self.size(maxWork, option: "--kdf-max-work", variable: "VAULTFILE_KDF_MAX_WORK") {
            limits.maxArgon2WorkKiB = work / 1024
        }
        if let maxIterations {
            limits.maxPBKDF2Iterations = maxIterations
        } else if let text = environment("VAULTFILE_KDF_MAX_ITERATIONS") {
            guard let value = UInt64(text) else {
                throw CLIError.invalidArgument("VAULTFILE_KDF_MAX_ITERATIONS is not a whole number: '\(text)'")
            }
            limits.maxPBKDF2Iterations = value
        }
        return limits
    }

    private static func size(_ option: String?, option name: String, variable: String) throws -> UInt64? {
        if let option {
            guard let value = ByteSize.parse(option) else {
                throw CLIError.invalidArgument("\(name) takes a size such as 512M or 2G, not '\(option)'")
            }
            return value
        }
        if let text = environment(variable) {
            guard let value = ByteSize.parse(text) else {
                throw CLIError.invalidArgument("\(variable) must be a size such as 512M or 2G, not '\(text)'")
            }
            return value
        }
        return nil
    }
}

// MARK: - Unlock sources beside the password

/// The credentials of `--identity`, `--keyfile`, `--recovery` and `--recovery-file` and their
/// variables, in the order they are tried: `--identity FILE` (each), `VAULTFILE_IDENTITY_FILE`,
/// `VAULTFILE_IDENTITY`, `--keyfile FILE`, `VAULTFILE_KEYFILE`, the recovery code.
extension KeySourceOptions {
    /// Whether any of these sources is given (options or variables).
    var isGiven: Bool {
        !identities.isEmpty || keyfile != nil || recovery || recoveryFile != nil || environment("VAULTFILE_IDENTITY_FILE") != nil
            || EnvironmentIdentity.identity != nil || environment("VAULTFILE_KEYFILE") != nil
    }

    /// The credentials of every source given, in the order they are tried; `vaultPath` names the
    /// vault in the recovery prompt.
    ///
    /// A source on the command line that cannot be read or parsed is an error. One from the
    /// environment is skipped with a warning instead: such variables are often set for every
    /// vault of a session or a CI job, and another source may open this one.
    func credentials(vaultPath: String, passphrases: IdentityPassphraseSource) throws -> [UnlockCredential] {
        var result: [UnlockCredential] = []
        for path in identities {
            result += try Self.identities(in: try KeyFiles.read(path), source: "--identity \(path)", name: path, passphrases: passphrases,
                                          limit: Self.maxIdentities - result.count)
        }
        if let path = environment("VAULTFILE_IDENTITY_FILE") {
            let source = "VAULTFILE_IDENTITY_FILE (\(path))", left = Self.maxIdentities - result.count
            result += Self.skippingFailure(source) {
                try Self.identities(in: try KeyFiles.read(path), source: source, name: path, passphrases: passphrases, limit: left)
            }
        }
        if let secret = EnvironmentIdentity.identity {
            var bytes = secret.withUnsafeBytes { Array($0) }
            defer { wipe(&bytes) }
            let left = Self.maxIdentities - result.count
            result += Self.skippingFailure("VAULTFILE_IDENTITY") {
                try Self.identities(in: bytes, source: "VAULTFILE_IDENTITY", name: "VAULTFILE_IDENTITY", passphrases: passphrases, limit: left)
            }
        }
        // A keyfile is read whole for each keyfile slot tried; it is checked here (type and size)
        // so that one that cannot be read is an error, or from the environment skipped, like an
        // identity file, before any slot is tried and whatever slots the vault has.
        if let keyfile {
            try Keyfile.check(path: keyfile)
            result.append(UnlockCredential(.keyfile(path: keyfile), source: "--keyfile \(keyfile)"))
        }
        if let path = environment("VAULTFILE_KEYFILE") {
            let source = "VAULTFILE_KEYFILE (\(path))"
            result += Self.skippingFailure(source) {
                try Keyfile.check(path: path)
                return [UnlockCredential(.keyfile(path: path), source: source)]
            }
        }
        if recovery {
            let typed = try Terminal.readSecret(prompt: "Recovery code for \(vaultPath): ")
            result.append(UnlockCredential(.recovery(try RecoveryCode(parsing: typed)), source: "the recovery code"))
        } else if let recoveryFile {
            let bytes = SecureBytes(copying: try KeyFiles.read(recoveryFile))
            result.append(UnlockCredential(.recovery(try RecoveryCode(parsing: bytes)), source: "--recovery-file \(recoveryFile)"))
        }
        return result
    }

    /// The credentials `read` makes, or none (with a warning naming `source`, never its contents) when it fails.
    private static func skippingFailure(_ source: String, _ read: () throws -> [UnlockCredential]) -> [UnlockCredential] {
        do {
            return try read()
        } catch {
            Messages.warning("\(source) skipped: \(ErrorReport(error)?.description ?? "it cannot be read")")
            return []
        }
    }

    /// The identities in an identity source: an OpenSSH private key (ed25519 protected by a
    /// passphrase or not: `protectedIdentity`; RSA unencrypted), or an age identity file. `name`
    /// names it in a passphrase prompt.
    /// `skippable` for the default identities (`ProtectedIdentity.skippable`). More than `limit`
    /// identities (what is left of `maxIdentities`) are refused before any is made (exit 6).
    static func identities(in bytes: [UInt8], source: String, name: String, passphrases: IdentityPassphraseSource,
                           skippable: Bool = false, limit: Int = maxIdentities) throws -> [UnlockCredential] {
        guard limit > 0 else {
            throw VaultError.limitExceeded("\(source) is past the \(maxIdentities) identities vaultfile reads in all "
                                           + "(every --identity file, VAULTFILE_IDENTITY_FILE, VAULTFILE_IDENTITY and the default identities together)")
        }
        if let protected = try protectedIdentity(in: bytes, source: source, name: name, passphrases: passphrases, skippable: skippable) {
            return protected
        }
        if SSHRSAIdentity.holdsRSAKey(bytes) {
            return [UnlockCredential(.sshRSAIdentity(try SSHRSAIdentity.parse(bytes, source: source)), source: source)]
        }
        if SSHEd25519Identity.looksLikeOpenSSHKey(bytes) {
            return [UnlockCredential(.sshIdentity(try SSHEd25519Identity.parse(bytes, source: source)), source: source)]
        }
        // age identity files may hold post-quantum and plugin identities (AGE-PLUGIN-NAME-1…) beside X25519 ones.
        let (native, plugins) = try AgeIdentityFile.parseWithPlugins(bytes, source: source, limit: limit, total: maxIdentities)
        return native.map { identity in
            switch identity {
            case .x25519(let identity): UnlockCredential(.ageIdentity(identity), source: source)
            case .postQuantum(let identity): UnlockCredential(.pqIdentity(identity), source: source)
            }
        } + plugins.map {
            // Named with the program it runs, so that a failure to open says which plugin ran.
            UnlockCredential(.pluginIdentity($0), source: NothingOpens.pluginSource(source, plugin: $0.name))
        }
    }
}

extension KeySourceOptions {
    /// The most identities one command reads from all its sources together (options, variables
    /// and the default identities): each holds locked memory in guarded pages, and some tens of
    /// thousands exhaust the process's memory mappings (a crash, not an error).
    static let maxIdentities = 1_024
}

// MARK: - Small key files

/// Reads identity, recipient and recovery-code files: regular files of at most 1 MiB, opened
/// without blocking (a named pipe is refused, not waited on).
enum KeyFiles {
    /// The largest key file read.
    static let maxLength = 1 << 20

    /// The file's bytes. The caller wipes them when they hold a secret.
    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw CLIError.io(operation: "opening", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CLIError.io(operation: "reading the status of", path: path, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CLIError.inputFailed("\(path) is not a regular file; key files are read only from regular files")
        }
        guard info.st_size <= maxLength else {
            throw VaultError.limitExceeded("\(path) holds more than \(maxLength) bytes (1 MiB), the most vaultfile reads of an identity, recipients or recovery-code file")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 {
                if errno == EINTR { continue }
                wipe(&bytes)
                throw CLIError.io(operation: "reading", path: path, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        guard filled < bytes.count else { return bytes }
        let read = Array(bytes.prefix(filled))
        wipe(&bytes)
        return read
    }
}

// MARK: - The identity in the environment

/// `VAULTFILE_IDENTITY` (the key itself, for CI secret stores), moved out of the environment at
/// start-up into guarded memory, like `VAULTFILE_PASSWORD`, so no child process inherits it.
enum EnvironmentIdentity {
    nonisolated(unsafe) private static var value: SecureBytes?

    /// Copies the variable into guarded memory, zeroes it and removes it from the environment.
    static func take() {
        guard let raw = getenv("VAULTFILE_IDENTITY") else { return }
        let length = strlen(raw)
        if length > 0 { value = SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: length)) }
        memset(raw, 0, length)
        unsetenv("VAULTFILE_IDENTITY")
    }

    /// The identity taken at start-up, if the variable was set and not empty.
    static var identity: SecureBytes? { value }
}
