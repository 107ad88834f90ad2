import VaultFormat
import VaultModel

// MARK: - Whether a copy was written by the vault's members

extension MemberTrust {
    /// What the judgement found of a copy (`judge`).
    public struct Judgement: Equatable, Sendable {
        /// Why the copy is not trusted; empty when it is.
        public var findings: [TrustFinding] = []
        /// Whether this vault id was never seen signed here, and the copy is pinned on first use (a one-time notice).
        public var firstOpen = false
        /// Whether the copy is signed (an unsigned vault never seen signed is neither trusted nor refused: nothing to judge).
        public var signed = false
        /// The slots trusted through a chain of attestations rather than pinned.
        public var traced: [Int] = []
        /// The signer's fingerprint as `slot list` shows it (empty for an unsigned copy).
        public var signerFingerprint = ""

        /// Whether the copy is trusted: signed or not, nothing was found against it.
        public var isTrusted: Bool { findings.isEmpty }
    }

    /// The copy to judge: what its open established (`evidence`, nil for an unsigned copy) and its header.
    public struct Copy: Sendable {
        /// The evidence of a signed copy, nil for an unsigned one.
        public var evidence: SealEvidence?
        /// The vault id.
        public var vaultID: [UInt8]
        /// The header's generation.
        public var generation: UInt64

        /// A copy.
        public init(evidence: SealEvidence?, vaultID: [UInt8], generation: UInt64) {
            self.evidence = evidence
            self.vaultID = vaultID
            self.generation = generation
        }
    }

    /// The judgement of `record` (nil: the vault id was never seen signed here) on `copy`.
    /// `otherVaultAtPath` is the vault id last seen at the copy's path when it is another one
    /// (`otherVault(lastSeenAt:than:)`); `comparesGenerations` says whether ancestry is compared
    /// (outside git work trees, with the rollback check on: inside one, git keeps the forks).
    ///
    /// A signed copy is trusted when its signer (the old key of a self re-salt, the delegating
    /// slot's key of a delegated seal) is pinned or traceable and neither removed nor retired;
    /// every slot's key is pinned or traceable; no slot key is removed (tombstones learned here or
    /// carried by the copy); no ancestor is another header at a generation recorded here.
    /// Traceable: reachable through verifying attestations from a pinned member not removed here.
    /// An attestation is verified only for a key not pinned, at most once.
    public static func judge(_ copy: Copy, record: Record?, otherVaultAtPath: String?, comparesGenerations: Bool) -> Judgement {
        var judgement = Judgement()
        guard let evidence = copy.evidence else {
            if let firstSigned = record?.firstSigned { judgement.findings = [.unsignedAfterSigned(firstSigned: firstSigned)] }
            // An unsigned vault where a signed one was seen: whoever knows a member's public key can
            // make one under a vault id of their own (the attack review's first finding).
            else if let otherVaultAtPath { judgement.findings = [.vaultIDChangedAtPath(previousVaultID: otherVaultAtPath)] }
            return judgement
        }
        judgement.signed = true
        judgement.signerFingerprint = evidence.signer.fingerprint
        let record = record ?? Record()
        let firstOpen = record.firstSigned == nil
        judgement.firstOpen = firstOpen
        if firstOpen, let otherVaultAtPath { judgement.findings.append(.vaultIDChangedAtPath(previousVaultID: otherVaultAtPath)) }

        // Removals: learned here, and carried by the copy (whoever signed it).
        var removed: [[UInt8]: UInt64] = [:]
        for member in record.removed { removed[member.id] = member.generation }
        for tombstone in evidence.record.tombstones { removed[tombstone.removed] = min(removed[tombstone.removed] ?? .max, tombstone.generation) }
        let retired = Set(record.retired.map(\.id))
        var tracer = Tracer(evidence: evidence, roots: Set(record.pinned.map(\.key.id)).subtracting(removed.keys).subtracting(retired))

        let signerID = evidence.signer.id
        // The re-salt that retired its signer's key here, opened again: its signer was pinned when it was accepted.
        let resaltSeen = retired.contains(signerID) && resaltAccepted(evidence, record: record)
        if let generation = removed[signerID] {
            judgement.findings.append(.removedSigner(fingerprint: judgement.signerFingerprint, generation: generation))
        } else if retired.contains(signerID), !resaltSeen {
            judgement.findings.append(.retiredSigner(fingerprint: judgement.signerFingerprint))
        } else if !firstOpen, !resaltSeen, !tracer.isRoot(signerID), !(evidence.replacedKey == nil && tracer.traces(evidence.signerPosition)) {
            judgement.findings.append(.unknownSigner(fingerprint: judgement.signerFingerprint))
        }
        for slot in evidence.slots where !slot.key.isEmpty {
            let key = MemberKey(type: slot.type, bytes: slot.key)
            if let generation = removed[key.id] {
                judgement.findings.append(.removedKeyInside(slot: slot.position, fingerprint: key.fingerprint, generation: generation))
            } else if retired.contains(key.id) {
                judgement.findings.append(.retiredKeyInside(slot: slot.position, fingerprint: key.fingerprint))
            } else if !firstOpen, !tracer.isRoot(key.id) {
                if tracer.traces(slot.position) {
                    judgement.traced.append(slot.position)
                } else {
                    let previous = record.pinned.first { pinned in
                        (pinned.position == slot.position || !slot.label.isEmpty && pinned.label == slot.label)
                            && !evidence.slots.contains { $0.key == pinned.key.bytes }
                    }
                    judgement.findings.append(.untracedSlot(slot: slot.position, label: slot.label, fingerprint: key.fingerprint,
                                                            previous: previous?.key.fingerprint))
                }
            }
        }
        // Last: who wrote it says more than where its history parted.
        if comparesGenerations, let diverged = divergence(evidence, record: record) { judgement.findings.append(.diverged(ancestorGeneration: diverged)) }
        return judgement
    }

