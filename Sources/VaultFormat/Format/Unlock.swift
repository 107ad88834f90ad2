import KDF
import SecureMemory
import VaultModel

// MARK: - Secrets that open keyslots

/// A secret that may open a keyslot, and where it came from: the source is named in messages
/// ("--identity ci.key", "VAULTFILE_IDENTITY"), the secret never.
public struct UnlockCredential: Sendable {
    /// The secret itself.
    public enum Secret: Sendable {
        /// A password: opens v1 password slots and format 1.1 password slots.
        case password(SecureBytes)
        /// An age X25519 identity: opens recipient slots.
        case ageIdentity(AgeIdentity)
        /// An unencrypted OpenSSH ed25519 key: opens ssh-ed25519 slots.
        case sshIdentity(SSHEd25519Identity)
        /// An OpenSSH ssh-rsa key: opens ssh-rsa slots.
        case sshRSAIdentity(SSHRSAIdentity)
        /// An age post-quantum identity (`AGE-SECRET-KEY-PQ-1…`): opens mlkem768x25519 slots.
        case pqIdentity(AgePQIdentity)
        /// A keyfile, read (streamed) for each keyfile slot tried.
        case keyfile(path: String)
        /// A recovery code: opens recovery slots.
        case recovery(RecoveryCode)
        /// An identity under a passphrase, decrypted only for a vault with a slot of its kind.
        case protectedIdentity(ProtectedIdentity)
        /// An age plugin identity (`AGE-PLUGIN-NAME-1…`): opens plugin slots through its plugin.
        case pluginIdentity(AgePluginIdentity)
    }

    /// The secret.
    public let secret: Secret
    /// Where it came from, for messages.
    public let source: String

    /// A credential.
    public init(_ secret: Secret, source: String) {
        self.secret = secret
        self.source = source
    }

    /// Whether the secret is a password.
    var isPassword: Bool {
        if case .password = secret { return true }
        return false
    }
}

/// The slot that opened a vault, and with what: what `slot rm` and `rekey` need to re-salt it.
public struct OpenedSlot: Sendable {
    /// The slot's position in the header.
    public let index: Int
    /// The credential that opened it.
    public let credential: UnlockCredential
    /// The key the credential derives for this slot (what the metadata must hold); nil for a v1 password slot.
    let derivedKey: [UInt8]?
    /// The slot's signing secret (guarded): signs the seals of a signed vault; nil for a v1 password slot.
    let signingKey: SlotSigningKey?

    init(index: Int, credential: UnlockCredential, derivedKey: [UInt8]?, signingKey: SlotSigningKey? = nil) {
        self.index = index
        self.credential = credential
        self.derivedKey = derivedKey
        self.signingKey = signingKey
    }
}

// MARK: - Unlocking a header

/// Which keyslots an unlock may open: a write to a signed vault tries first the slots that can
/// sign its seal, and the others only when none of those opens (`Unlocker.unlock`).
package enum SlotChoice: Sendable {
    /// Every slot.
    case all
    /// The slots that can sign (a password, keyfile, recovery code, X25519, ssh-ed25519 or ssh-rsa slot).
    case signing
    /// The others: post-quantum, plugin, v1 password slots and kinds this build does not know.
    case notSigning

    /// Whether `slot` may be opened.
    func allows(_ slot: Keyslot) -> Bool {
        switch self {
        case .all: return true
        case .signing: return SealScheme.direct(forSlotType: slot.typeByte) != nil
        case .notSigning: return SealScheme.direct(forSlotType: slot.typeByte) == nil
        }
    }
}

