import SecureMemory
import VaultModel
import VaultPQ

// MARK: - mlkem768x25519 keyslots (type 8, format 1.4)

/// A post-quantum hybrid keyslot: the file key sealed with HPKE base mode (MLKEM768-X25519 as age
/// 1.3 uses it, HKDF-SHA256, ChaCha20Poly1305) to an `age1pq1…` recipient, under an info that binds
/// the slot type and the vault (docs/FORMAT.md §3.13). The 1,216-byte public key lives in the
/// metadata (version 2, flag 0x10), so a rotation re-wraps the slot with a fresh encapsulation and
/// no secret. The slot's secret cannot sign seals: a signed vault is written through a delegation.
public struct HybridSlot: Equatable, Sendable {
    /// The slot's type byte.
    public static let type: UInt8 = 8
    /// The body's length: enc (1,120) ‖ sealed file key (32 + 16).
    static let bodyLength = HybridKEM.encapsulationLength + 48
    /// The first bytes of every wrap's HPKE info (never age's `age-encryption.org/mlkem768x25519`).
    static let infoPrefix = Array("vaultfile keyslot 1.3 mlkem768x25519".utf8)

    /// HPKE's encapsulated key: ML-KEM-768 ciphertext ‖ X25519 ephemeral share (1,120 bytes).
    public var enc: [UInt8]
    /// The 32-byte file key sealed by HPKE's AEAD, then its 16-byte tag.
    public var ciphertext: [UInt8]

    /// The HPKE info of a wrap in the vault `vaultID`: `"vaultfile keyslot 1.3 mlkem768x25519" ‖ 08 ‖ vault id`.
    static func info(vaultID: [UInt8]) -> [UInt8] { infoPrefix + [type] + vaultID }

    /// The slot's body: enc ‖ ciphertext (package: the fuzz target's round trip).
    package func body() -> [UInt8] { enc + ciphertext }

    /// Parses a body of exactly 1,168 bytes, else damage (checked before any decapsulation).
    /// Package: the fuzz target (property 17) parses hostile bodies with it.
    package static func parse(body: ArraySlice<UInt8>, index: Int) throws(VaultError) -> HybridSlot {
        guard body.count == bodyLength else {
            throw .headerDamaged("keyslot \(index) is \(body.count) bytes; an mlkem768x25519 slot is \(bodyLength)")
        }
        return HybridSlot(enc: Array(body.prefix(HybridKEM.encapsulationLength)), ciphertext: Array(body.suffix(48)))
    }

    /// A slot wrapping `fileKey` to `key`: a fresh encapsulation at every wrap, rotations included.
    static func wrap(_ fileKey: SecureBytes, to key: HybridPublicKey, vaultID: [UInt8]) throws(VaultError) -> HybridSlot {
        do {
            let (enc, ciphertext) = try HybridKEM.seal(fileKey, to: key, info: info(vaultID: vaultID))
            return HybridSlot(enc: enc, ciphertext: ciphertext)
        } catch {
            throw .malformedInput("encapsulating to the mlkem768x25519 key of a keyslot failed: the key is not a valid ML-KEM-768 + X25519 key")
        }
    }

    /// The file key, if `identity` opens this slot (lengths exact, HPKE opens under this vault's
    /// info, 32 bytes); nil otherwise.
    func unwrap(with identity: HybridIdentity, vaultID: [UInt8]) -> SecureBytes? {
        identity.open(enc: enc, ciphertext: ciphertext, info: Self.info(vaultID: vaultID), plaintextLength: 32)
    }
}

// MARK: - Naming

extension HybridSlot {
    /// The kind's name in `slot list`, `info` and messages.
    public static let kindName = "mlkem768x25519"

    /// The one fingerprint of a post-quantum key, wherever a key is shown or named (`slot list`,
    /// `slot rm`/`label`, rotations, `trust`, `--json`): `mlkem768x25519:` and 16 hex digits of
    /// the 1,216-byte key's SHA-256 (the 1,959-character recipient is too long for a column).
    public static func fingerprint(of key: [UInt8]) -> String { fingerprintPrefix + SlotMetadata.fingerprintDigits(of: key) }
    /// What every post-quantum fingerprint starts with.
    public static let fingerprintPrefix = "mlkem768x25519:"
}

// MARK: - Post-quantum and plugin slots do not sign

extension UnlockedVault {
    /// Why a signed vault has no signer: `slotCannotSign` when a post-quantum or plugin slot
    /// opened it (neither has a signing key; docs/FORMAT.md §3.12, §3.13), naming how many of the
    /// vault's slots can sign; else `noSealSigner`.
    func missingSigner() -> VaultError {
        guard let opened = openedSlot, header.keyslots.indices.contains(opened.index) else { return .noSealSigner }
        let kind: String
        switch header.keyslots[opened.index] {
        case .mlkem768x25519: kind = "post-quantum (\(HybridSlot.kindName))"
        case .plugin: kind = "an age plugin slot"
        default: return .noSealSigner
        }
        return .slotCannotSign(slot: opened.index, kind: kind, signers: header.keyslots.filter { SealScheme.direct(forSlotType: $0.typeByte) != nil }.count)
    }
}