    /// The first generation at which the copy or one of its ancestors is another header than the one recorded here.
    private static func divergence(_ evidence: SealEvidence, record: Record) -> UInt64? {
        let own = SealAncestor(generation: evidence.generation, headerHash: evidence.headerHash)
        for ancestor in [own] + evidence.record.ancestors {
            let seen = record.headers.filter { $0.generation == ancestor.generation }
            if !seen.isEmpty, !seen.contains(ancestor) { return ancestor.generation }
        }
        return nil
    }

    /// Whether `evidence` is the very re-salt that retired its signer's old key here: accepted
    /// before (its header recorded), at the generation the key left. An old key retired by another
    /// seal signs nothing more.
    private static func resaltAccepted(_ evidence: SealEvidence, record: Record) -> Bool {
        guard evidence.replacedKey != nil, let left = record.retired.first(where: { $0.id == evidence.signer.id }) else { return false }
        return left.generation == evidence.generation
            && record.headers.contains(SealAncestor(generation: evidence.generation, headerHash: evidence.headerHash))
    }

    // MARK: Chains of adders

    /// Follows the attestations of a copy's slots from the roots (pinned members not removed or
    /// retired): a slot is traced when its key is a root, or its attestation verifies and its adder
    /// is a root or the key of a traced slot. A fixpoint from the roots, so a cycle of slots that
    /// attest each other never traces. Each attestation is verified at most once.
    struct Tracer {
        let evidence: SealEvidence
        let roots: Set<[UInt8]>
        private var traced: Set<Int>?

        init(evidence: SealEvidence, roots: Set<[UInt8]>) {
            self.evidence = evidence
            self.roots = roots
        }

        /// Whether the member key id `id` is pinned (and neither removed nor retired).
        func isRoot(_ id: [UInt8]) -> Bool { roots.contains(id) }

        /// Whether the slot at `position` is traced.
        mutating func traces(_ position: Int) -> Bool {
            if traced == nil { traced = computeTraced() }
            return traced?.contains(position) ?? false
        }

        private func computeTraced() -> Set<Int> {
            var traced = Set<Int>()
            var tracedKeys = Set<[UInt8]>()
            var failed = Set<Int>()
            let ids = evidence.slots.map { MemberKey.id(of: $0.key) }
            for (index, slot) in evidence.slots.enumerated() where !slot.key.isEmpty && roots.contains(ids[index]) {
                traced.insert(slot.position)
                tracedKeys.insert(ids[index])
            }
            var changed = true
            while changed {
                changed = false
                for (index, slot) in evidence.slots.enumerated() where !slot.key.isEmpty && !traced.contains(slot.position) && !failed.contains(slot.position) {
                    guard evidence.record.attestations.indices.contains(slot.position) else { continue }
                    let adder = evidence.record.attestations[slot.position].adder.id
                    guard roots.contains(adder) || tracedKeys.contains(adder) else { continue }
                    guard evidence.attestationVerifies(at: slot.position) else {
                        failed.insert(slot.position)
                        continue
                    }
                    traced.insert(slot.position)
                    tracedKeys.insert(ids[index])
                    changed = true
                }
            }
            return traced
        }
    }
}

// MARK: - A member key as a person compares it

extension MemberKey {
    /// The fingerprint `vaultfile slot list` shows for this key: the `age1…` recipient of an age
    /// slot, the `SHA256:…` of an ssh one, `mlkem768x25519:…` of a post-quantum one, `x25519:` and 16
    /// hex digits of a secret-derived one.
    public var fingerprint: String {
        switch type {
        case 3: if let recipient = AgeRecipient(publicKey: bytes) { return recipient.description }
        case 6: if let ssh = try? SSHEd25519PublicKey(wire: bytes) { return ssh.fingerprint }
        case 7: if let rsa = try? SSHRSAPublicKey(wire: bytes) { return rsa.fingerprint }
        case HybridSlot.type: return HybridSlot.fingerprint(of: bytes)
        default: break
        }
        return "x25519:" + SlotMetadata.fingerprintDigits(of: bytes)
    }
}
