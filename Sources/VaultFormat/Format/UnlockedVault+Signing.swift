import SecureMemory
import VaultModel

// MARK: - What the next signed seal records

/// What an unlocked vault carries from the seal it was opened from to the next one it writes:
/// the header(s) it was made from, their ancestors, one attestation per slot, tombstones.
struct SealState {
    /// The headers the next seal is made from: the one opened, and the other side of a merge.
    var parents: [SealAncestor] = []
    /// The parents' own ancestors.
    var inherited: [SealAncestor] = []
    /// One per keyslot, in slot order (signed vaults).
    var attestations: [SlotAttestation] = []
    /// Tombstones kept from the parents.
    var tombstones: [Tombstone] = []
    /// Keys removed since (`slot rm`): a tombstone each at the next seal, with its generation.
    var removals: [(removed: [UInt8], remover: [UInt8])] = []
    /// Replaces `sealSigner` once the next seal is written (a re-salt's new key signs after it).
    var nextSigner: (any SealSigner)?

    /// The state of a vault opened from `header` (the whole header as read) with `record`.
    init(opened header: VaultHeader, record: SealRecord?) {
        parents = [SealAncestor(generation: header.generation, headerHash: SealTranscript.headerHash(header.encoded()))]
        inherited = record?.ancestors ?? []
        attestations = record?.attestations ?? []
        tombstones = record?.tombstones ?? []
    }

    /// A state with nothing before it (a new vault).
    init() {}

    /// The ancestors of the next seal: the parents first (always kept), then the union of their
    /// ancestors, newest generation first, each once, at most `SealRecord.maxAncestors` in all.
    func ancestors() -> [SealAncestor] {
        var result: [SealAncestor] = []
        for parent in parents where !result.contains(parent) { result.append(parent) }
        let rest = inherited.filter { !result.contains($0) }.sorted { $0.generation > $1.generation }
        for ancestor in rest where !result.contains(ancestor) && result.count < SealRecord.maxAncestors { result.append(ancestor) }
        return Array(result.prefix(SealRecord.maxAncestors))
    }

    /// The tombstones of a seal at `generation` whose slots hold the keys `held` (member key ids):
    /// those kept and the new removals, each once, the newest `SealRecord.maxTombstones` by
    /// generation. None names a key a slot holds: the signer vouches for its slot list, so a
    /// readmit (or a merge whose result keeps a readmitted slot) ends the removal.
    func tombstones(at generation: UInt64) -> [Tombstone] {
        var all: [Tombstone] = []
        for tombstone in tombstones + removals.map({ Tombstone(removed: $0.removed, remover: $0.remover, generation: generation) })
        where !all.contains(tombstone) { all.append(tombstone) }
        let sorted = all.enumerated().sorted { ($0.element.generation, $0.offset) < ($1.element.generation, $1.offset) }.map(\.element)
        return Array(sorted.suffix(SealRecord.maxTombstones))
    }
}

// MARK: - Sealing a signed vault

extension UnlockedVault {
    /// The id of the file key (docs/FORMAT.md §4): what a delegation and a seal name.
    package var sealFileKeyID: [UInt8] { VaultCodec.fileKeyID(of: fileKey) }

    /// Records `other` (the other side of a merge, opened) as a parent of the next seal: its
    /// header and ancestors join the ancestor list, its tombstones the union.
    ///
    /// Only `slot add --readmit` drops a tombstone. A tombstone of the other side for a key a slot
    /// of this one holds is left out only when this side was readmitted after that removal: its own
    /// history (parents and ancestors) holds the other side's header at the tombstone's generation,
    /// the removal seal. Otherwise it joins, and `removedKeyHeld` names the slot: the merge stops.
    public func recordMergeParent(_ other: UnlockedVault) {
        let own = Set(sealState.parents + sealState.inherited), theirs = other.sealState.parents + other.sealState.inherited
        let held = Set((slotMetadata ?? []).filter { !$0.publicKey.isEmpty }.map { MemberKey.id(of: $0.publicKey) })
        for parent in other.sealState.parents where !sealState.parents.contains(parent) { sealState.parents.append(parent) }
        sealState.inherited += other.sealState.inherited
        for tombstone in other.sealState.tombstones where !sealState.tombstones.contains(tombstone) {
            let removal = theirs.filter { $0.generation == tombstone.generation }
            if held.contains(tombstone.removed), !removal.isEmpty, removal.contains(where: own.contains) { continue }
            sealState.tombstones.append(tombstone)
        }
    }

