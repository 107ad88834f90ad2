import KDF
import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The identities a passage store is decrypted with

/// The age identities file of `import --format passage` (PASSAGE_IDENTITIES_FILE, else
/// ~/.passage/identities), as each `age --decrypt` of the store gets it.
///
/// A plain identities file is named to age (`-i FILE`), as passage does. One encrypted with a
/// passphrase (`age -p`, which age and passage accept) is decrypted once, here, before any age
/// runs: its passphrase asked once on the terminal (three tries), the identities kept in guarded
/// memory and given to each age through a pipe on its descriptor 3 (`-i /dev/fd/3`), never a
/// file, an argument or a variable. (Several ages each asking on the terminal at once split the
/// typed line between them, and undo each other's echo-off: recheck60 R1.) Plugin identities
/// inside still work: age reads them and runs the plugin.
enum PassageIdentities {
    /// age reads the file itself.
    case file(String)
    /// The decrypted identities of the protected file at `source`, for `age -i /dev/fd/3`.
    case decrypted(SecureBytes, source: String)

    /// The largest identities file read to see whether it is protected: an `age -p` file of the
    /// largest identity file vaultfile decrypts (`AgeProtectedIdentityFile.maxPlaintext`), armored.
    static let maxFileLength = AgeProtectedIdentityFile.maxPlaintext / 3 * 4 + (64 << 10)

    /// The arguments that name the identities to `age --decrypt`.
    var arguments: [String] {
        switch self {
        case .file(let path): ["-i", path]
        case .decrypted: ["-i", "/dev/fd/3"]
        }
    }

    /// The bytes each age reads on its descriptor 3, if any.
    var descriptor3: SecureBytes? {
        if case .decrypted(let identities, _) = self { return identities }
        return nil
    }

    /// The identities in `path`: decrypted now when the file is an age file with a passphrase
    /// (binary or armored), its passphrase asked on the terminal; else the path, for age. Refused
    /// before any age runs when there is no terminal to ask on, or no passphrase typed decrypts it.
    static func load(_ path: String, limits: KDFLimits = .defaults) throws -> PassageIdentities {
        // A FIFO or a device is left to age, unread: reading it here would consume it.
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= maxFileLength else { return .file(path) }
        var bytes = try Input.readFile(path, purpose: "the age identities", limit: maxFileLength)
        defer { wipe(&bytes) }
        guard let sealed = try AgeProtectedIdentityFile.parseIfProtected(bytes, source: path) else { return .file(path) }
        try sealed.checkWork(limits)
        guard Terminal.isAvailable else { throw CLIError.identitiesFileNoTerminal(file: path) }
        let asker = IdentityPassphraseSource(.prompt).provider(naming: "the passage identities \(path)")
        var attempt = 1
        while let passphrase = try asker.passphrase(for: path, attempt: attempt) {
            if let identities = try sealed.decryptedFile(passphrase: passphrase, limits: limits) {
                return .decrypted(identities, source: path)
            }
            attempt += 1
        }
        throw CLIError.identitiesFilePassphraseWrong(file: path, tries: attempt - 1)
    }
}