extension VaultCodec {
    /// The step of `open(header:payload:with:)` once the header MAC has verified under `fileKey`
    /// (`Unlocker.unlock` checks it exactly once: a MAC is a key derivation and an HMAC of the
    /// header): the metadata (format 1.1), checked against the slot that opened, then the payload.
    static func decrypt(
        header: VaultHeader, payload: inout some CiphertextSource, authenticatedBy fileKey: SecureBytes, opened: OpenedSlot?
    ) throws -> UnlockedVault {
        var metadata: [SlotMetadata]? = nil, record: SealRecord? = nil
        if header.usesKeyslots11 {
            let (entries, sealRecord) = try MetadataBlock.open(header, fileKey: fileKey)
            // The secret derived this key: the metadata, from which every later rotation wraps
            // the slot, must name it, or a rotation would lock the slot's holder out.
            if let opened, let derived = opened.derivedKey, entries[opened.index].publicKey != derived {
                throw VaultError.headerDamaged("keyslot \(opened.index)'s public key in the metadata does not match the key its secret derives")
            }
            metadata = entries
            record = sealRecord
        }
        let streamKey = Subkey.derive(from: fileKey, Subkey.payloadStream)
        let vault: Vault, payloadHash: [UInt8]?
        if header.isSigned {
            // The seal signature covers the payload's hash: computed as the chunks are read, once.
            var hashing = HashingCiphertext(payload)
            let (plaintext, content, _) = try Payload.open(&hashing, streamHeader: header.streamHeader, key: streamKey, history: header.keepsHistory)
            guard let hash = hashing.finish() else { throw VaultError.payloadDamaged(chunk: 0, reason: "the payload was not read whole and in order") }
            vault = try EntryCodec.decode(plaintext, content: content, history: header.keepsHistory, historyUnreadFrom: nil)
            payloadHash = hash
        } else {
            let (plaintext, content, entriesEnd) = try Payload.open(&payload, streamHeader: header.streamHeader, key: streamKey,
                                                                    history: header.keepsHistory)
            vault = try EntryCodec.decode(plaintext, content: content, history: header.keepsHistory, historyUnreadFrom: entriesEnd)
            payloadHash = nil
        }
        let unlocked = UnlockedVault(vault: vault, header: header, fileKey: fileKey, metadata: metadata, opened: opened)
        unlocked.sealState = SealState(opened: header, record: record)
        unlocked.sealSigner = unlocked.openedSlotSigner()
        if let record, let payloadHash { try unlocked.verifySeal(record: record, payloadHash: payloadHash) }
        return unlocked
    }

