import SecureMemory
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

// MARK: - Seal evidence built by hand, with real keys and attestations

/// A member of a test vault: a real X25519 key pair, so that the attestations it makes verify.
struct TrustMember {
    let secret: SecureBytes
    let key: MemberKey
    let label: String

    /// A fresh member of slot type `type` (2 password, 3 age recipient, 4 keyfile).
    init(_ label: String, type: UInt8 = 3) throws {
        secret = X25519.generateSecretKey()
        key = MemberKey(type: type, bytes: try X25519.publicKey(of: secret))
        self.label = label
    }

    /// The same person with a new key (a re-salt by `passwd`, `slot rm` or `rekey`).
    func resalted() throws -> TrustMember { try TrustMember(label, type: key.type) }

    /// This member's attestation of `slot` (`label` as signed; the slot's own by default) in vault `vaultID`.
    func attest(_ slot: TrustMember, vaultID: [UInt8], label: String? = nil) throws -> SlotAttestation {
        let message = SealTranscript.attestation(vaultID: vaultID, slotType: slot.key.type, key: slot.key.bytes, label: label ?? slot.label)
        return SlotAttestation(adder: key, signature: try XEdDSA.sign(message: message, secret: secret))
    }
}

/// Builds the `SealEvidence` an open would establish of a copy: its slots, each attested by an
/// adder, its signer, ancestors and tombstones.
struct TrustCopy {
    static let vaultID = [UInt8](repeating: 0xA7, count: 16)

    var generation: UInt64 = 1
    /// The slots in order, each with its adder (nil: attested by itself) and the label as shown (nil: its own).
    var slots: [(member: TrustMember, adder: TrustMember?, shownLabel: String?)] = []
    var signer: TrustMember
    var replaced: TrustMember?
    var ancestors: [SealAncestor] = []
    var tombstones: [Tombstone] = []
    var headerHash = randomBytes(16)

    /// A copy of `members` (each attested by `adder`, or by itself) signed by `signer` (the first by default).
    init(_ members: [TrustMember], adder: TrustMember? = nil, signer: TrustMember? = nil, generation: UInt64 = 1) {
        slots = members.map { ($0, adder, nil) }
        self.signer = signer ?? members[0]
        self.generation = generation
    }

    /// The evidence, with real attestations.
    func evidence() throws -> SealEvidence {
        var attestations: [SlotAttestation] = []
        var described: [SealEvidence.Slot] = []
        for (position, slot) in slots.enumerated() {
            attestations.append(try (slot.adder ?? slot.member).attest(slot.member, vaultID: Self.vaultID))
            described.append(SealEvidence.Slot(position: position, type: slot.member.key.type, label: slot.shownLabel ?? slot.member.label,
                                               key: slot.member.key.bytes))
        }
        let position = slots.firstIndex { $0.member.key == signer.key } ?? 0
        return SealEvidence(vaultID: Self.vaultID, generation: generation, fileKeyID: randomBytes(16), headerHash: headerHash,
                            signer: replaced?.key ?? signer.key, signerPosition: position, scheme: .xeddsa, replacedKey: replaced?.key,
                            slots: described, record: SealRecord(ancestors: ancestors, attestations: attestations, tombstones: tombstones))
    }

    /// What `MemberTrust.judge` is given of it.
    func copy() throws -> MemberTrust.Copy {
        MemberTrust.Copy(evidence: try evidence(), vaultID: Self.vaultID, generation: generation)
    }
}

/// A record that pinned `members` from a copy at `generation` (accepted as a first open).
func pinnedRecord(_ members: [TrustMember], generation: UInt64 = 1, path: String = "/v/team.vault") throws -> MemberTrust.Record {
    var record = MemberTrust.Record()
    record.accept(try TrustCopy(members, generation: generation).evidence(), path: path, recordHeader: true)
    return record
}

/// The judgement of `copy` by `record`, comparing generations.
func judged(_ copy: TrustCopy, by record: MemberTrust.Record?, otherVault: String? = nil, comparing: Bool = true) throws -> MemberTrust.Judgement {
    MemberTrust.judge(try copy.copy(), record: record, otherVaultAtPath: otherVault, comparesGenerations: comparing)
}

func randomBytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 0...255) }
}
