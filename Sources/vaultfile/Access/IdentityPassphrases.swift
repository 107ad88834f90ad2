import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Protected identities among the identity sources

extension KeySourceOptions {
    /// The credential of a passphrase-protected identity in `bytes` (an OpenSSH key whose cipher is
    /// not "none", or an age file encrypted with a passphrase, as `age-keygen | age -p` makes), or
    /// nil when they hold none (an unencrypted key, an age identity file: the caller reads those).
    /// The key is read and checked now (an OpenSSH key's rounds against the cap: exit 6),
    /// its passphrase asked of `passphrases` only when a vault has a slot of its kind
    /// (`ProtectedIdentity`). `name` names the key in the prompt ("Passphrase for NAME: ").
    ///
    /// Every identity source calls this: --identity, the identity variables, and the default
    /// identity files, which are `skippable`: passed over, with a note, when no passphrase is at
    /// hand, the user skips it at the prompt (Enter) or none given decrypts it.
    static func protectedIdentity(in bytes: [UInt8], source: String, name: String,
                                  passphrases: IdentityPassphraseSource, skippable: Bool = false) throws -> [UnlockCredential]? {
        let sealed: ProtectedIdentity.Sealed
        if let key = try OpenSSHProtectedKey.parseIfProtected(bytes, source: source) {
            sealed = .openSSH(key)
        } else if let file = try AgeProtectedIdentityFile.parseIfProtected(bytes, source: source) {
            sealed = .ageFile(file)
        } else {
            return nil
        }
        let identity = ProtectedIdentity(sealed, source: source, passphrases: passphrases.provider(naming: name, skippable: skippable),
                                         skippable: skippable)
        return [UnlockCredential(.protectedIdentity(identity), source: source)]
    }

    /// Where the protected identities of one unlock get their passphrase: `--identity-passphrase-file`,
    /// else `--identity-passphrase-fd`, else `VAULTFILE_IDENTITY_PASSPHRASE_FILE`, else the terminal.
    /// Make it once per list of credentials and hand it to each identity source.
    func identityPassphrases() -> IdentityPassphraseSource {
        if let identityPassphraseFile {
            return IdentityPassphraseSource(.file(identityPassphraseFile, named: "--identity-passphrase-file \(identityPassphraseFile)"))
        }
        if let identityPassphraseFD { return IdentityPassphraseSource(.descriptor(identityPassphraseFD)) }
        if let path = environment("VAULTFILE_IDENTITY_PASSPHRASE_FILE") {
            return IdentityPassphraseSource(.file(path, named: "VAULTFILE_IDENTITY_PASSPHRASE_FILE (\(path))"))
        }
        return IdentityPassphraseSource(.prompt)
    }
}

// MARK: - The passphrase source

/// One passphrase source of protected identities, shared by every protected identity of one list
/// of credentials: a file or descriptor is read once (a descriptor can be read only once), when the
/// first protected identity needs it, and kept in guarded memory, zeroed when the credentials are
/// released at the end of the unlock; the terminal is asked for each key, three tries each, as the
/// password prompt allows.
final class IdentityPassphraseSource: Sendable {
    /// Where the passphrase is read.
    enum Origin: Hashable, Sendable {
        /// A file (`-`: standard input), named in messages by `named`.
        case file(String, named: String)
        /// An open descriptor, read to its end and closed.
        case descriptor(Int32)
        /// The terminal, without echo.
        case prompt

        /// The origin as messages name it.
        var name: String {
            switch self {
            case .file(_, let named): named
            case .descriptor(let fd): "--identity-passphrase-fd \(fd)"
            case .prompt: "the terminal"
            }
        }
    }

    let origin: Origin
    private let passphrase = LockedValue<SecureBytes?>(nil)

    /// The source of `origin`.
    init(_ origin: Origin) { self.origin = origin }

    /// The provider of one key, named `name` in its prompt; `skippable` for a default identity.
    func provider(naming name: String, skippable: Bool = false) -> IdentityPassphrase {
        IdentityPassphrase(source: self, name: name, skippable: skippable)
    }

    /// The passphrase of a file or descriptor: read on the first call, the same after.
    fileprivate func read() throws -> SecureBytes {
        try passphrase.withLock { held in
            if let held { return held }
            let read: SecureBytes
            do {
                switch origin {
                case .file(let path, _): read = try PasswordSource.file(path).read(prompt: "")
                case .descriptor(let fd): read = try PasswordSource.descriptor(fd).read(prompt: "")
                case .prompt: preconditionFailure("the terminal is asked for each key, not read once")
                }
            } catch CLIError.passwordSourceFailed(let why) {
                throw CLIError.identityPassphraseSourceFailed(source: origin.name, why: why)
            }
            held = read
            return read
        }
    }
}

/// The passphrase of one protected key: from its source once, or typed at the terminal up to
/// `UnlockSteps.promptTries` times ("Passphrase for NAME: ", no echo).
///
/// A `skippable` key (a default identity) is passed over instead of stopping the command: its
/// prompt says Enter skips it, and a note says when it is skipped and why.
struct IdentityPassphrase: PassphraseProvider {
    /// The default identities (by file) skipped in this run for lack of a terminal to ask their
    /// passphrase on: `NothingOpens` says them skipped, not tried. One command is one process.
    nonisolated(unsafe) static var skippedWithoutTerminal: Set<String> = []
    /// The default identities (by file) skipped in this run because no passphrase given decrypted
    /// them, with where the passphrase came from: `NothingOpens` says the passphrase was wrong, not
    /// that no keyslot opens with them (they were never tried).
    nonisolated(unsafe) static var skippedWrongPassphrase: [String: String] = [:]

    let source: IdentityPassphraseSource
    let name: String
    var skippable = false

    func passedOver(because error: any Error) {
        Messages.info("\(ErrorReport(error)?.description ?? "\(name) cannot be opened"); this default identity (\(name)) is skipped")
    }

    func passphrase(for identity: String, attempt: Int) throws -> SecureBytes? {
        guard case .prompt = source.origin else {
            if attempt == 1 { return try source.read() }
            if skippable {
                Self.skippedWrongPassphrase[name] = "the passphrase from \(source.origin.name)"
                Messages.info("the passphrase from \(source.origin.name) does not decrypt \(name); this default identity is skipped")
            }
            return nil
        }
        guard attempt <= UnlockSteps.promptTries else {
            if skippable {
                Self.skippedWrongPassphrase[name] = "no passphrase typed"
                Messages.info("no passphrase decrypted \(name); this default identity is skipped")
            }
            return nil
        }
        if attempt > 1 {
            Messages.info("Sorry, that passphrase does not decrypt \(name); try again (\(attempt) of \(UnlockSteps.promptTries)).")
        }
        let prompt = skippable ? "Passphrase for \(name) (Enter skips it): " : "Passphrase for \(name): "
        guard let typed = try? Terminal.readSecret(prompt: prompt) else {
            // readSecret fails only when there is no terminal to ask on.
            guard skippable else { throw CLIError.noIdentityPassphraseSource(identity: identity) }
            Self.skippedWithoutTerminal.insert(name)
            Messages.note("\(name) is protected by a passphrase and there is no terminal to ask it on; this default identity is skipped "
                          + "(set VAULTFILE_IDENTITY_PASSPHRASE_FILE to use it without a terminal)")
            return nil
        }
        return skippable && typed.count == 0 ? nil : typed
    }
}
