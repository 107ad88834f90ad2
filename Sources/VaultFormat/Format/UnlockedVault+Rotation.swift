import KDF
import SecureMemory
import VaultModel

// MARK: - Rotating the file key

extension UnlockedVault {
    /// A copy of this vault under a new file key, for `slot rm`, `rekey` and (format 1.1) `passwd`.
    ///
    /// The slots in `removing` and `dropping` go; every other slot wraps the new key: format-1.1
    /// slots are re-wrapped from the public key in the metadata (no secret needed), and the slot
    /// that opened the vault is re-salted from its secret (a password, keyfile or recovery code:
    /// a new salt, so a new public key that whoever knew the old one does not know; identities
    /// keep their key). With `newPassword`, the opening password slot gets that password and KDF.
    ///
    /// A slot that cannot be re-wrapped without its own secret is never dropped silently: a v1
    /// password slot that did not open the vault, or a slot of a type this build does not know,
    /// blocks the rotation (`rotationBlocked`) unless it is in `dropping`. A 1.0 vault stays 1.0:
    /// its opening password slot is made again as a v1 slot, like `passwd` does.
    ///
    /// Returns the rotated vault (seal it to write it) and a description of every slot the new
    /// file key is wrapped to.
    public func rotated(
        removing: Set<Int> = [], dropping: Set<Int> = [], newPassword: (password: SecureBytes, kdf: KDFParameters)? = nil, now: Int64
    ) throws -> (vault: UnlockedVault, wrappedTo: [SlotDescription]) {
        let slots = header.keyslots
        for index in removing.union(dropping) where !slots.indices.contains(index) { throw VaultError.slotNotFound(String(index)) }
        let remaining = slots.indices.filter { !removing.contains($0) && !dropping.contains($0) }
        guard !remaining.isEmpty else {
            throw VaultError.slotChangeRefused("that would leave the vault with no keyslot; add another slot first ('vaultfile slot add')")
        }
        let openedIndex = openedSlot?.index
        let blocked = remaining.filter { $0 != openedIndex }.compactMap { index -> String? in
            switch slots[index] {
            case .password: return "keyslot \(index) (a v1 password slot that did not open the vault)"
            case .unknown(let type, _): return "keyslot \(index) (of type \(type), unknown to this vaultfile)"
            case .x25519, .sshRSA, .mlkem768x25519, .plugin: return nil
            }
        }
        guard blocked.isEmpty else { throw VaultError.rotationBlocked(slots: blocked) }
        // Every plugin slot that stays is wrapped again by its plugin: each is found (and named) first.
        try announcePlugins(remaining)
        // The seal after a rotation of a signed vault is signed by the key that opened it.
        let oldSigner: SlotSealSigner? = isSigned ? try attestingSigner() : nil
        if isSigned, let openedIndex, !remaining.contains(openedIndex) {
            throw VaultError.slotChangeRefused("keyslot \(openedIndex) opened this signed vault and signs its seals, so it cannot remove itself; "
                                               + "open the vault with another slot to remove it")
        }
        if newPassword != nil {
            guard let openedIndex, remaining.contains(openedIndex), slots[openedIndex].passwordRank != nil else {
                throw VaultError.slotChangeRefused("changing the password needs the vault opened with the password it changes; "
                                                   + "open it with that password, or add a password with 'vaultfile slot add password'")
            }
        }

        let newKey = SecureBytes(copying: randomBytes(count: 32))
        var keyslots: [Keyslot] = []
        var metadata: [SlotMetadata] = []
        var reopened: OpenedSlot? = nil
        var attestations: [SlotAttestation] = []
        for index in remaining {
            let entry = slotMetadata?[index]
            if index == openedIndex, let opened = openedSlot {
                let (slot, publicKey, secret) = try resalted(opened, slots[index], newPassword: newPassword, newKey: newKey,
                                                             alone: remaining.count == 1)
                reopened = OpenedSlot(index: keyslots.count, credential: opened.credential, derivedKey: publicKey, signingKey: secret)
                let label = entry?.label ?? ""
                if let oldSigner {
                    // A re-salt: the old key attests the new one, and signs this seal (the re-salt rule).
                    attestations.append(publicKey == oldSigner.key.bytes ? sealState.attestations[index]
                                        : try oldSigner.attest(vaultID: header.vaultID, type: slot.typeByte, slotKey: publicKey ?? [], label: label))
                }
                keyslots.append(slot)
                metadata.append(SlotMetadata(type: slot.typeByte, label: label, publicKey: publicKey ?? [], added: entry?.added ?? now))
            } else {
                if isSigned { attestations.append(sealState.attestations[index]) }
                guard let entry else {
                    throw VaultError.rotationBlocked(slots: ["keyslot \(index) (no public key to re-wrap it to)"])
                }
                keyslots.append(try Self.rewrapped(slots[index], index: index, to: entry.publicKey, newKey: newKey, vaultID: header.vaultID,
                                                   alone: remaining.count == 1))
                metadata.append(entry)
            }
        }
        var newHeader = VaultHeader(vaultID: header.vaultID, generation: header.generation, streamHeader: header.streamHeader, keyslots: keyslots)
        newHeader.minorVersion = header.minorVersion
        newHeader.flags = header.flags
        let rotated = UnlockedVault(vault: vault, header: newHeader, fileKey: newKey,
                                    metadata: header.usesKeyslots11 ? metadata : nil, opened: reopened)
        rotated.headerChanged = true
        rotated.sealState = sealState
        rotated.sealEvidence = sealEvidence
        rotated.sealSigner = rotated.openedSlotSigner()
        if let oldSigner, let reopened {
            rotated.sealState.attestations = attestations
            for index in removing.union(dropping).sorted() {
                guard let key = slotMetadata?[index].publicKey, !key.isEmpty else { continue }
                rotated.sealState.removals.append((removed: MemberKey.id(of: key), remover: oldSigner.key.id))
            }
            rotated.sealState.nextSigner = rotated.sealSigner
            rotated.sealSigner = oldSigner.moved(to: reopened.index)
        }
        return (rotated, rotated.slots)
    }

