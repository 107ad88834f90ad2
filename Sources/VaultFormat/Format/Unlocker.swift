import KDF
import SecureMemory
import VaultModel

// MARK: - What unlocks a vault

/// Everything that may unlock one vault, tried in a fixed order on the header just read, as age
/// treats a known file key as one more identity: a file key known ahead (`fileKey`), then the
/// key a lookup finds for the header (the agent's, docs/AGENT.md), then the unlock sources
/// (`credentials`: identities, keyfiles, recovery codes, passwords) under the KDF caps.
///
/// A file key, found or given, is used only if the header MAC verifies under it; one that does
/// not is passed over for the next source. The credentials are asked for only when no key
/// verified, so that a password is read only when the agent had none; a caller that must read
/// the password before the vault (no agent to ask) reads it first and hands the list in.
/// When no source is left, a key that did not verify is refused (`VaultError.fileKeyRejected`).
public struct Unlocker {
    /// Finds the file key of a vault from its parsed header (the agent's answer), or nil when none
    /// is known. A key it returns is used only if the header MAC verifies under it.
    public typealias FileKeyLookup = (VaultHeader) throws -> SecureBytes?

    /// Unlock sources with what their KDF runs need: the caps and a progress callback.
    public struct Credentials {
        /// The sources, tried in order.
        public var list: [UnlockCredential]
        /// The KDF caps over the slots tried (`KDFBudget`).
        public var limits: KDFLimits
        /// Called before each KDF run, so that a caller can say what is happening.
        public var willDeriveKey: ((KDFParameters) -> Void)?
        /// Asked after a wrong password (`VaultError.wrongPassword`) for the sources of another try
        /// (a password typed again at a prompt); nil from it, or no `retry`, ends the tries with
        /// that error, and what it throws ends them with its own.
        public var retry: (() throws -> [UnlockCredential]?)?
        /// Asked, with the header, when the sources tried so far opened nothing (`retry` included),
        /// for the sources of a later step: the command line's default identity, then its password
        /// prompt, each only when the vault has a slot of its kind. Nil from it ends the tries with
        /// `wrongPassword` (every source tried a password) or `noKeyslotOpens` naming every source
        /// tried; what it throws ends them with its own error. A store asks it without the vault's
        /// lock, since a step may prompt (`StepRunner`).
        public var next: ((UnlockProgress) throws -> [UnlockCredential]?)?

        /// Sources under `limits`.
        public init(_ list: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil) {
            self.list = list
            self.limits = limits
            self.willDeriveKey = willDeriveKey
        }
    }

    /// A file key known ahead, tried first.
    public var fileKey: SecureBytes?
    /// Asked for the key of the header read, after `fileKey`.
    public var lookup: FileKeyLookup?
    /// The unlock sources and their caps, made (once per unlock) only when no key verified: the
    /// agent's hit reads no password, no caps, no variable. Nil: none.
    public var credentials: (() throws -> Credentials)?
    /// Whether `credentials` were read before the vault (no agent to ask first): in hand, so that
    /// nothing waits for them once the header is read. When false, reading them may prompt or run
    /// a command, and the store reads them without the vault's lock and reads a file that changed
    /// meanwhile again (`VaultStore+Access.swift`).
    public private(set) var credentialsInHand = false
    /// A key already unwrapped and verified for the header being opened, and the slot that gave it:
    /// the store's own unlock step hands it to `VaultCodec.open`, which uses it as it is (the MAC
    /// was checked once, on that header).
    package var unlocked: Unlocked?
    /// Who signs the seals of a signed vault opened with a looked-up key (no slot's secret in
    /// hand): the agent under its delegation (`AgentSealSigner`, docs/AGENT.md). Nil: nobody.
    public var lookupSigner: (any SealSigner)?

    /// A file key whose header MAC verified, and the slot that gave it (nil for a known or looked-up key).
    public typealias Unlocked = (fileKey: SecureBytes, opened: OpenedSlot?)

    /// An unlocker from any of the sources; with none it opens nothing.
    public init(fileKey: SecureBytes? = nil, lookup: FileKeyLookup? = nil, credentials: (() throws -> Credentials)? = nil) {
        self.fileKey = fileKey
        self.lookup = lookup
        self.credentials = credentials
    }

