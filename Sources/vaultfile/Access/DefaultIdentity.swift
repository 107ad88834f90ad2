import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Where identities are looked for by default

/// The default identities: `$XDG_CONFIG_HOME/vaultfile/identity.txt` (`~/.config/vaultfile/identity.txt`,
/// where the README's `vaultfile keygen -o` puts one), then every file of the folder
/// `$XDG_CONFIG_HOME/vaultfile/identities/` in name order. Each file is an age identity file
/// (several `AGE-SECRET-KEY-1…` lines, `#` comments, blank lines) or an OpenSSH private key.
///
/// Tried after every explicit source and before the password prompt (`UnlockSteps`); they are
/// not a "given" source: when they open nothing, the prompt follows as it would without them.
/// A missing file or folder is silence. A file that cannot be read or parsed is skipped with a
/// warning naming it (never its contents), so that a broken default identity never stops another
/// source from opening the vault. A file other users may read or write is used, with a warning,
/// as ssh warns of an unprotected key (a refusal would lock people out of their vaults over a mode).
enum DefaultIdentity {
    /// The folder: `$XDG_CONFIG_HOME/vaultfile` when that variable holds an absolute path (the XDG
    /// spec ignores a relative one), else `$HOME/.config/vaultfile`; nil without either.
    static var directory: String? {
        if let config = environment("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/vaultfile" }
        guard let home = environment("HOME") else { return nil }
        return home + "/.config/vaultfile"
    }

    /// The file of one or more identities.
    static var file: String? { directory.map { $0 + "/identity.txt" } }

    /// The folder of more identity files.
    static var folder: String? { directory.map { $0 + "/identities" } }

    /// The most files read from `folder`; more are skipped with a warning.
    static let maxFolderFiles = 64

    /// Where identities are looked for, for messages: the file and the folder.
    static var locations: String {
        guard let file, let folder else { return "nowhere: neither XDG_CONFIG_HOME nor HOME is set" }
        return "\(file) and \(folder)/"
    }

    // MARK: Reading

    /// The identities of every default file that can be read, in order: the file, then the
    /// folder's files by name. Problems are warnings (`DefaultIdentity` says which). A protected
    /// one (`IdentityPassphrases`) asks `passphrases` only once the vault has a slot of its kind.
    /// `given` identities were read from the explicit sources: they count toward `maxIdentities`.
    static func credentials(passphrases: IdentityPassphraseSource, given: Int = 0) -> [UnlockCredential] {
        guard let file, let folder else { return [] }
        var result = read(file, missingIsSilent: true, passphrases: passphrases, limit: KeySourceOptions.maxIdentities - given)
        for name in folderFiles(folder) {
            result += read(folder + "/" + name, missingIsSilent: false, passphrases: passphrases, limit: KeySourceOptions.maxIdentities - given - result.count)
        }
        return result
    }

    /// The identities in `path`; none, with a warning, when it cannot be read or parsed (none,
    /// silently, when it does not exist and `missingIsSilent`).
    private static func read(_ path: String, missingIsSilent: Bool, passphrases: IdentityPassphraseSource, limit: Int) -> [UnlockCredential] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            var link = stat()
            if errno == ENOENT && missingIsSilent && lstat(path, &link) != 0 { return [] }
            Messages.warning("the default identity \(path) cannot be read (\(String(cString: strerror(errno)))); it is skipped")
            return []
        }
        // A FIFO, a device or a folder is no identity file (and a mode warning would advise a chmod of it).
        guard info.st_mode & S_IFMT == S_IFREG else {
            Messages.warning("the default identity \(path) is not a regular file; this default identity is skipped")
            return []
        }
        warnIfExposed(path, info)
        let source = "the default identity \(path)"
        do {
            var bytes = try KeyFiles.read(path)
            defer { wipe(&bytes) }
            return try KeySourceOptions.identities(in: bytes, source: source, name: path, passphrases: passphrases, skippable: true, limit: limit)
        } catch {
            // The parsers name the source ("the default identity PATH, line 3: …") and never quote a key.
            Messages.warning("\(ErrorReport(error)?.description ?? "the default identity \(path) cannot be read"); this default identity is skipped")
            return []
        }
    }

    /// Warns, as ssh does of an unprotected private key, when other users may read or write the
    /// file, or it is another user's; the file is used all the same.
    private static func warnIfExposed(_ path: String, _ info: stat) {
        let mode = info.st_mode & 0o777
        if info.st_uid != geteuid() {
            Messages.warning("the default identity \(path) belongs to uid \(info.st_uid), not to you (uid \(geteuid())); "
                             + "whoever owns it can change it: keep your identities in files of your own")
        } else if mode & 0o077 != 0 {
            Messages.warning("the default identity \(path) can be read or changed by other users (mode \(octal(mode))); "
                             + "it holds a secret key: chmod 600 \(shellPath(path))")
        }
    }

    /// The names of the files to read in `folder`, sorted: every name but hidden ones (`.…`) and
    /// public keys (`….pub`, which ssh keeps beside its private keys); at most `maxFolderFiles`.
    private static func folderFiles(_ folder: String) -> [String] {
        guard let stream = opendir(folder) else {
            if errno != ENOENT { Messages.warning("the default identity folder \(folder) cannot be read (\(String(cString: strerror(errno)))); it is skipped") }
            return []
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard !name.hasPrefix("."), !name.hasSuffix(".pub") else { continue }
            names.append(name)
        }
        names.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        if names.count > maxFolderFiles {
            Messages.warning("the default identity folder \(folder) holds \(names.count) files; only the first \(maxFolderFiles) by name are read")
            names.removeSubrange(maxFolderFiles...)
        }
        return names
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: Which slots they are for

    /// Whether `credential` may open a slot of `header`: an age identity a recipient slot, an
    /// ssh-ed25519 key an ssh-ed25519 slot. A kind added later is tried (it says no itself).
    ///
    /// A protected identity is asked for its passphrase only when the vault has a slot of its kind
    /// (`ProtectedIdentity.mayOpen`), never for a vault it cannot open.
    static func mayOpen(_ credential: UnlockCredential, in header: VaultHeader) -> Bool {
        if case .ageIdentity = credential.secret { return header.hasSlot(of: .recipient) }
        if case .sshIdentity = credential.secret { return header.hasSlot(of: .sshEd25519) }
        if case .protectedIdentity(let protected) = credential.secret { return protected.mayOpen(header) }
        if case .sshRSAIdentity = credential.secret { return header.hasSSHRSASlot }
        if case .pqIdentity = credential.secret { return header.hasPostQuantumSlot }
        if case .pluginIdentity = credential.secret { return header.hasPluginSlot }
        return true
    }
}
