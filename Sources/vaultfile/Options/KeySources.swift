import ArgumentParser
import SecureMemory
import VaultFile
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
        "Unlock with this age identity file (AGE-SECRET-KEY-1…, as age-keygen writes it) or unencrypted OpenSSH ed25519 key; repeatable. Env VAULTFILE_IDENTITY_FILE, or VAULTFILE_IDENTITY (the key itself).",
        valueName: "file"))
    var identities: [String] = []

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
    }

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
    func credentials(vaultPath: String) throws -> [UnlockCredential] {
        var result: [UnlockCredential] = []
        for path in identities {
            result += try Self.identities(in: try KeyFiles.read(path), source: "--identity \(path)")
        }
        if let path = environment("VAULTFILE_IDENTITY_FILE") {
            let source = "VAULTFILE_IDENTITY_FILE (\(path))"
            result += Self.skippingFailure(source) { try Self.identities(in: try KeyFiles.read(path), source: source) }
        }
        if let secret = EnvironmentIdentity.identity {
            var bytes = secret.withUnsafeBytes { Array($0) }
            defer { wipe(&bytes) }
            result += Self.skippingFailure("VAULTFILE_IDENTITY") { try Self.identities(in: bytes, source: "VAULTFILE_IDENTITY") }
        }
        if let keyfile { result.append(UnlockCredential(.keyfile(path: keyfile), source: "--keyfile \(keyfile)")) }
        if let path = environment("VAULTFILE_KEYFILE") { result.append(UnlockCredential(.keyfile(path: path), source: "VAULTFILE_KEYFILE (\(path))")) }
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

    /// The identities in an identity source: an OpenSSH private key, or an age identity file.
    static func identities(in bytes: [UInt8], source: String) throws -> [UnlockCredential] {
        if SSHEd25519Identity.looksLikeOpenSSHKey(bytes) {
            return [UnlockCredential(.sshIdentity(try SSHEd25519Identity.parse(bytes, source: source)), source: source)]
        }
        return try AgeIdentityFile.parse(bytes, source: source).map { UnlockCredential(.ageIdentity($0), source: source) }
    }
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
        guard info.st_size <= maxLength else { throw CLIError.inputTooLarge(what: path, limit: maxLength) }
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

// MARK: - The option table and the quick reading (QuickArguments.swift)

extension KeySourceOptions {
    /// The options of `KeySourceOptions`: named by its declarations and by the quick reading.
    enum Table: String, QuickOptionTable {
        case identity, keyfile, recovery, recoveryFile = "recovery-file"

        var kind: OptionKind {
            switch self {
            case .recovery: .flag
            case .keyfile, .recoveryFile: .option
            case .identity: .repeatable
            }
        }

        func read(from arguments: inout QuickArguments, into options: inout KeySourceOptions) {
            switch self {
            case .identity: options.identities = arguments.strings(self)
            case .keyfile: options.keyfile = arguments.string(self)
            case .recovery: options.recovery = arguments.flag(self)
            case .recoveryFile: options.recoveryFile = arguments.string(self)
            }
        }
    }

    static let quickGrammar = Table.grammar

    static func quick(_ arguments: inout QuickArguments) throws(QuickArguments.Declined) -> Self {
        var options = Self()
        try arguments.read(Table.self, into: &options)
        try QuickArguments.validate(options)
        return options
    }
}
