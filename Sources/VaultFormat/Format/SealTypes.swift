import CSodium
import SecureMemory
import VaultModel

// MARK: - Who signed a seal, and what it vouches for (format 1.3, docs/FORMAT.md "Signed seals")

/// How a seal's signature was made.
public enum SealScheme: UInt8, Sendable, CaseIterable {
    /// XEd25519 by an X25519 slot key (slot types 2–5).
    case xeddsa = 1
    /// Ed25519 by an ssh-ed25519 slot key (type 6).
    case ed25519 = 2
    /// Ed25519 by a key the agent holds under a delegation a slot signed.
    case delegated = 3
    /// RSA-PSS-SHA-256 (MGF1-SHA-256, 32-byte salt) by an ssh-rsa slot key (type 7, format 1.4).
    case rsaPSS = 4

    /// The scheme a slot key of `type` signs with directly; nil for a type that cannot sign.
    public static func direct(forSlotType type: UInt8) -> SealScheme? {
        switch type {
        case 2, 3, 4, 5: return .xeddsa
        case 6: return .ed25519
        case RSASlot.type: return .rsaPSS
        default: return nil
        }
    }
}

/// A member's public key as the metadata holds it: the 32-byte X25519 `R` of slot types 2–5, or
/// the 51-byte ssh-ed25519 wire key of type 6, with the slot type it was seen under.
public struct MemberKey: Hashable, Sendable {
    /// The slot type the key belongs (or belonged) to.
    public var type: UInt8
    /// The key as the metadata holds it.
    public var bytes: [UInt8]

    /// A key of slot type `type`.
    public init(type: UInt8, bytes: [UInt8]) {
        self.type = type
        self.bytes = bytes
    }

    /// The member key id: the first 16 bytes of BLAKE2b-256(`"vaultfile member key v1"` ‖ 00 ‖ key).
    /// The type is not in it: a key is one member whatever slot holds it.
    public var id: [UInt8] { Self.id(of: bytes) }

    /// The member key id of `key` (the bytes as the metadata holds them).
    public static func id(of key: [UInt8]) -> [UInt8] {
        Array(Checksum.blake2b256((Array("vaultfile member key v1".utf8) + [0] + key)[...]).prefix(16))
    }
}

/// An ancestor of a seal: the generation and the BLAKE2b-128 of a header it was made from.
public struct SealAncestor: Hashable, Sendable {
    /// The ancestor's generation.
    public var generation: UInt64
    /// BLAKE2b-128 of the ancestor's whole header as it was on disk (magic … checksum).
    public var headerHash: [UInt8]

    /// An ancestor.
    public init(generation: UInt64, headerHash: [UInt8]) {
        self.generation = generation
        self.headerHash = headerHash
    }
}

/// Who added a slot, and their signature over it (the attestation transcript).
public struct SlotAttestation: Equatable, Sendable {
    /// The adder's key, with the slot type it had when it signed.
    public var adder: MemberKey
    /// The adder's signature (XEd25519 for an X25519 key, Ed25519 for an ssh wire key), 64 bytes.
    public var signature: [UInt8]

    /// An attestation.
    public init(adder: MemberKey, signature: [UInt8]) {
        self.adder = adder
        self.signature = signature
    }
}

/// A removal that travels with the vault: a key removed, who removed it, at which seal.
public struct Tombstone: Hashable, Sendable {
    /// The member key id of the removed key.
    public var removed: [UInt8]
    /// The member key id of the key that signed the removal.
    public var remover: [UInt8]
    /// The generation of the seal that removed it.
    public var generation: UInt64

    /// A tombstone.
    public init(removed: [UInt8], remover: [UInt8], generation: UInt64) {
        self.removed = removed
        self.remover = remover
        self.generation = generation
    }
}

/// What a signed seal records in its metadata, beside the slots: ancestors, one attestation per
/// slot, and the tombstones of removed keys.
public struct SealRecord: Equatable, Sendable {
    /// The most ancestors a seal records.
    public static let maxAncestors = 8
    /// The most tombstones a seal keeps (the newest by generation).
    public static let maxTombstones = 256

    /// Newest generation first.
    public var ancestors: [SealAncestor]
    /// One per keyslot, in slot order.
    public var attestations: [SlotAttestation]
    /// Removed keys.
    public var tombstones: [Tombstone]

    /// A record.
    public init(ancestors: [SealAncestor] = [], attestations: [SlotAttestation] = [], tombstones: [Tombstone] = []) {
        self.ancestors = ancestors
        self.attestations = attestations
        self.tombstones = tombstones
    }
}

/// A delegation: a slot lets a key the agent holds sign seals under one file key.
public struct SealDelegation: Equatable, Sendable {
    /// How the delegating slot signed it (`.xeddsa` or `.ed25519`).
    public var delegatingScheme: SealScheme
    /// Seconds since 1970 after which the agent no longer signs with it.
    public var expiry: UInt64
    /// The delegating slot's signature over the delegation transcript.
    public var signature: [UInt8]

    /// A delegation.
    public init(delegatingScheme: SealScheme, expiry: UInt64, signature: [UInt8]) {
        self.delegatingScheme = delegatingScheme
        self.expiry = expiry
        self.signature = signature
    }
}

