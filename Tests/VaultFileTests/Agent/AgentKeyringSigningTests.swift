import SecureMemory
import TestSupport
import Testing
@testable import VaultAgent
@testable import VaultFormat
@testable import VaultModel

/// The agent's delegations: kept per file key id beside the key they are for, checked when handed
/// over, used only for a header whose metadata a held key opens, and wiped with the vault.
@Suite struct AgentKeyringSigningTests {
    private let payloadHash = Array(repeating: UInt8(0x5A), count: 64)

    /// Whether `block` is a scheme-3 signature over `prefix` and `payloadHash` by its delegated key,
    /// under a delegation `signer` made for `sample`'s file key.
    private func verifies(_ block: SealSignatureBlock, prefix: [UInt8], sample: SignedPrefixSample, signer: MemberKey,
                          fileKeyID: [UInt8]? = nil) throws -> Bool {
        let delegation = try #require(block.delegation)
        let keyID = fileKeyID ?? sample.fileKeyID
        let delegated = SealTranscript.delegation(vaultID: sample.vaultID, fileKeyID: keyID, delegatedKey: block.signerKey, expiry: delegation.expiry)
        let seal = SealTranscript.seal(scheme: .delegated, vaultID: sample.vaultID, generation: 5, fileKeyID: keyID,
                                       signerPosition: block.signerPosition, signerType: block.signerType, signerKey: block.signerKey,
                                       headerPrefix: prefix, payloadHash: payloadHash)
        return block.scheme == .delegated && SealVerification.verifies(signature: delegation.signature, message: delegated, by: signer)
            && SealVerification.ed25519Verifies(signature: block.signature, message: seal, publicKey: block.signerKey)
    }

    // MARK: - signer: success

    @Test func test_signer_signsUnderTheDelegationOfTheKeyThatOpensTheMetadata() throws {
        let sample = try SignedPrefixSample()
        let delegation = try sample.delegation()
        var keyring = AgentKeyring()
        #expect(try keyring.add(sample.handOver(delegation), now: 0) == .held)
        #expect(keyring.delegationCount == 1)
        let prefix = try sample.prefix()
        let match = try keyring.signer(forPrefix: prefix, now: 1, wallClock: 1_000)
        #expect(match.vaultID == sample.vaultID && match.fileKeyID == sample.fileKeyID && match.signerPosition == 0 && match.confirmCommand == nil)
        let block = match.signatureBlock(payloadHash: payloadHash)
        #expect(block.signerKey == delegation.key.publicKey && block.signerType == sample.memberKey(0).type && block.delegation == delegation.delegation)
        #expect(try verifies(block, prefix: prefix, sample: sample, signer: sample.memberKey(0)))
        // The header hash is the agent's own: a seal of other bytes does not verify with this signature.
        var other = prefix
        other[20] ^= 1
        #expect(try !verifies(block, prefix: other, sample: sample, signer: sample.memberKey(0)))
    }