    /// The first keyslot whose key a tombstone of the next seal names, with that tombstone: a merge
    /// whose kept slots hold a key the other side removed (and this side did not readmit after).
    public func removedKeyHeld() -> (slot: Int, tombstone: Tombstone)? {
        for (index, entry) in (slotMetadata ?? []).enumerated() where !entry.publicKey.isEmpty {
            let id = MemberKey.id(of: entry.publicKey)
            if let tombstone = sealState.tombstones.first(where: { $0.removed == id }) { return (index, tombstone) }
        }
        return nil
    }

    /// Seals a signed vault: the payload first, at the header's offset, hashed as it is
    /// written; then the signature over the transcript, and the header written last at offset 0.
    func sealSigned(to output: any SealedOutput, contentLength: Int) throws(VaultError) {
        guard let signer = sealSigner else { throw missingSigner() }
        let entries = slotMetadata ?? []
        guard sealState.attestations.count == entries.count, entries.count == header.keyslots.count else {
            throw .headerDamaged("the seal record has \(sealState.attestations.count) attestations for \(header.keyslots.count) keyslots")
        }
        let hashing = HashingOutput(output)
        var stream = try Payload.SealingStream(key: Subkey.derive(from: fileKey, Subkey.payloadStream), contentLength: contentLength, output: hashing)
        var next = nextHeader(streamHeader: stream.streamHeader)
        let record = SealRecord(ancestors: sealState.ancestors(), attestations: sealState.attestations,
                                tombstones: sealState.tombstones(at: next.generation))
        next.signatureBlock = SignatureBlock.placeholder(sealedLength: SignatureBlock.expectedSealedLength(longKeys: next.usesLongKeys, keyslots: next.keyslots))
        next.metadata = try MetadataBlock.sealChecked(entries, for: next, fileKey: fileKey, record: record)
        let length = next.encoded().count
        // Room for the header, written over once the payload is signed.
        try output.write([UInt8](repeating: 0, count: length))
        try EntryCodec.encode(vault, into: &stream)
        try stream.finish()
        let seal = SealVerifier.Seal(header: next, slots: entries, record: record, fileKeyID: sealFileKeyID, payloadHash: hashing.hasher.finish())
        let block: SealSignatureBlock
        do {
            block = try signer.signSeal(SealSigningRequest(headerPrefix: next.signedPrefix(), payloadHash: seal.payloadHash,
                                                           fileKeyID: seal.fileKeyID, slots: entries))
        } catch let error as VaultError {
            throw error
        } catch {
            throw .sealSigningFailed("\(error)")
        }
        next.signatureBlock = try SignatureBlock.seal(block, for: next, fileKey: fileKey)
        next.mac = VaultCodec.headerMAC(next, fileKey: fileKey)
        let written = next.encoded()
        precondition(written.count == length, "a signed header's length is fixed before signing")
        // Checked as an open checks it, so that a signer's mistake is never written.
        let evidence = try SealVerifier.verify(block, of: seal, headerHash: SealTranscript.headerHash(written))
        try output.write(written, at: 0)
        didSeal(next)
        sealEvidence = evidence
        sealState.parents = [SealAncestor(generation: next.generation, headerHash: evidence.headerHash)]
        sealState.inherited = record.ancestors
        sealState.tombstones = record.tombstones
        sealState.removals = []
        if let nextSigner = sealState.nextSigner {
            sealSigner = nextSigner
            sealState.nextSigner = nil
        }
    }

    // MARK: Opening