/// The contents of a signed seal's (encrypted) signature block.
public struct SealSignatureBlock: Equatable, Sendable {
    /// How the signature was made.
    public var scheme: SealScheme
    /// The slot whose key signed (or signed the delegation).
    public var signerPosition: Int
    /// That slot's type.
    public var signerType: UInt8
    /// The key that made `signature`: a slot key, or the delegated Ed25519 key (scheme 3).
    public var signerKey: [UInt8]
    /// Present exactly for `.delegated`.
    public var delegation: SealDelegation?
    /// 64 bytes over the seal transcript.
    public var signature: [UInt8]

    /// A signature block.
    public init(scheme: SealScheme, signerPosition: Int, signerType: UInt8, signerKey: [UInt8], delegation: SealDelegation?, signature: [UInt8]) {
        self.scheme = scheme
        self.signerPosition = signerPosition
        self.signerType = signerType
        self.signerKey = signerKey
        self.delegation = delegation
        self.signature = signature
    }
}

// MARK: - What an open found

/// What the open of a signed vault established (every seal signature checked) and what the
/// trust layer judges: who signed, the slots it vouches for, ancestors and tombstones.
public struct SealEvidence: Sendable {
    /// One slot of the copy, as its metadata says.
    public struct Slot: Equatable, Sendable {
        /// Position in the header.
        public var position: Int
        /// Type byte.
        public var type: UInt8
        /// Label.
        public var label: String
        /// The key as the metadata holds it (empty for a slot with none).
        public var key: [UInt8]
        /// Whether a slot of this type can sign seals.
        public var canSign: Bool { SealScheme.direct(forSlotType: type) != nil }

        /// A slot as the metadata says it.
        public init(position: Int, type: UInt8, label: String, key: [UInt8]) {
            self.position = position
            self.type = type
            self.label = label
            self.key = key
        }
    }

    /// The vault id.
    public var vaultID: [UInt8]
    /// The seal's generation.
    public var generation: UInt64
    /// The id of the file key the seal is under.
    public var fileKeyID: [UInt8]
    /// BLAKE2b-128 of this whole header as read.
    public var headerHash: [UInt8]
    /// The member that signed: the slot key (schemes 1, 2) or the delegating slot's key (3).
    public var signer: MemberKey
    /// The signer's slot position.
    public var signerPosition: Int
    /// How it was signed.
    public var scheme: SealScheme
    /// For a seal that changed its signer's own key (a re-salt): the old key that signed, while
    /// the slot at `signerPosition` now holds the new one (attested by the old). `signer` is then the old key.
    public var replacedKey: MemberKey?
    /// Every slot, in order.
    public var slots: [Slot]
    /// Ancestors, attestations, tombstones.
    public var record: SealRecord

    /// A record of what an open found.
    public init(vaultID: [UInt8], generation: UInt64, fileKeyID: [UInt8], headerHash: [UInt8], signer: MemberKey, signerPosition: Int,
                scheme: SealScheme, replacedKey: MemberKey?, slots: [Slot], record: SealRecord) {
        self.vaultID = vaultID
        self.generation = generation
        self.fileKeyID = fileKeyID
        self.headerHash = headerHash
        self.signer = signer
        self.signerPosition = signerPosition
        self.scheme = scheme
        self.replacedKey = replacedKey
        self.slots = slots
        self.record = record
    }

    /// Whether slot `position`'s attestation verifies: its adder signed (vault id, the slot's
    /// type, key and label). Checked only when the trust layer needs it (one verification each).
    public func attestationVerifies(at position: Int) -> Bool {
        guard slots.indices.contains(position), record.attestations.indices.contains(position) else { return false }
        let slot = slots[position], attestation = record.attestations[position]
        let message = SealTranscript.attestation(vaultID: vaultID, slotType: slot.type, key: slot.key, label: slot.label)
        return SealVerification.verifies(signature: attestation.signature, message: message, by: attestation.adder)
    }
}

// MARK: - Who signs the next seal

/// What a signer is given to sign a seal: everything the transcript needs.
public struct SealSigningRequest: Sendable {
    /// The header bytes up to the signature block (magic … metadata block), with the final H and flags.
    public var headerPrefix: [UInt8]
    /// BLAKE2b-512 of the payload as written.
    public var payloadHash: [UInt8]
    /// The id of the file key the seal is under.
    public var fileKeyID: [UInt8]
    /// The metadata of the slots being sealed, in order.
    public var slots: [SlotMetadata]

    /// A request.
    public init(headerPrefix: [UInt8], payloadHash: [UInt8], fileKeyID: [UInt8], slots: [SlotMetadata]) {
        self.headerPrefix = headerPrefix
        self.payloadHash = payloadHash
        self.fileKeyID = fileKeyID
        self.slots = slots
    }
}

/// Signs seals: a slot's own secret (`SlotSealSigner`), or the agent under a delegation
/// (`AgentSealSigner`, in the command-line target). A seam with two implementations.
public protocol SealSigner: Sendable {
    /// Signs the seal `request` describes; returns the whole signature block's contents.
    func signSeal(_ request: SealSigningRequest) throws -> SealSignatureBlock
}
