import SecureMemory
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - set --ssh-key

extension VaultfileCommand.Set {
    /// `set NAME --ssh-key`: the OpenSSH private key from stdin or --value-file, read and checked
    /// (a protected one decrypted with a passphrase from the identity passphrase sources, asked
    /// once) before the vault is touched, then stored re-encoded without a passphrase with its
    /// fields (`SSHKeyEntry`). Prints nothing on success: `get NAME --field public` gives the line.
    func storeSSHKey() throws {
        let source = valueFile.map { $0 == "-" ? "standard input" : $0 } ?? "standard input"
        if valueFile == nil && Stream.isTerminal(STDIN_FILENO) {
            throw CLIError.refused("--ssh-key reads the key from standard input, which is a terminal",
                                   hint: "give the key file: vaultfile set \(name) --ssh-key --value-file ~/.ssh/id_ed25519 (or < FILE)")
        }
        var bytes = try valueFile.map { try Input.readFile($0, purpose: "the ssh key", limit: 1 << 20) }
            ?? Input.readAll(STDIN_FILENO, what: "standard input", purpose: "the ssh key", limit: 1 << 20)
        defer { wipe(&bytes) }
        let key = try SSHKeyReading.key(in: bytes, source: source, passphrases: unlock.keys.identityPassphrases())
        try unlock.update { unlocked in
            try unlocked.vault.checkNewName(name, allowingFormatCharacters: formatCharacters.allowFormatCharacters)
            try SSHKeyEntry.store(key, as: name, in: &unlocked.vault)
        }
    }
}

// MARK: - Reading a key file, protected or not

/// Reads an OpenSSH private key given on the command line, asking for the passphrase of a
/// protected one.
enum SSHKeyReading {
    /// The checked key in `bytes` (named `source` in messages). A protected key's passphrase comes
    /// from `passphrases` (--identity-passphrase-file/-fd, VAULTFILE_IDENTITY_PASSPHRASE_FILE, else
    /// the terminal: "Passphrase for SOURCE: ", three tries); none that decrypts it is
    /// `SSHKeyError.passphraseWrong` (exit 3). Every passphrase is in guarded memory.
    static func key(in bytes: [UInt8], source: String, passphrases: IdentityPassphraseSource) throws -> SSHPrivateKey {
        switch try SSHKeyFile.read(bytes, source: source) {
        case .plain(let key): return key
        case .protected(let sealed):
            let provider = passphrases.provider(naming: "the ssh key \(source)")
            var attempt = 1
            while let passphrase = try provider.passphrase(for: source, attempt: attempt) {
                if let key = try sealed.decrypt(passphrase: passphrase) { return key }
                attempt += 1
            }
            throw SSHKeyError.passphraseWrong(source: source, tries: attempt - 1)
        }
    }
}
