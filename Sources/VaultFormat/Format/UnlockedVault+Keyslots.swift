import KDF
import SecureMemory
import VaultModel

// MARK: - Slots to add

/// A keyslot to add, with the secret or public key it is made from.
public enum NewSlot: Sendable {
    /// A password with its KDF settings.
    case password(SecureBytes, KDFParameters)
    /// An age X25519 recipient.
    case recipient(AgeRecipient)
    /// An ssh-ed25519 public key.
    case sshEd25519(SSHEd25519PublicKey)
    /// An ssh-rsa public key (format 1.4).
    case sshRSA(SSHRSAPublicKey)
    /// An age post-quantum recipient (`age1pq1…`, format 1.4).
    case postQuantum(AgePQRecipient)
    /// An age plugin recipient, `age1NAME1…` (format 1.4, slot type 9).
    case plugin(AgePluginRecipient)
    /// A keyfile (hashed with a fresh salt).
    case keyfile(path: String)
    /// A recovery code with its (cheap) KDF settings.
    case recovery(RecoveryCode, KDFParameters)

    /// The KDF recovery slots use: the code holds 140 random bits, so a slow KDF adds nothing
    /// (docs/FORMAT.md §3.7); Argon2id at its smallest useful cost keeps one code path.
    public static let recoveryKDF = KDFParameters.argon2id(.init(memoryKiB: 8 * 1024, iterations: 1, parallelism: 1))

    /// The key as people name it in a message: `age1…`, an ssh key's `SHA256:` fingerprint, a
    /// keyfile's path; nil for a password or a recovery code.
    public var keyName: String? {
        switch self {
        case .recipient(let recipient): recipient.description
        case .sshEd25519(let key): key.fingerprint
        case .sshRSA(let key): key.fingerprint
        case .postQuantum(let recipient): recipient.shortName
        case .plugin(let recipient): recipient.description
        case .keyfile(let path): path
        case .password, .recovery: nil
        }
    }
}

// MARK: - What a slot is

/// One keyslot as `slot list`, rotations and messages describe it. Nothing in it is secret.
public struct SlotDescription: Equatable, Sendable {
    /// The slot's id: its position in the header.
    public let index: Int
    /// The slot's type byte.
    public let type: UInt8
    /// `password`, `password (v1)`, `recipient`, `ssh-ed25519`, `ssh-rsa`, `keyfile`, `recovery`, `unknown type N`.
    public let kind: String
    /// The label (empty when none, and always for a 1.0 vault).
    public let label: String
    /// The KDF of password and recovery slots.
    public let kdf: KDFParameters?
    /// The recipient as people write it: `age1…` or `ssh-ed25519 AAAA…`; nil for other kinds.
    public let recipient: String?
    /// The fingerprint of the key the slot is wrapped to: the `age1…` recipient, `SHA256:…` for
    /// ssh-ed25519, `x25519:` and 16 hex digits of SHA-256 for the others; nil without a public key.
    public let fingerprint: String?
    /// When it was added (milliseconds since the epoch); nil in a 1.0 vault.
    public let added: Int64?
}

extension UnlockedVault {
    // MARK: Describing

    /// Every keyslot, described from the header and (format 1.1) the metadata.
    public var slots: [SlotDescription] {
        header.keyslots.enumerated().map { index, slot in
            Self.describe(slot, index: index, metadata: slotMetadata?[index])
        }
    }