    /// An unlocker of `credentials` already read, tried in order under `limits` (and after a wrong
    /// password, with what `retry` gives: `Credentials.retry`; then the later steps of `next`).
    public init(credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)? = nil,
                retry: (() throws -> [UnlockCredential]?)? = nil, next: ((UnlockProgress) throws -> [UnlockCredential]?)? = nil) {
        var given = Credentials(credentials, limits: limits, willDeriveKey: willDeriveKey)
        given.retry = retry
        given.next = next
        self.init(credentials: { given })
        credentialsInHand = true
    }

    /// The file key of `header`, its MAC verified exactly once, and the slot that gave it (nil
    /// when a known or looked-up key did): `verifiedKey`, else the unlock sources (`readCredentials`,
    /// `unlock(_:with:)`).
    func unlock(_ header: VaultHeader) throws -> Unlocked {
        if let unlocked { return unlocked }
        if let key = try verifiedKey(for: header) { return (key, nil) }
        return try Self.unlock(header, with: readCredentials())
    }

    /// The known key, else the key the lookup finds, if the header MAC verifies under it; nil when neither does.
    package func verifiedKey(for header: VaultHeader) throws -> SecureBytes? {
        if let fileKey, VaultCodec.verifies(header, fileKey: fileKey) { return fileKey }
        if let lookup, let key = try lookup(header), VaultCodec.verifies(header, fileKey: key) { return key }
        return nil
    }

    /// The unlock sources and their caps, read now when they are lazy; with none, a key that did
    /// not verify is refused (`VaultError.fileKeyRejected`).
    package func readCredentials() throws -> Credentials {
        guard let credentials else { throw VaultError.fileKeyRejected }
        return try credentials()
    }

    /// Runs a later step (`Credentials.next`, which may prompt) on `header`: the store runs it
    /// without the vault's lock and hands back the header of the file as it is after the step (read
    /// again when the file changed meanwhile), else `header` itself.
    package typealias StepRunner = (_ header: VaultHeader, _ step: () throws -> [UnlockCredential]?) throws
        -> (header: VaultHeader, sources: [UnlockCredential]?)

    /// Unlocks `header` with `sources`, failing as `VaultCodec.unlock` says (wrong password, a cap,
    /// no keyslot opens); a key they unwrap under which the MAC fails is a tampered header.
    /// A wrong password is tried again with what `sources.retry` gives, for as long as it gives some;
    /// when nothing opened, `sources.next` is asked for the sources of a later step (run through
    /// `runStep`), for as long as it gives some. A cap or any other error ends the tries at once.
    ///
    /// `preferringSigner` (a write): in a signed vault the slots that can sign its seal are tried
    /// first, through every later step; a slot that cannot (post-quantum, plugin) that a source
    /// opens is held aside (`UnlockProgress.heldSlot`) and used only when no step opens one that
    /// can: its write is then refused as before (`slotCannotSign`), but a password given beside a
    /// post-quantum identity, or typed at the prompt after one, writes.
    package static func unlock(_ header: VaultHeader, with sources: Credentials, preferringSigner: Bool = false,
                               runStep: StepRunner? = nil) throws -> Unlocked {
        var header = header
        var list = sources.list
        var tried: [UnlockCredential] = []
        var steps = 0
        var aside: (header: VaultHeader, unlocked: Unlocked)?
        while true {
            let failure: VaultError
            let signing = preferringSigner && header.isSigned
            do {
                return try unlockOnce(header, with: &list, sources, choice: signing ? .signing : .all)
            } catch let error as VaultError where error.meansNothingOpened {
                failure = error
            }
            tried += list
            if signing, aside == nil, let found = try openAside(header, list, sources) { aside = (header, found) }
            guard let next = sources.next else {
                if let aside { return try heldSlot(aside, tried: tried, sources) }
                throw failure
            }
            let progress = UnlockProgress(header: header, step: steps, tried: tried.map(\.source), failure: Self.nothingOpened(header, tried: tried),
                                          heldSlot: aside?.unlocked.opened)
            steps += 1
            let asked = { try next(progress) }
            let (current, more) = try runStep?(header, asked) ?? (header, try asked())
            // The file changed while the step ran: what was held aside opened the old header.
            if let held = aside, held.header != current { aside = try openAside(current, tried, sources).map { (current, $0) } }
            guard let more else {
                if let aside { return try heldSlot(aside, tried: tried, sources) }
                throw Self.nothingOpened(current, tried: tried)
            }
            header = current
            list = more
        }
    }

    /// What a write ends with when only `held`, a slot that cannot sign, opened after every source
    /// in `tried`: a password among them that opens no slot at all is a wrong password
    /// (`wrongPassword`, exit 3 as for any), not the held slot's refusal (`slotCannotSign`), whose
    /// advice is to give a password; else the held slot.
    private static func heldSlot(_ held: (header: VaultHeader, unlocked: Unlocked), tried: [UnlockCredential], _ sources: Credentials) throws -> Unlocked {
        let passwords = tried.filter(\.isPassword)
        if !passwords.isEmpty, try openAside(held.header, passwords, sources) == nil { throw VaultError.wrongPassword }
        return held.unlocked
    }

    /// The slot that cannot sign that one of `tried` opens on `header` (`SlotChoice.notSigning`),
    /// or nil when none does; the slots that can sign were tried already, so no KDF runs again.
    private static func openAside(_ header: VaultHeader, _ tried: [UnlockCredential], _ sources: Credentials) throws -> Unlocked? {
        var list = tried
        do {
            return try unlockOnce(header, with: &list, sources, choice: .notSigning, retrying: false)
        } catch let error as VaultError where error.meansNothingOpened {
            return nil
        }
    }

    /// The sources in `list` on `header`, then `retry`'s after a wrong password (unless `retrying`
    /// is false); `list` is left holding the last sources tried.
    private static func unlockOnce(_ header: VaultHeader, with list: inout [UnlockCredential], _ sources: Credentials,
                                   choice: SlotChoice = .all, retrying: Bool = true) throws -> Unlocked {
        while true {
            let fileKey: SecureBytes, opened: OpenedSlot?
            do {
                (fileKey, opened) = try VaultCodec.unlock(header, credentials: list, limits: sources.limits, willDeriveKey: sources.willDeriveKey,
                                                          choice: choice)
            } catch VaultError.wrongPassword {
                guard retrying else { throw VaultError.wrongPassword }
                guard !list.isEmpty, let again = try sources.retry?() else { throw VaultError.wrongPassword }
                list = again
                continue
            }
            guard constantTimeEqual(VaultCodec.headerMAC(header, fileKey: fileKey), header.mac) else { throw VaultError.headerTampered }
            return (fileKey, opened)
        }
    }

    /// What nothing opening `header` with `tried` is: `wrongPassword` when every source was a
    /// password and the vault has no slot this build skipped, else `noKeyslotOpens` naming each source once.
    static func nothingOpened(_ header: VaultHeader, tried: [UnlockCredential]) -> VaultError {
        let unknownTypes = header.keyslots.compactMap { slot -> UInt8? in if case .unknown(let type, _) = slot { return type } else { return nil } }
        if tried.allSatisfy(\.isPassword) && unknownTypes.isEmpty { return .wrongPassword }
        var names: [String] = []
        for source in tried.map(\.source) where !names.contains(source) { names.append(source) }
        return .noKeyslotOpens(sources: names, unknownTypes: unknownTypes)
    }
}

