import KDF
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The identities file each age of an import reads

/// The age identities file of `import --format passage` (PASSAGE_IDENTITIES_FILE, else
/// ~/.passage/identities) and of `import --format sops` (SOPS_AGE_KEY_FILE, else sops' default
/// keys file), as each `age --decrypt` of the import gets it.
///
/// A plain regular file is named to age (`-i FILE`), as passage and sops do. Two kinds are read
/// once, here, before any age runs, kept in guarded memory and given to each age through a pipe
/// on its descriptor 3 (`-i /dev/fd/3`), never a file, an argument or a variable:
///
/// - a file encrypted with a passphrase (`age -p`, which age and passage accept): its passphrase
///   asked once on the terminal (three tries). Several ages each asking on the terminal at once
///   split the typed line between them and undo each other's echo-off (recheck60 R1); a sops
///   file's data-key stanzas, each given to its own age in turn, would ask once per stanza.
/// - anything that is not a regular file, such as a pipe (`PASSAGE_IDENTITIES_FILE=<(…)`): only
///   the first age to open it would read it. Decrypted as above when it is an `age -p` file.
///
/// Plugin identities inside still work: age reads them and runs the plugin.
enum AgeIdentitiesFile {
    /// age reads the file itself.
    case file(String)
    /// The identities read (and decrypted, if protected) from `source`, for `age -i /dev/fd/3`.
    case inMemory(SecureBytes, source: String)

    /// The largest identities file read to see whether it is protected: an `age -p` file of the
    /// largest identity file vaultfile decrypts (`AgeProtectedIdentityFile.maxPlaintext`), armored.
    static let maxFileLength = AgeProtectedIdentityFile.maxPlaintext / 3 * 4 + (64 << 10)

    /// The arguments that name the identities to `age --decrypt`.
    var arguments: [String] {
        switch self {
        case .file(let path): ["-i", path]
        case .inMemory: ["-i", "/dev/fd/3"]
        }
    }

    /// The bytes each age reads on its descriptor 3, if any.
    var descriptor3: SecureBytes? {
        if case .inMemory(let identities, _) = self { return identities }
        return nil
    }

    /// The identities in `path` (`what` names them in the passphrase prompt: "the passage
    /// identities"): decrypted now when the file is an age file with a passphrase (binary or
    /// armored), its passphrase asked on the terminal; read now when it is not a regular file;
    /// else the path, for age. Refused before any age runs when there is no terminal to ask on,
    /// or no passphrase typed decrypts it.
    static func load(_ path: String, naming what: String, limits: KDFLimits = .defaults) throws -> AgeIdentitiesFile {
        var info = stat()
        // What cannot be read here (a folder, a missing file, one over the limit) is left to age, which says why.
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { return .file(path) }
        let regular = (info.st_mode & S_IFMT) == S_IFREG
        guard !regular || Int(info.st_size) <= maxFileLength else { return .file(path) }
        var bytes = try Input.readFile(path, purpose: "the age identities", limit: maxFileLength)
        defer { wipe(&bytes) }
        guard let sealed = try AgeProtectedIdentityFile.parseIfProtected(bytes, source: path) else {
            return regular ? .file(path) : .inMemory(SecureBytes(copying: bytes), source: path)
        }
        try sealed.checkWork(limits)
        guard Terminal.isAvailable else { throw CLIError.identitiesFileNoTerminal(file: path) }
        let asker = IdentityPassphraseSource(.prompt).provider(naming: "\(what) \(path)")
        var attempt = 1
        while let passphrase = try asker.passphrase(for: path, attempt: attempt) {
            if let identities = try sealed.decryptedFile(passphrase: passphrase, limits: limits) {
                return .inMemory(identities, source: path)
            }
            attempt += 1
        }
        throw CLIError.identitiesFilePassphraseWrong(file: path, tries: attempt - 1)
    }
}