    /// Tries `credentials` in order, each on the slots of its kind (passwords in `passwordOrder`),
    /// until one unwraps the file key.
    ///
    /// Every KDF run (password and recovery slots) is counted against one `KDFBudget`: a slot over
    /// a cap is skipped. When nothing opens: *unsupported* if no slot is of a known type; the first
    /// cap error if a slot was skipped; `wrongPassword` if only passwords were tried; else
    /// `noKeyslotOpens` naming every source tried.
    static func unlock(
        _ header: VaultHeader, credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?,
        choice: SlotChoice = .all
    ) throws -> (fileKey: SecureBytes, opened: OpenedSlot) {
        let slots = header.keyslots
        guard slots.contains(where: { if case .unknown = $0 { return false } else { return true } }) else {
            let types = slots.map { String($0.typeByte) }
            throw VaultError.unsupportedFeature("keyslots of type \(types.joined(separator: ", ")) and no password slot")
        }
        var budget = KDFBudget(limits)
        var capError: KDFError? = nil
        /// Counts a KDF against the budget; false (remembering the first error) when it is over a cap.
        func admit(_ kdf: KDFParameters) -> Bool {
            do { try budget.spend(on: kdf) } catch { capError = capError ?? error; return false }
            willDeriveKey?(kdf)
            return true
        }
        for credential in credentials {
            func opened(_ index: Int, _ fileKey: SecureBytes?, _ derived: [UInt8]?, _ signing: SlotSigningKey?) -> (SecureBytes, OpenedSlot)? {
                guard let fileKey else { return nil }
                return (fileKey, OpenedSlot(index: index, credential: credential, derivedKey: derived, signingKey: signing))
            }
            switch credential.secret {
            case .password(let password):
                for index in passwordOrderIndices(slots) where choice.allows(slots[index]) {
                    switch slots[index] {
                    case .password(let slot):
                        guard admit(slot.kdf) else { continue }
                        let slotKey = try slot.kdf.deriveKey(password: password, salt: slot.salt, limits: limits)
                        let key = try? slotKey.withUnsafeBytes { key in
                            try XChaCha20Poly1305.open(slot.wrappedKey, key: key, nonce: slot.nonce,
                                                       associatedData: slot.associatedData(vaultID: header.vaultID))
                        }
                        if let key, key.count == 32, let result = opened(index, key, nil, nil) { return result }
                    case .x25519(let slot):
                        guard let kdf = slot.kdf, admit(kdf) else { continue }
                        let secret = SlotSecrets.password(try kdf.deriveKey(password: password, salt: slot.salt, limits: limits))
                        if let result = try openSlot(slot, index, secret: secret, header: header, opened) { return result }
                    case .sshRSA, .mlkem768x25519, .plugin, .unknown:
                        continue
                    }
                }
            case .recovery(let code):
                for (index, slot) in x25519Slots(slots, kind: .recovery) where choice.allows(slots[index]) {
                    guard let kdf = slot.kdf, admit(kdf) else { continue }
                    let secret = SlotSecrets.recovery(try kdf.deriveKey(password: code.secret, salt: slot.salt, limits: limits))
                    if let result = try openSlot(slot, index, secret: secret, header: header, opened) { return result }
                }
            case .keyfile(let path):
                for (index, slot) in x25519Slots(slots, kind: .keyfile) where choice.allows(slots[index]) {
                    let secret = try Keyfile.slotSecret(path: path, salt: slot.salt)
                    if let result = try openSlot(slot, index, secret: secret, header: header, opened) { return result }
                }
            case .ageIdentity(let identity):
                for (index, slot) in x25519Slots(slots, kind: .recipient) where choice.allows(slots[index]) {
                    let key = identity.recipient.publicKey
                    let fileKey = slot.unwrap(secretKey: identity.secretKey, recipientKey: key, vaultID: header.vaultID)
                    if let result = opened(index, fileKey, key, .x25519(identity.secretKey)) {
                        return result
                    }
                }
            case .sshIdentity(let identity):
                for (index, slot) in x25519Slots(slots, kind: .sshEd25519) where choice.allows(slots[index]) {
                    let key = identity.publicKey.wireBytes
                    let fileKey = slot.unwrap(secretKey: identity.x25519SecretKey, recipientKey: key, vaultID: header.vaultID)
                    if let result = opened(index, fileKey, key, .ed25519Seed(identity.ed25519Seed)) {
                        return result
                    }
                }
            case .protectedIdentity(let protected):
                if let result = try openProtected(protected, header: header, limits: limits, choice: choice) { return result }
            case .sshRSAIdentity(let identity):
                for (index, keyslot) in slots.enumerated() where choice.allows(keyslot) {
                    guard case .sshRSA(let slot) = keyslot else { continue }
                    let fileKey = slot.unwrap(with: identity, vaultID: header.vaultID)
                    if let result = opened(index, fileKey, identity.publicKey.wireBytes, .rsa(identity)) { return result }
                }
            case .pqIdentity(let identity):
                for (index, keyslot) in slots.enumerated() where choice.allows(keyslot) {
                    guard case .mlkem768x25519(let slot) = keyslot else { continue }
                    let fileKey = slot.unwrap(with: identity.identity, vaultID: header.vaultID)
                    // No signing key: a post-quantum slot cannot sign seals (docs/FORMAT.md §3.13).
                    if let result = opened(index, fileKey, identity.recipient.publicKey.bytes, nil) { return result }
                }
            case .pluginIdentity(let identity):
                if let found = try openPluginSlots(header, identity: identity, choice: choice), let result = opened(found.0, found.1, nil, nil) {
                    return result
                }
            }
        }
        if let capError { throw capError }
        // A slot this build does not know may be the one the secret was for: say it was skipped.
        let unknownTypes = slots.compactMap { slot -> UInt8? in if case .unknown(let type, _) = slot { return type } else { return nil } }
        if credentials.allSatisfy(\.isPassword) && unknownTypes.isEmpty { throw VaultError.wrongPassword }
        throw VaultError.noKeyslotOpens(sources: credentials.map(\.source), unknownTypes: unknownTypes)
    }