    @Test func test_signer_namesTheDelegatingSlotsPositionAndTheConfirmCommand() throws {
        let sample = try SignedPrefixSample(members: 3)
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(try sample.delegation(by: 2), confirm: "true"), now: 0)
        let prefix = try sample.prefix()
        let match = try keyring.signer(forPrefix: prefix, now: 1, wallClock: 1_000)
        #expect(match.signerPosition == 2 && match.confirmCommand == "true")
        #expect(try verifies(match.signatureBlock(payloadHash: payloadHash), prefix: prefix, sample: sample, signer: sample.memberKey(2)))
    }

    @Test func test_signer_usesTheDelegationOfEachKeyForItsOwnHeaders() throws {
        let sample = try SignedPrefixSample()
        let rotated = SecureBytes(copying: randomBytes(count: 32))
        let rotatedID = HeaderPrefix.fileKeyID(of: rotated)
        var keyring = AgentKeyring()
        let first = try sample.delegation(), second = try sample.delegation(fileKeyID: rotatedID)
        try keyring.add(sample.handOver(first), now: 0)
        #expect(try keyring.add(sample.handOver(second, fileKey: rotated, heldKey: sample.fileKey, onlyIfHeld: true), now: 0) == .held)
        #expect(keyring.keyCount == 2 && keyring.delegationCount == 2)
        let old = try keyring.signer(forPrefix: try sample.prefix(), now: 1, wallClock: 1)
        let new = try keyring.signer(forPrefix: try sample.prefix(fileKey: rotated), now: 1, wallClock: 1)
        #expect(old.fileKeyID == sample.fileKeyID && old.signatureBlock(payloadHash: payloadHash).signerKey == first.key.publicKey)
        #expect(new.fileKeyID == rotatedID && new.signatureBlock(payloadHash: payloadHash).signerKey == second.key.publicKey)
    }

    @Test func test_signer_takesThePrefixTheFormatsSealerSends() throws {
        // A vault signed by the format's own code (password slot), sealed, its header parsed back:
        // the agent reads `signedPrefix()` as the sealer sends it, and finds the password slot.
        let unlocked = try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "me")], now: 0)
        let bytes = try unlocked.seal()
        let header = try VaultHeader.parse(bytes, path: "t").header
        #expect(header.isSigned)
        let parsed = try HeaderPrefix(header.signedPrefix())
        #expect(parsed.vaultID == header.vaultID && parsed.generation == header.generation)
        let entries = try #require(try parsed.openMetadata(fileKey: unlocked.fileKey))
        #expect(entries == unlocked.slotMetadata!)
        #expect(try parsed.openMetadata(fileKey: SecureBytes(copying: randomBytes(count: 32))) == nil)
    }

    // MARK: - add: what is taken

    @Test func test_add_refusesADelegationForAnotherFileKeyAndChangesNothing() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        let elsewhere = try sample.delegation(fileKeyID: Array(repeating: 7, count: 16))
        #expect(throws: AgentKeyring.Refusal.delegationInvalid) { try keyring.add(sample.handOver(elsewhere), now: 0) }
        #expect(keyring.isEmpty)
        // Held already: the refused delegation leaves the vault and its (absent) delegation as they were.
        try keyring.add(sample.handOver(nil), now: 0)
        #expect(throws: AgentKeyring.Refusal.delegationInvalid) { try keyring.add(sample.handOver(elsewhere), now: 0) }
        #expect(keyring.delegationCount == 0)
    }

    @Test func test_add_refusesADelegationWhoseSignatureOrSchemeIsWrong() throws {
        let sample = try SignedPrefixSample(members: 2)
        var forged = try sample.delegation()
        forged.delegation.signature[0] ^= 1
        var keyring = AgentKeyring()
        #expect(throws: AgentKeyring.Refusal.delegationInvalid) { try keyring.add(sample.handOver(forged), now: 0) }
        var otherSigner = try sample.delegation(by: 0)
        otherSigner.delegatingKey = sample.memberKey(1)
        #expect(throws: AgentKeyring.Refusal.delegationInvalid) { try keyring.add(sample.handOver(otherSigner), now: 0) }
        var wrongScheme = try sample.delegation()
        wrongScheme.delegation.delegatingScheme = .ed25519
        #expect(throws: AgentKeyring.Refusal.delegationInvalid) { try keyring.add(sample.handOver(wrongScheme), now: 0) }
        #expect(keyring.isEmpty)
    }

    @Test func test_add_dropsTheDelegationOfAnOnlyIfHeldKeyNotTaken() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        #expect(try keyring.add(sample.handOver(try sample.delegation(), onlyIfHeld: true), now: 0) == .notHeld)
        #expect(keyring.isEmpty && keyring.delegationCount == 0)
    }

    @Test func test_add_replacesTheDelegationOfAKeyAndKeepsOneWithoutANewOne() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        let first = try sample.delegation(expiry: 100), second = try sample.delegation(expiry: 200)
        try keyring.add(sample.handOver(first), now: 0)
        try keyring.add(sample.handOver(second), now: 0)
        #expect(keyring.delegationCount == 1 && keyring.status(now: 0, wallClock: 50).first?.signsUntil == 200)
        // An unlock with a slot that cannot sign hands over no delegation: the held one stays.
        try keyring.add(sample.handOver(nil), now: 0)
        #expect(keyring.delegationCount == 1)
    }

    // MARK: - signer: refusals

    @Test func test_signer_refusesWithoutADelegationOrWhenExpired() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        #expect(throws: AgentSignFailure.refused(.notHeld)) { try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 0) }
        try keyring.add(sample.handOver(nil), now: 0)
        #expect(throws: AgentSignFailure.refused(.noDelegation)) { try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 0) }
        try keyring.add(sample.handOver(try sample.delegation(expiry: 1_000)), now: 0)
        #expect(throws: AgentSignFailure.refused(.expired)) { try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 1_000) }
        // A header under another key of the same vault id: none held opens its metadata.
        let stranger = SecureBytes(copying: randomBytes(count: 32))
        #expect(throws: AgentSignFailure.refused(.notHeld)) {
            try keyring.signer(forPrefix: try sample.prefix(fileKey: stranger), now: 0, wallClock: 0)
        }
    }

    @Test func test_signer_refusesWhenTheDelegatingKeyHoldsNoSlot() throws {
        let sample = try SignedPrefixSample()
        let outsider = try SignedPrefixSample()
        // Signed by a real key for this vault's file key, but that key is no slot of the header.
        let key = DelegatedSigningKey()
        let message = SealTranscript.delegation(vaultID: sample.vaultID, fileKeyID: sample.fileKeyID, delegatedKey: key.publicKey, expiry: 9_999)
        let delegation = AgentDelegationHandOver(
            key: key, delegation: SealDelegation(delegatingScheme: .xeddsa, expiry: 9_999,
                                                 signature: try XEdDSA.sign(message: message, secret: outsider.members[0].secretKey)),
            delegatingKey: outsider.memberKey(0))
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(delegation), now: 0)
        #expect(throws: AgentSignFailure.refused(.delegatingSlotGone)) { try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 0) }
    }

    @Test func test_signer_refusesBytesThatAreNotASignedHeadersPrefix() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(try sample.delegation()), now: 0)
        let prefix = try sample.prefix()
        var unsigned = prefix
        unsigned[37] &= ~HeaderPrefix.signedFlag
        var longer = prefix
        longer[10] &+= 1
        for bad in [[], Array(prefix.prefix(40)), unsigned, longer, prefix + [0], Array(prefix.dropLast())] {
            #expect(throws: AgentSignFailure.self) { try keyring.signer(forPrefix: bad, now: 0, wallClock: 0) }
        }
        // Damage inside the sealed metadata: no key opens it.
        var flipped = prefix
        flipped[flipped.count - 1] ^= 1
        #expect(throws: AgentSignFailure.refused(.notHeld)) { try keyring.signer(forPrefix: flipped, now: 0, wallClock: 0) }
        for _ in 0..<200 { _ = try? keyring.signer(forPrefix: randomBytes(count: Int.random(in: 0...600)), now: 0, wallClock: 0) }
    }

    // MARK: - Forgetting

    @Test func test_delegations_areWipedOnLockIdleExpiryAndStop() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(try sample.delegation(), timeout: 10), now: 0)
        #expect(keyring.forget(vaultID: sample.vaultID) == 1 && keyring.delegationCount == 0)
        try keyring.add(sample.handOver(try sample.delegation(), timeout: 10), now: 0)
        #expect(throws: AgentSignFailure.refused(.notHeld)) { try keyring.signer(forPrefix: try sample.prefix(), now: 10, wallClock: 0) }
        #expect(keyring.expire(now: 10) == 1 && keyring.delegationCount == 0)
        try keyring.add(sample.handOver(try sample.delegation(), timeout: 10), now: 0)
        #expect(keyring.forgetAll() == 1 && keyring.delegationCount == 0)
    }

    @Test func test_expireDelegations_wipesOnlyExpiredOnesAndKeepsTheKeys() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(try sample.delegation(expiry: 100)), now: 0)
        #expect(keyring.expireDelegations(wallClock: 99) == 0 && keyring.delegationCount == 1)
        #expect(keyring.status(now: 0, wallClock: 99).first?.signsUntil == 100)
        #expect(keyring.expireDelegations(wallClock: 100) == 1 && keyring.delegationCount == 0 && keyring.keyCount == 1)
        #expect(keyring.status(now: 0, wallClock: 100).first?.signsUntil == 0)
        // Wiped, it is still an expired delegation: `noDelegation` is kept for a key that never had one (a slot that cannot sign).
        #expect(throws: AgentSignFailure.refused(.expired)) { try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 100) }
    }

    @Test func test_signed_refusesWhenTheDelegationWentOrChangedMeanwhile() throws {
        let sample = try SignedPrefixSample()
        var keyring = AgentKeyring()
        try keyring.add(sample.handOver(try sample.delegation(expiry: 100)), now: 0)
        let match = try keyring.signer(forPrefix: try sample.prefix(), now: 0, wallClock: 0)
        let inTime = keyring.signed(match, path: "/v", now: 1, wallClock: 1)
        let late = keyring.signed(match, path: "/v", now: 1, wallClock: 100)
        #expect(inTime && !late)
        try keyring.add(sample.handOver(try sample.delegation(expiry: 200)), now: 0)
        let replaced = keyring.signed(match, path: "/v", now: 1, wallClock: 1)
        #expect(!replaced, "replaced by another unlock's delegation")
        keyring.forgetAll()
        let forgotten = keyring.signed(match, path: "/v", now: 1, wallClock: 1)
        #expect(!forgotten)
    }
}