    /// The slot that opened the vault, made again for `newKey`: with a fresh salt where its
    /// secret allows (a v1 password slot becomes a 1.1 password slot in a 1.1 vault, stays v1 in a
    /// 1.0 vault), else re-wrapped to its key. Returns the slot and the key it is wrapped to.
    private func resalted(
        _ opened: OpenedSlot, _ slot: Keyslot, newPassword: (password: SecureBytes, kdf: KDFParameters)?, newKey: SecureBytes, alone: Bool
    ) throws -> (Keyslot, [UInt8]?, SlotSigningKey?) {
        let currentKDF: KDFParameters? = {
            switch slot {
            case .password(let password): return password.kdf
            case .x25519(let x25519): return x25519.kdf
            case .sshRSA, .mlkem768x25519, .plugin, .unknown: return nil
            }
        }()
        let fresh: NewSlot?
        switch opened.credential.secret {
        case .password(let password):
            let (secret, kdf) = newPassword.map { ($0.password, $0.kdf) } ?? (password, currentKDF ?? .defaults)
            if !header.usesKeyslots11 {
                return (.password(try VaultCodec.makePasswordSlot(password: secret, kdf: kdf, fileKey: newKey, vaultID: header.vaultID)), nil, nil)
            }
            fresh = .password(secret, kdf)
        case .keyfile(let path): fresh = .keyfile(path: path)
        case .recovery(let code): fresh = .recovery(code, currentKDF ?? NewSlot.recoveryKDF)
        case .ageIdentity, .sshIdentity, .protectedIdentity, .sshRSAIdentity, .pqIdentity, .pluginIdentity: fresh = nil
        }
        if let fresh {
            let (made, publicKey, secret) = try Self.makeSigningSlot(fresh, fileKey: newKey, vaultID: header.vaultID)
            return (made, publicKey, secret)
        }
        if case .mlkem768x25519 = slot, let key = opened.derivedKey {
            // A fresh encapsulation to the same key: the identity keeps its key, as age identities do.
            return (try Self.rewrapped(slot, index: opened.index, to: key, newKey: newKey, vaultID: header.vaultID), key, nil)
        }
        if case .sshRSA = slot, let key = opened.derivedKey {
            return (try Self.rewrapped(slot, index: opened.index, to: key, newKey: newKey, vaultID: header.vaultID), key, opened.signingKey)
        }
        if case .plugin = slot, let stored = slotMetadata?[opened.index].publicKey {
            return (try Self.rewrapped(slot, index: opened.index, to: stored, newKey: newKey, vaultID: header.vaultID, alone: alone), stored, nil)
        }
        guard case .x25519(let x25519) = slot, let key = opened.derivedKey, let recipient = SlotRecipient(kind: x25519.kind, stored: key) else {
            throw VaultError.slotChangeRefused("keyslot \(opened.index) cannot be re-wrapped")
        }
        let rewrapped = try X25519Slot.wrap(newKey, to: recipient, kind: x25519.kind, kdf: nil, salt: [], vaultID: header.vaultID)
        return (.x25519(rewrapped), key, opened.signingKey)
    }

    /// A slot that did not open the vault, wrapped to `newKey` for the public key its metadata
    /// holds (a fresh ephemeral key or fresh OAEP randomness; its derivation unchanged).
    private static func rewrapped(_ slot: Keyslot, index: Int, to stored: [UInt8], newKey: SecureBytes, vaultID: [UInt8], alone: Bool = false) throws -> Keyslot {
        let malformed = VaultError.headerDamaged("keyslot \(index)'s public key in the metadata is malformed")
        switch slot {
        case .x25519(let x25519):
            guard let recipient = SlotRecipient(kind: x25519.kind, stored: stored) else { throw malformed }
            return .x25519(try X25519Slot.wrap(newKey, to: recipient, kind: x25519.kind, kdf: x25519.kdf, salt: x25519.salt, vaultID: vaultID))
        case .sshRSA:
            guard let key = try? SSHRSAPublicKey(wire: stored) else { throw malformed }
            return .sshRSA(try RSASlot.wrap(newKey, to: key, vaultID: vaultID))
        case .mlkem768x25519:
            guard let key = try? AgePQRecipient(bytes: stored) else { throw malformed }
            return .mlkem768x25519(try HybridSlot.wrap(newKey, to: key.publicKey, vaultID: vaultID))
        case .plugin:
            guard let recipient = try? AgePluginRecipient(parsing: String(decoding: stored, as: UTF8.self)) else { throw malformed }
            return .plugin(try PluginSlot.wrap(newKey, to: recipient, vaultID: vaultID, alone: alone))
        case .password, .unknown:
            throw VaultError.rotationBlocked(slots: ["keyslot \(index) (no public key to re-wrap it to)"])
        }
    }
}