    static func describe(_ slot: Keyslot, index: Int, metadata: SlotMetadata?) -> SlotDescription {
        let key = metadata?.publicKey ?? []
        var recipient: String? = nil, fingerprint: String? = nil, kdf: KDFParameters? = nil, kind: String
        switch slot {
        case .password(let password):
            kind = "password (v1)"
            kdf = password.kdf
        case .x25519(let x25519):
            kind = x25519.kind.name
            kdf = x25519.kdf
            switch x25519.kind {
            case .recipient:
                recipient = AgeRecipient(publicKey: key)?.description
                fingerprint = recipient
            case .sshEd25519:
                let parsed = try? SSHEd25519PublicKey(wire: key)
                recipient = parsed?.description
                fingerprint = parsed?.fingerprint
            case .password, .keyfile, .recovery:
                fingerprint = key.isEmpty ? nil : "x25519:" + SlotMetadata.fingerprintDigits(of: key)
            }
        case .sshRSA:
            kind = SSHRSAPublicKey.typeName
            let parsed = try? SSHRSAPublicKey(wire: key)
            recipient = parsed?.description
            fingerprint = parsed?.fingerprint
        case .mlkem768x25519:
            kind = HybridSlot.kindName
            recipient = (try? AgePQRecipient(bytes: key))?.description
            fingerprint = recipient.map { _ in HybridSlot.fingerprint(of: key) }
        case .plugin:
            kind = "plugin"
            let parsed = try? AgePluginRecipient(parsing: String(decoding: key, as: UTF8.self))
            recipient = parsed?.description
            fingerprint = parsed?.description
        case .unknown(let type, _):
            kind = "unknown type \(type)"
        }
        return SlotDescription(index: index, type: slot.typeByte, kind: kind, label: metadata?.label ?? "", kdf: kdf,
                               recipient: recipient, fingerprint: fingerprint, added: metadata?.added)
    }

    // MARK: Repeated keys

    /// The id of a slot that already holds the key `new` would be made from: the same age
    /// recipient, ssh key or keyfile. Two slots for one key would keep its holder in after
    /// `slot rm` of either. Passwords and recovery codes are not compared: a recovery code is new
    /// each time, and a password's slots are salted apart and open nothing more than one.
    public func slotHolding(_ new: NewSlot) throws -> Int? {
        try Self.slotHolding(new, keyslots: header.keyslots, metadata: slotMetadata ?? [])
    }

    static func slotHolding(_ new: NewSlot, keyslots: [Keyslot], metadata: [SlotMetadata]) throws -> Int? {
        for (index, keyslot) in keyslots.enumerated() {
            guard index < metadata.count, !metadata[index].publicKey.isEmpty else { continue }
            let stored = metadata[index].publicKey
            if case .sshRSA = keyslot, case .sshRSA(let key) = new, stored == key.wireBytes { return index }
            if case .mlkem768x25519 = keyslot, case .postQuantum(let recipient) = new, stored == recipient.publicKey.bytes { return index }
            if case .plugin = keyslot, case .plugin(let recipient) = new, stored == Array(recipient.encoding.utf8) { return index }
            guard case .x25519(let slot) = keyslot else { continue }
            switch (new, slot.kind) {
            case (.recipient(let recipient), .recipient):
                if stored == recipient.publicKey { return index }
            case (.sshEd25519(let key), .sshEd25519):
                if stored == SlotRecipient(ssh: key).bound { return index }
            case (.keyfile(let path), .keyfile):
                // Salted: the same file gives the stored public key only under this slot's salt.
                if try X25519.publicKey(of: Keyfile.slotSecret(path: path, salt: slot.salt)) == stored { return index }
            default:
                continue
            }
        }
        return nil
    }

    /// The refusal to add `new` beside slot `existing`, which holds the same key.
    static func repeatedKey(_ new: NewSlot, existing: SlotDescription) -> VaultError {
        let holder = existing.label.isEmpty ? existing.kind : "\(existing.kind), \(existing.label)"
        return .slotChangeRefused("keyslot \(existing.index) (\(holder)) already holds \(new.keyName ?? "this key"); "
                                  + "a second slot for one key would keep it in after 'slot rm' of either")
    }

    // MARK: Adding