    /// Checks the seal of a signed `header` once its payload has been read (`payloadHash`): the
    /// signature block, the signer, and the signature. Sets `sealEvidence`.
    func verifySeal(record: SealRecord, payloadHash: [UInt8]) throws(VaultError) {
        let block = try SignatureBlock.open(header, fileKey: fileKey)
        let seal = SealVerifier.Seal(header: header, slots: slotMetadata ?? [], record: record, fileKeyID: sealFileKeyID, payloadHash: payloadHash)
        sealEvidence = try SealVerifier.verify(block, of: seal, headerHash: sealState.parents.first?.headerHash ?? SealTranscript.headerHash(header.encoded()))
    }

    /// The signer of a slot's own secret, for the slot that opened the vault (nil without one).
    func openedSlotSigner() -> SlotSealSigner? {
        guard let opened = openedSlot, let secret = opened.signingKey, let entries = slotMetadata, entries.indices.contains(opened.index),
              SealScheme.direct(forSlotType: entries[opened.index].type) != nil, !entries[opened.index].publicKey.isEmpty else { return nil }
        return SlotSealSigner(position: opened.index, key: MemberKey(type: entries[opened.index].type, bytes: entries[opened.index].publicKey), secret: secret)
    }
}

// MARK: - Turning signing on, attesting slots

extension UnlockedVault {
    /// Whether the next seal is signed (format 1.3).
    public var isSigned: Bool { header.isSigned }

    /// Makes every later seal signed (flag 0x08, minor version 3), `signer` attesting every slot
    /// (itself too) and signing the next seal. Only `create` and `rekey --sign` call it: no other
    /// command ever sets the flag (docs/FORMAT.md §8).
    func startSigning(by signer: SlotSealSigner) throws {
        guard header.usesKeyslots11, let entries = slotMetadata else {
            throw VaultError.slotChangeRefused("only a vault with format 1.1 keyslots can be signed")
        }
        if let index = header.keyslots.firstIndex(where: { if case .password = $0 { return true } else { return false } }) {
            throw VaultError.slotChangeRefused("keyslot \(index) is a v1 password slot, which a signed vault cannot hold")
        }
        sealState.attestations = try entries.map { entry in
            try signer.attest(vaultID: header.vaultID, type: entry.type, slotKey: entry.publicKey, label: entry.label)
        }
        header.flags |= VaultHeader.signedFlag | VaultHeader.keyslotsFlag
        header.minorVersion = max(header.minorVersion, VaultHeader.signedMinorVersion)
        sealSigner = signer
        headerChanged = true
    }

    /// The signer of attestations: the slot that opened the vault, with its secret. Throws
    /// `noSealSigner` when the vault was opened otherwise (a file key alone, the agent).
    func attestingSigner() throws(VaultError) -> SlotSealSigner {
        if let signer = sealSigner as? SlotSealSigner { return signer }
        guard let signer = openedSlotSigner() else { throw missingSigner() }
        return signer
    }

    /// Converts this vault to signed seals (`rekey --sign`): the file key rotates (a v1 password
    /// slot that opened it becomes a 1.1 password slot; a 1.0 vault gets 1.1 keyslots first), the
    /// flag and minor version are set, and the slot that opened it attests every slot and signs.
    /// The slots in `dropping` go, as with `rotated`.
    public func rotatedSigning(dropping: Set<Int> = [], now: Int64) throws -> (vault: UnlockedVault, wrappedTo: [SlotDescription]) {
        guard !isSigned else { throw VaultError.slotChangeRefused("this vault is signed already") }
        if case .slotCannotSign(let slot, let kind, _) = missingSigner() {
            throw VaultError.slotChangeRefused("keyslot \(slot), which opened the vault, is \(kind), which cannot sign seals; "
                                               + "open it with a password, keyfile, recovery code, age1… X25519, ssh-ed25519 or ssh-rsa slot to sign it")
        }
        guard openedSlot?.signingKey != nil || openedSlot.map({ if case .password = $0.credential.secret { true } else { false } }) == true else {
            throw VaultError.noSealSigner
        }
        upgradeToKeyslots11(now: now)
        let (rotated, _) = try self.rotated(dropping: dropping, now: now)
        guard let signer = rotated.openedSlotSigner() else { throw VaultError.noSealSigner }
        try rotated.startSigning(by: signer)
        rotated.sealState.nextSigner = nil
        return (rotated, rotated.slots)
    }
}
