import CSodium
import SecureMemory
import VaultModel

// MARK: - The bytes each signature covers (docs/FORMAT.md "Signed seals"; little-endian integers)

/// The messages a seal signature, a delegation and a slot attestation sign. Each starts with its
/// own ASCII prefix and a zero byte, which can never parse as an SSH userauth blob (a big-endian
/// length of about 1.9 GB first) or an SSHSIG (which starts with `SSHSIG`): a vaultfile signature
/// is never an SSH or git signature, and the three never stand for one another.
public enum SealTranscript {
    /// The seal signature's prefix.
    public static let sealPrefix = Array("vaultfile seal signature v1".utf8) + [0]
    /// The delegation's prefix.
    public static let delegationPrefix = Array("vaultfile agent delegation v1".utf8) + [0]
    /// The slot attestation's prefix.
    public static let attestationPrefix = Array("vaultfile slot attestation v1".utf8) + [0]

    /// `prefix ‖ scheme ‖ vault id (16) ‖ generation (8) ‖ file key id (16) ‖ signer position (1) ‖
    /// signer type (1) ‖ u16 key length ‖ signer key ‖ BLAKE2b-512(header prefix) ‖ payload hash (64)`.
    public static func seal(scheme: SealScheme, vaultID: [UInt8], generation: UInt64, fileKeyID: [UInt8], signerPosition: Int,
                            signerType: UInt8, signerKey: [UInt8], headerPrefix: [UInt8], payloadHash: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: sealPrefix.count + 45 + signerKey.count + 128)
        writer.append(sealPrefix)
        writer.append(scheme.rawValue)
        writer.append(vaultID)
        writer.append(generation)
        writer.append(fileKeyID)
        writer.append(UInt8(truncatingIfNeeded: signerPosition))
        writer.append(signerType)
        writer.append(UInt16(truncatingIfNeeded: signerKey.count))
        writer.append(signerKey)
        writer.append(blake2b512(headerPrefix))
        writer.append(payloadHash)
        return writer.bytes
    }

    /// `prefix ‖ vault id (16) ‖ file key id (16) ‖ delegated Ed25519 public key (32) ‖ expiry (8)`.
    public static func delegation(vaultID: [UInt8], fileKeyID: [UInt8], delegatedKey: [UInt8], expiry: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: delegationPrefix.count + 72)
        writer.append(delegationPrefix)
        writer.append(vaultID)
        writer.append(fileKeyID)
        writer.append(delegatedKey)
        writer.append(expiry)
        return writer.bytes
    }

    /// `prefix ‖ vault id (16) ‖ slot type (1) ‖ u16 key length ‖ key ‖ label length (1) ‖ label`.
    public static func attestation(vaultID: [UInt8], slotType: UInt8, key: [UInt8], label: String) -> [UInt8] {
        let labelBytes = Array(label.utf8)
        var writer = ByteWriter(capacity: attestationPrefix.count + 20 + key.count + labelBytes.count)
        writer.append(attestationPrefix)
        writer.append(vaultID)
        writer.append(slotType)
        writer.append(UInt16(truncatingIfNeeded: key.count))
        writer.append(key)
        writer.append(UInt8(truncatingIfNeeded: labelBytes.count))
        writer.append(labelBytes)
        return writer.bytes
    }

    /// BLAKE2b-512 of `bytes` (unkeyed `crypto_generichash`, 64-byte output).
    public static func blake2b512(_ bytes: [UInt8]) -> [UInt8] {
        ensureSodiumInitialised()
        var out = [UInt8](repeating: 0, count: 64)
        _ = crypto_generichash(&out, 64, bytes, UInt64(bytes.count), nil, 0)
        return out
    }

    /// BLAKE2b-128 of a whole header (an ancestor's header hash).
    public static func headerHash(_ header: [UInt8]) -> [UInt8] {
        ensureSodiumInitialised()
        var out = [UInt8](repeating: 0, count: 16)
        _ = crypto_generichash(&out, 16, header, UInt64(header.count), nil, 0)
        return out
    }
}

// MARK: - Checking one signature

/// Verifies a signature by a member key: XEd25519 for a 32-byte X25519 key, Ed25519 (libsodium's
/// strict `crypto_sign_verify_detached`) with the 32 bytes inside a 51-byte ssh-ed25519 wire key.
public enum SealVerification {
    /// Whether `signature` is `key`'s over `message`.
    public static func verifies(signature: [UInt8], message: [UInt8], by key: MemberKey) -> Bool {
        switch SealScheme.direct(forSlotType: key.type) {
        case .rsaPSS?:
            // The signature is exactly as long as the modulus; the key is checked as a slot's is.
            guard let rsa = try? SSHRSAPublicKey(wire: key.bytes) else { return false }
            return rsa.pssVerifies(signature, message: message)
        case _ where signature.count != 64:
            return false
        case .xeddsa?:
            guard key.bytes.count == 32 else { return false }
            return XEdDSA.verify(signature: signature, message: message, publicKey: key.bytes)
        case .ed25519?:
            guard let edwards = ed25519Key(inWireKey: key.bytes) else { return false }
            return ed25519Verifies(signature: signature, message: message, publicKey: edwards)
        default:
            return false
        }
    }

    /// Libsodium's strict Ed25519 verification of a 32-byte public key.
    public static func ed25519Verifies(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        ensureSodiumInitialised()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// The 32-byte Ed25519 key inside an ssh-ed25519 wire key (`string "ssh-ed25519" ‖ string A`), or nil.
    public static func ed25519Key(inWireKey wire: [UInt8]) -> [UInt8]? {
        let name = Array("ssh-ed25519".utf8)
        let expected: [UInt8] = [0, 0, 0, UInt8(name.count)] + name + [0, 0, 0, 32]
        guard wire.count == expected.count + 32, Array(wire.prefix(expected.count)) == expected else { return nil }
        return Array(wire.suffix(32))
    }
}
