import KDF
import SecureMemory
import VaultModel

// MARK: - Where a passphrase comes from

/// Gives the passphrase of a protected identity: the command line's sources (a file, a
/// descriptor, the terminal). The library never reads one itself.
public protocol PassphraseProvider: Sendable {
    /// The passphrase for the identity read from `source`, for try number `attempt` (1 first; a
    /// later try follows a wrong passphrase), or nil when there is no further try (a file gives
    /// one passphrase; a prompt three). Throws when there is no way to get one at all (no source
    /// and no terminal): the caller stops there.
    func passphrase(for source: String, attempt: Int) throws -> SecureBytes?

    /// Told that a skippable identity (`ProtectedIdentity.skippable`) is passed over before any
    /// passphrase is asked, and why (its work over a cap): the command line says so.
    func passedOver(because error: any Error)
}

extension PassphraseProvider {
    /// Nothing to say by default.
    public func passedOver(because error: any Error) {}
}

// MARK: - A protected identity, opened when needed

/// An identity under a passphrase (`OpenSSHProtectedKey`, `AgeProtectedIdentityFile`), read
/// and checked when its file is, and decrypted only when a vault has a keyslot of its kind
/// (`mayOpen`): its passphrase is never asked for a vault it cannot open. `VaultCodec.unlock`
/// calls `open()` at that point.
///
/// Decrypted once: the identities are kept (in guarded memory) for the rest of this value's
/// life, so a second unlock in one command (a header read again) asks nothing again.
public final class ProtectedIdentity: Sendable {
    /// What is under the passphrase.
    public enum Sealed: Sendable {
        /// A passphrase-protected OpenSSH ed25519 key.
        case openSSH(OpenSSHProtectedKey)
        /// An age identity file encrypted with a passphrase (`age -p`).
        case ageFile(AgeProtectedIdentityFile)
    }

    /// The protected contents.
    public let sealed: Sealed
    /// Where it came from, for messages and prompts ("--identity ~/.ssh/id_ed25519").
    public let source: String
    /// Whether the identity may be passed over (a default identity): when its provider gives no
    /// passphrase (none at hand, or the user skipped it) or none it gives decrypts it, it opens
    /// nothing instead of stopping the unlock, so that the sources after it are still tried.
    public let skippable: Bool
    private let passphrases: any PassphraseProvider
    private let opened = LockedValue<[UnlockCredential.Secret]?>(nil)

    /// `sealed` from `source`, its passphrase asked of `passphrases` when first needed.
    public init(_ sealed: Sealed, source: String, passphrases: any PassphraseProvider, skippable: Bool = false) {
        self.sealed = sealed
        self.source = source
        self.passphrases = passphrases
        self.skippable = skippable
    }

    /// Whether `header` has a keyslot the identities inside may open, before the passphrase is
    /// asked for: an ssh-ed25519 slot for an OpenSSH key; for an age identity file (which may
    /// hold `AGE-SECRET-KEY-1…` and `AGE-SECRET-KEY-PQ-1…` lines, unknown until decrypted) an
    /// age recipient slot or a post-quantum slot.
    public func mayOpen(_ header: VaultHeader) -> Bool {
        switch sealed {
        case .openSSH: header.hasSlot(of: .sshEd25519)
        case .ageFile: header.hasSlot(of: .recipient) || header.hasPostQuantumSlot
        }
    }

    /// The identities inside, decrypted on the first call with a passphrase from the provider,
    /// tried as often as it gives one; `VaultError.identityPassphraseWrong` when none decrypts.
    /// A KDF over `limits` is refused before the passphrase is asked for (exit 6); a malformed
    /// contents error, or the provider's own, ends the tries at once. A `skippable` identity
    /// opens nothing (an empty list, kept) where the others throw the provider's error or
    /// `identityPassphraseWrong`.
    public func open(limits: KDFLimits) throws -> [UnlockCredential.Secret] {
        if let done = opened.withLock({ $0 }) { return done }
        if case .ageFile(let file) = sealed {
            do {
                try file.checkWork(limits)
            } catch {
                guard skippable else { throw error }
                passphrases.passedOver(because: error)
                opened.withLock { $0 = [] }
                return []
            }
        }
        var attempt = 1
        while true {
            let given: SecureBytes?
            do {
                given = try passphrases.passphrase(for: source, attempt: attempt)
            } catch {
                guard skippable else { throw error }
                passphrases.passedOver(because: error)
                break
            }
            guard let passphrase = given else { break }
            if let secrets = try decrypt(with: passphrase, limits: limits) {
                opened.withLock { $0 = secrets }
                return secrets
            }
            attempt += 1
        }
        guard skippable else { throw VaultError.identityPassphraseWrong(source: source, tries: attempt - 1) }
        opened.withLock { $0 = [] }
        return []
    }

    /// The identities under `passphrase`, or nil when it is the wrong one.
    private func decrypt(with passphrase: SecureBytes, limits: KDFLimits) throws -> [UnlockCredential.Secret]? {
        switch sealed {
        case .openSSH(let key):
            return try key.decrypt(passphrase: passphrase).map { [.sshIdentity($0)] }
        case .ageFile(let file):
            return try file.decrypt(passphrase: passphrase, limits: limits).map { identities in
                identities.map { identity -> UnlockCredential.Secret in
                    switch identity {
                    case .x25519(let identity): .ageIdentity(identity)
                    case .postQuantum(let identity): .pqIdentity(identity)
                    }
                }
            }
        }
    }
}
