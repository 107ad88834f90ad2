import SecureMemory
import Testing
import VaultAgent
import VaultFormat
import VaultModel
@testable import vaultfile

/// The client's check of the agent's answer (`AgentSealSigner.verifies`): a signature block is used
/// only when it is the delegated key's over this very seal, under a delegation the named slot's
/// key made for this file key; anything else fails before a byte is written.
@Suite struct AgentSealSignerTests {
    /// A signed vault of one password slot, the prefix and request its next seal would send, and a
    /// block signed as the agent signs it (a delegation from the slot's own signer).
    private struct Seal {
        let request: SealSigningRequest
        let block: SealSignatureBlock

        init() throws {
            let unlocked = try VaultCodec.create(Vault(), slots: [(.password(SecureBytes(copying: Array("pw".utf8)),
                                                                              .argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))), "me")],
                                                 now: 0)
            let header = try VaultHeader.parse(try unlocked.seal(), path: "t").header
            let prefix = header.signedPrefix(), payloadHash = Array(repeating: UInt8(7), count: 64)
            let fileKeyID = VaultCodec.fileKeyID(of: unlocked.fileKey)
            request = SealSigningRequest(headerPrefix: prefix, payloadHash: payloadHash, fileKeyID: fileKeyID, slots: unlocked.slotMetadata!)
            let signer = try #require(unlocked.sealSigner as? SlotSealSigner)
            let key = DelegatedSigningKey()
            let delegation = try signer.delegate(vaultID: header.vaultID, fileKeyID: fileKeyID, delegatedKey: key.publicKey, expiry: 9_999_999_999)
            let transcript = SealTranscript.seal(scheme: .delegated, vaultID: header.vaultID, generation: header.generation, fileKeyID: fileKeyID,
                                                 signerPosition: 0, signerType: signer.key.type, signerKey: key.publicKey,
                                                 headerPrefix: prefix, payloadHash: payloadHash)
            block = SealSignatureBlock(scheme: .delegated, signerPosition: 0, signerType: signer.key.type, signerKey: key.publicKey,
                                       delegation: delegation, signature: key.sign(transcript))
        }
    }

    @Test func test_verifies_acceptsTheAgentsSignatureOverThisSeal() throws {
        let seal = try Seal()
        #expect(AgentSealSigner.verifies(seal.block, for: seal.request))
    }

    @Test func test_verifies_refusesAnythingElse() throws {
        let seal = try Seal()
        var otherPayload = seal.request
        otherPayload.payloadHash[0] ^= 1
        var otherKeyID = seal.request
        otherKeyID.fileKeyID[0] ^= 1
        var signature = seal.block
        signature.signature[0] ^= 1
        var delegation = seal.block
        delegation.delegation?.signature[0] ^= 1
        var position = seal.block
        position.signerPosition = 1
        var scheme = seal.block
        scheme.scheme = .xeddsa
        #expect(!AgentSealSigner.verifies(seal.block, for: otherPayload))
        #expect(!AgentSealSigner.verifies(seal.block, for: otherKeyID), "a delegation for another file key")
        for block in [signature, delegation, position, scheme] { #expect(!AgentSealSigner.verifies(block, for: seal.request)) }
    }
}