    /// Adds a slot wrapping the current file key (which stays); refuses a key a slot already holds. The vault becomes format 1.1 if
    /// it was not (flag and minor version), and a v1 password slot that opened it is rewritten in
    /// the recipient shape (docs/FORMAT.md §3.3), so that later rotations need no secret but one.
    public func addSlot(_ new: NewSlot, label: String, now: Int64) throws {
        guard SlotMetadata.isValidLabel(label) else {
            throw VaultError.slotChangeRefused("a slot label is at most \(SlotMetadata.maxLabelLength) bytes of UTF-8 without control characters")
        }
        guard header.keyslots.count < VaultHeader.maxKeyslots else {
            throw VaultError.limitExceeded("the vault has \(header.keyslots.count) keyslots, the most a vault holds")
        }
        if let existing = try slotHolding(new) { throw Self.repeatedKey(new, existing: slots[existing]) }
        // In a signed vault the slot that opened it attests the new one (docs/FORMAT.md "Signed seals").
        let attester = isSigned ? try attestingSigner() : nil
        upgradeToKeyslots11(now: now)
        try convertOpenedPasswordSlot()
        let (slot, publicKey) = try Self.makeSlot(new, fileKey: fileKey, vaultID: header.vaultID)
        let before = (header, slotMetadata, sealState.attestations)
        if let attester {
            sealState.attestations.append(try attester.attest(vaultID: header.vaultID, type: slot.typeByte, slotKey: publicKey, label: label))
        }
        header.keyslots.append(slot)
        slotMetadata!.append(SlotMetadata(type: slot.typeByte, label: label, publicKey: publicKey, added: now))
        // An ssh-rsa slot (a key over 255 bytes) is the explicit upgrade to format 1.4 (flag 0x10).
        header.setLongKeys(LongKeys.needed(metadata: slotMetadata!, attestations: sealState.attestations))
        do {
            try checkHeaderFits()
        } catch {
            (header, slotMetadata, sealState.attestations) = before
            throw error
        }
        headerChanged = true
    }

    /// Sets the flag and minor version of format 1.1 and gives every slot a metadata entry.
    func upgradeToKeyslots11(now: Int64) {
        guard !header.usesKeyslots11 else { return }
        header.flags |= VaultHeader.keyslotsFlag
        header.minorVersion = max(header.minorVersion, VaultHeader.keyslotsMinorVersion)
        slotMetadata = header.keyslots.map { SlotMetadata(type: $0.typeByte, label: "", publicKey: [], added: now) }
    }

    /// Rewrites the v1 password slot that opened the vault as a 1.1 password slot (same KDF,
    /// fresh salt, same file key), keeping its label and time.
    private func convertOpenedPasswordSlot() throws {
        guard let opened = openedSlot, case .password(let old) = header.keyslots[opened.index],
              case .password(let password) = opened.credential.secret else { return }
        let (slot, publicKey) = try Self.makeSlot(.password(password, old.kdf), fileKey: fileKey, vaultID: header.vaultID)
        header.keyslots[opened.index] = slot
        slotMetadata![opened.index].type = slot.typeByte
        slotMetadata![opened.index].publicKey = publicKey
        openedSlot = OpenedSlot(index: opened.index, credential: opened.credential, derivedKey: publicKey)
        headerChanged = true
    }

    // MARK: Making slots

    /// A new slot wrapping `fileKey`, and the public key it is wrapped to (for the metadata).
    static func makeSlot(_ new: NewSlot, fileKey: SecureBytes, vaultID: [UInt8]) throws -> (Keyslot, [UInt8]) {
        let (slot, publicKey, _) = try makeSigningSlot(new, fileKey: fileKey, vaultID: vaultID)
        return (slot, publicKey)
    }