    /// Opens an X25519 slot with the secret a password, recovery code or keyfile derived for it.
    private static func openSlot(
        _ slot: X25519Slot, _ index: Int, secret: SecureBytes, header: VaultHeader,
        _ opened: (Int, SecureBytes?, [UInt8]?, SlotSigningKey?) -> (SecureBytes, OpenedSlot)?
    ) throws -> (SecureBytes, OpenedSlot)? {
        let publicKey = try X25519.publicKey(of: secret)
        return opened(index, slot.unwrap(secretKey: secret, recipientKey: publicKey, vaultID: header.vaultID), publicKey, .x25519(secret))
    }

    /// The format-1.1 slots of `kind`, with their positions.
    private static func x25519Slots(_ slots: [Keyslot], kind: SlotKind) -> [(Int, X25519Slot)] {
        slots.enumerated().compactMap { index, slot in
            if case .x25519(let x25519) = slot, x25519.kind == kind { return (index, x25519) }
            return nil
        }
    }

    /// The positions of the keyslots a password may open, in the order to try them: by kind
    /// (`passwordRank`), then in file order. Password slots of v1 and of 1.1 rank alike.
    static func passwordOrderIndices(_ keyslots: [Keyslot]) -> [Int] {
        keyslots.enumerated()
            .compactMap { index, slot in slot.passwordRank.map { (rank: $0, index: index) } }
            .sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }
            .map(\.index)
    }
}

// MARK: - Creating with keyslots

extension VaultCodec {
    /// Creates a vault holding `vault`, opened by `slots` (each with its label): a vault of
    /// recipients only, with no password, is allowed (as age allows it).
    ///
    /// With `signed` (the default) and a slot whose secret is at hand (a password, keyfile or
    /// recovery code), the vault is signed (format 1.3): the first such slot attests every slot
    /// (itself too) and signs the first seal. Without one (recipients only), or with `signed`
    /// false, it is format 1.1, which older releases open.
    public static func create(_ vault: Vault, slots: [(slot: NewSlot, label: String)], now: Int64, signed: Bool = true) throws -> UnlockedVault {
        guard !slots.isEmpty else { throw VaultError.slotChangeRefused("a vault needs at least one keyslot") }
        guard slots.count <= VaultHeader.maxKeyslots else {
            throw VaultError.limitExceeded("\(slots.count) keyslots; a vault holds at most \(VaultHeader.maxKeyslots)")
        }
        for (_, label) in slots where !SlotMetadata.isValidLabel(label) {
            throw VaultError.slotChangeRefused("a slot label is at most \(SlotMetadata.maxLabelLength) bytes of UTF-8 without control characters")
        }
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultID = randomBytes(count: 16)
        var keyslots: [Keyslot] = [], metadata: [SlotMetadata] = []
        var signer: SlotSealSigner? = nil
        for (new, label) in slots {
            if let existing = try UnlockedVault.slotHolding(new, keyslots: keyslots, metadata: metadata) {
                throw UnlockedVault.repeatedKey(new, existing: UnlockedVault.describe(keyslots[existing], index: existing, metadata: metadata[existing]))
            }
            let (slot, publicKey, secret) = try UnlockedVault.makeSigningSlot(new, fileKey: fileKey, vaultID: vaultID, alone: slots.count == 1)
            if signer == nil, let secret {
                signer = SlotSealSigner(position: keyslots.count, key: MemberKey(type: slot.typeByte, bytes: publicKey), secret: secret)
            }
            keyslots.append(slot)
            metadata.append(SlotMetadata(type: slot.typeByte, label: label, publicKey: publicKey, added: now))
        }
        var header = VaultHeader(vaultID: vaultID, generation: 0, streamHeader: [UInt8](repeating: 0, count: 24), keyslots: keyslots)
        header.flags = VaultHeader.keyslotsFlag
        header.minorVersion = VaultHeader.keyslotsMinorVersion
        // An ssh-rsa recipient needs the long keys of format 1.4; a vault without one is written as before.
        header.setLongKeys(LongKeys.needed(metadata: metadata, attestations: []))
        let unlocked = UnlockedVault(vault: vault, header: header, fileKey: fileKey, metadata: metadata, opened: nil)
        if signed, let signer {
            try unlocked.startSigning(by: signer)
        }
        try unlocked.checkHeaderFits()
        return unlocked
    }
}
