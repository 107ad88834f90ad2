import Foundation
import SecureMemory
@testable import VaultFormat
@testable import VaultModel

/// Signed vaults of format 1.4 for the attack cases: a password slot, an age recipient and the
/// 2,048-bit (or 4,096-bit) ssh-rsa key of `Fixtures/v1.4`, last sealed by the ssh-rsa slot (scheme 4).
enum LongKeysCraft {
    /// The vault (holding `vault`, or `sampleVault()`), as `SignedSealCraft` over its bytes (opened with `password`).
    /// `key` is the ssh-rsa slot's (and signer's) key.
    static func signedByRSA(password: String = "pw", vault: Vault? = nil, key: SSHRSAIdentity = RSASlotTests.rsa2048) throws -> SignedSealCraft {
        let made = try VaultCodec.create(try vault ?? sampleVault(), slots: [(.password(VaultFileTests.password(password), testKDF), "admin"),
                                                                            (.recipient(AgeIdentity.generate().recipient), "alice"),
                                                                            (.sshRSA(key.publicKey), "carol")], now: 1)
        let byCarol = try VaultCodec.open(try made.seal(), path: "v", credentials: [RSASlotTests.rsaCredential(key)], limits: testLimits)
        byCarol.headerChanged = true
        return try SignedSealCraft(file: try byCarol.seal(), password: password)
    }

    /// The metadata block of `header` replaced by `plaintext` sealed under `fileKey`, MAC recomputed
    /// (an unsigned header: nothing else covers the block).
    static func withMetadata(_ plaintext: [UInt8], header: VaultHeader, fileKey: SecureBytes, payload: [UInt8]) throws -> [UInt8] {
        var next = header
        next.metadata = MetadataBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: plaintext.count + 16))
        let nonce = randomBytes(count: 24)
        let key = Subkey.derive(from: fileKey, MetadataBlock.subkey)
        let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: next.metadataAssociatedData()) }
        next.metadata = MetadataBlock(nonce: nonce, sealed: sealed)
        next.mac = VaultCodec.headerMAC(next, fileKey: fileKey)
        return next.encoded() + payload
    }
}

extension SignedSealCraft {
    /// A seal signed by `identity` (a key no slot holds) claiming the ssh-rsa slot's position, over the right transcript.
    func signedBy(_ identity: SSHRSAIdentity, position: Int = 2) throws -> [UInt8] {
        let signer = SlotSealSigner(position: position, key: MemberKey(type: RSASlot.type, bytes: identity.publicKey.wireBytes), secret: .rsa(identity))
        let payload = Array(base[headerLength...])
        return try resealed(block: try signer.signSeal(SealSigningRequest(headerPrefix: header.signedPrefix(), payloadHash: SealTranscript.blake2b512(payload),
                                                                          fileKeyID: unlocked.sealFileKeyID, slots: [])))
    }
}