    /// As `makeSlot`, with the slot's signing secret when the secret is at hand (a password,
    /// recovery code or keyfile; nil for a recipient or an ssh public key).
    /// A plugin slot whose plugin sends labels is made only when it is to be the vault's one slot (`alone`).
    static func makeSigningSlot(_ new: NewSlot, fileKey: SecureBytes, vaultID: [UInt8], alone: Bool = false) throws -> (Keyslot, [UInt8], SlotSigningKey?) {
        let unlimited = KDFLimits(maxMemoryBytes: .max, maxArgon2WorkKiB: .max, maxPBKDF2Iterations: .max)
        func derived(_ kind: SlotKind, kdf: KDFParameters?, salt: [UInt8], secret: SecureBytes) throws -> (Keyslot, [UInt8], SlotSigningKey?) {
            let publicKey = try X25519.publicKey(of: secret)
            let slot = try X25519Slot.wrap(fileKey, to: SlotRecipient(x25519: publicKey), kind: kind, kdf: kdf, salt: salt, vaultID: vaultID)
            return (.x25519(slot), publicKey, .x25519(secret))
        }
        switch new {
        case .password(let password, let kdf):
            try kdf.validate()
            let salt = randomBytes(count: KDFParameters.saltLength)
            let secret = SlotSecrets.password(try kdf.deriveKey(password: password, salt: salt, limits: unlimited))
            return try derived(.password, kdf: kdf, salt: salt, secret: secret)
        case .recovery(let code, let kdf):
            try kdf.validate()
            let salt = randomBytes(count: KDFParameters.saltLength)
            let secret = SlotSecrets.recovery(try kdf.deriveKey(password: code.secret, salt: salt, limits: unlimited))
            return try derived(.recovery, kdf: kdf, salt: salt, secret: secret)
        case .keyfile(let path):
            let salt = randomBytes(count: Keyfile.saltLength)
            return try derived(.keyfile, kdf: nil, salt: salt, secret: try Keyfile.slotSecret(path: path, salt: salt))
        case .recipient(let recipient):
            let slot = try X25519Slot.wrap(fileKey, to: SlotRecipient(x25519: recipient.publicKey), kind: .recipient, kdf: nil, salt: [], vaultID: vaultID)
            return (.x25519(slot), recipient.publicKey, nil)
        case .sshEd25519(let key):
            let recipient = SlotRecipient(ssh: key)
            let slot = try X25519Slot.wrap(fileKey, to: recipient, kind: .sshEd25519, kdf: nil, salt: [], vaultID: vaultID)
            return (.x25519(slot), recipient.bound, nil)
        case .sshRSA(let key):
            return (.sshRSA(try RSASlot.wrap(fileKey, to: key, vaultID: vaultID)), key.wireBytes, nil)
        case .postQuantum(let recipient):
            let slot = try HybridSlot.wrap(fileKey, to: recipient.publicKey, vaultID: vaultID)
            return (.mlkem768x25519(slot), recipient.publicKey.bytes, nil)
        case .plugin(let recipient):
            // The recipient is the slot's public key: every rotation runs its plugin again (§3.12).
            return (.plugin(try PluginSlot.wrap(fileKey, to: recipient, vaultID: vaultID, alone: alone)), Array(recipient.encoding.utf8), nil)
        }
    }
}

extension SlotMetadata {
    /// The 16 hex digits of the `x25519:` fingerprint of a secret-derived slot's public key `key`:
    /// the first 8 bytes of its SHA-256 (docs/FORMAT.md).
    public static func fingerprintDigits(of key: [UInt8]) -> String {
        lowerHex(SHA256.hash(key).prefix(8))
    }
}

/// Two lower-case hex digits.
func hexByte(_ byte: UInt8) -> String { lowerHex(CollectionOfOne(byte)) }

/// `bytes` as lower-case hex digits, built as ASCII (no per-byte strings: every open names each
/// slot's fingerprint for the key lineage, on the agent's `get` path).
func lowerHex(_ bytes: some Collection<UInt8>) -> String {
    let digits: [UInt8] = Array("0123456789abcdef".utf8)
    var ascii: [UInt8] = []
    ascii.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        ascii.append(digits[Int(byte >> 4)])
        ascii.append(digits[Int(byte & 15)])
    }
    return String(decoding: ascii, as: UTF8.self)
}