// MARK: - A later step

/// Where an unlock stands when the sources tried so far opened nothing: what
/// `Unlocker.Credentials.next` is asked with.
public struct UnlockProgress {
    /// The header being opened.
    public let header: VaultHeader
    /// How many later steps were taken before this one in this unlock (0 for the first).
    public let step: Int
    /// Every source tried so far, named (never its secret), in order; a name may repeat.
    public let tried: [String]
    /// What nothing opening with every source tried so far means: `wrongPassword` when each was a
    /// password (and the vault has no slot this build skipped), else `noKeyslotOpens` naming each once.
    public let failure: VaultError
    /// In a write to a signed vault: a slot that cannot sign (post-quantum, plugin) that a source
    /// tried so far opens, held aside while later steps look for one that can. Nil from the step
    /// then ends the tries with it (and the write is refused naming it), rather than with `failure`.
    public var heldSlot: OpenedSlot? = nil
}

extension VaultError {
    /// Whether the error says that no source opened a keyslot (as opposed to a cap, damage or tampering).
    var meansNothingOpened: Bool {
        switch self {
        case .wrongPassword, .noKeyslotOpens: return true
        default: return false
        }
    }
}

// MARK: - The one way in

extension VaultCodec {
    /// Unlocks `header` with `unlocker`, then authenticates and decrypts the payload that follows it.
    ///
    /// Order: the unlock sources (`Unlocker`: each keyslot checked against the KDF caps before
    /// its KDF runs) and the header MAC (tampering), checked once whatever opened it; the keyslot
    /// metadata (format 1.1); every payload chunk (damage); the contents. Nothing decrypted is
    /// returned before all of it has authenticated. The store reads `payload` from the file chunk
    /// by chunk; a whole file in memory comes from `parse`.
    package static func open(header: VaultHeader, payload: inout some CiphertextSource, with unlocker: Unlocker) throws -> UnlockedVault {
        let (fileKey, opened) = try unlocker.unlock(header)
        let unlocked = try decrypt(header: header, payload: &payload, authenticatedBy: fileKey, opened: opened)
        if opened == nil, unlocked.sealSigner == nil { unlocked.sealSigner = unlocker.lookupSigner }
        return unlocked
    }

    /// A whole vault file in memory: its size checked against the format's limit, its header
    /// parsed (structure and checksum), and the ciphertext after it, for `open` (tests, the fuzz target).
    package static func parse(_ file: [UInt8], path: String) throws -> (header: VaultHeader, payload: CiphertextBytes) {
        guard file.count <= VaultLimits.maxFileLength else {
            throw VaultError.limitExceeded("\(path) is \(file.count) bytes; the largest vault this build reads is \(VaultLimits.maxFileLength) bytes")
        }
        let (header, headerLength) = try VaultHeader.parse(file, path: path)
        return (header, CiphertextBytes(bytes: file[headerLength...]))
    }

    /// Whether `fileKey` is the file key of `header`: a 32-byte key under which the header MAC
    /// verifies (compared in constant time).
    ///
    /// A key of an older version of the vault (before a `passwd` rotated it) verifies only the
    /// headers sealed under it, so this also picks the right one among several keys of one vault id.
    public static func verifies(_ header: VaultHeader, fileKey: SecureBytes) -> Bool {
        guard fileKey.count == XChaCha20Poly1305.keyLength else { return false }
        return constantTimeEqual(headerMAC(header, fileKey: fileKey), header.mac)
    }
}
