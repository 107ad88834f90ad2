import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Format 1.3's damage cases (issue 40): copies whose MACs all verify but whose seal is wrong,
/// as only a holder of the file key could write them, each refused as damage (exit 4) with a reason;
/// and the codecs of the signature block and the seal record, bounds-checked.
@Suite struct SignedSealDamageTests {
    /// Expects `file` to be refused as damage whose message holds `reason`.
    private func expectDamage(_ craft: SignedSealCraft, _ file: [UInt8], _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = craft.openError(file)
        guard case .headerDamaged(let why)? = error else {
            Issue.record("expected damage (\(reason)), got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(why.contains(reason), "\(why)", sourceLocation: sourceLocation)
    }

    // MARK: - Bytes changed without the key

    @Test func test_open_aFlippedByteIsTamperingOrPayloadDamage() throws {
        let craft = try SignedSealCraft()
        var header = craft.base, payload = craft.base
        header[craft.headerLength - 64 - 100] ^= 1  // inside the sealed signature block
        fixChecksum(&header)
        #expect(craft.openError(header) == .headerTampered)
        payload[craft.headerLength + 40] ^= 1
        guard case .payloadDamaged? = craft.openError(payload) else { Issue.record("a flipped payload byte is payload damage"); return }
    }

    // MARK: - The signature block, written with the file key

    @Test func test_open_aFlippedSignatureIsDamage() throws {
        let craft = try SignedSealCraft()
        #expect(craft.openError(try craft.resealed { _ in }) == nil, "re-sealing the same contents opens")
        expectDamage(craft, try craft.resealed { $0.signature[5] ^= 0x10 }, "does not verify")
    }

    @Test func test_open_aChangedPayloadUnderAnUnchangedSignatureIsDamage() throws {
        // Another seal's payload (same file key, valid chunks) under this header's signature: the payload hash differs.
        let craft = try SignedSealCraft()
        let other = try VaultCodec.open(craft.base, path: "t", password: password("pw"), limits: testLimits)
        try other.vault.setValue([9], for: "other", now: 1)
        var next = craft.header
        let resealed = try other.seal()
        let (otherHeader, otherLength) = try VaultHeader.parse(resealed, path: "t")
        next.streamHeader = otherHeader.streamHeader
        next.metadata = try MetadataBlock.sealChecked(craft.unlocked.slotMetadata!, for: next, fileKey: craft.unlocked.fileKey,
                                                      record: try #require(craft.unlocked.sealEvidence).record)
        next.signatureBlock = try SignatureBlock.seal(try craft.block, for: next, fileKey: craft.unlocked.fileKey)
        next.mac = VaultCodec.headerMAC(next, fileKey: craft.unlocked.fileKey)
        expectDamage(craft, next.encoded() + Array(resealed[otherLength...]), "does not verify")
    }

    @Test func test_parse_theBlockMissingUnderTheFlagIsDamage() throws {
        let craft = try SignedSealCraft()
        var next = craft.header
        next.signatureBlock = nil
        next.mac = VaultCodec.headerMAC(next, fileKey: craft.unlocked.fileKey)
        #expect(throws: VaultError.headerDamaged("the signature block is missing (the header has flag 0x08)")) {
            _ = try VaultHeader.parse(next.encoded() + Array(craft.base[craft.headerLength...]), path: "t")
        }
    }

    @Test func test_open_aSignerPositionThatIsNotTheSignersIsDamage() throws {
        let craft = try SignedSealCraft()
        expectDamage(craft, try craft.resealed { $0.signerPosition = 1; $0.signerType = 3 }, "is not keyslot 1's key")
        expectDamage(craft, try craft.resealed { $0.signerPosition = 1 }, "is said to be of type 4, but keyslot 1 is of type 3")
        expectDamage(craft, try craft.resealed { $0.signerPosition = 7 }, "names no keyslot")
        expectDamage(craft, try craft.resealed { $0.scheme = .ed25519 }, "cannot be keyslot 0's")
    }

    @Test func test_open_aSignerThatIsNotASlotIsDamage() throws {
        // A key of nobody's slot, with a genuine signature by it over the right transcript.
        let craft = try SignedSealCraft()
        expectDamage(craft, try craft.signedByStranger(), "is not keyslot 0's key (nor the key it replaced)")
    }

    @Test func test_open_aMemberSigningForASlotItAddedIsDamage() throws {
        // alice added bob (both age recipients); a seal by alice naming bob's slot is not a re-salt
        // of bob's key: alice's key is still in a slot.
        let alice = AgeIdentity.generate(), bob = AgeIdentity.generate()
        let created = try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "admin"),
                                                                       (.recipient(alice.recipient), "alice")], now: 1).seal()
        let byAlice = try VaultCodec.open(created, path: "t", credentials: [UnlockCredential(.ageIdentity(alice), source: "alice")], limits: testLimits)
        try byAlice.addSlot(.recipient(bob.recipient), label: "bob", now: 2)
        let file = try byAlice.seal()
        let craft = try SignedSealCraft(file: file)
        let forged = SlotSealSigner(position: 2, key: MemberKey(type: 3, bytes: alice.recipient.publicKey), secret: .x25519(alice.secretKey))
        let payload = Array(file[craft.headerLength...])
        let block = try forged.signSeal(SealSigningRequest(headerPrefix: craft.header.signedPrefix(), payloadHash: SealTranscript.blake2b512(payload),
                                                           fileKeyID: craft.unlocked.sealFileKeyID, slots: []))
        expectDamage(craft, try craft.resealed(block: block), "still holds a slot")
    }

    // MARK: - Delegations

    @Test func test_open_aDelegatedSealVerifiesAndNamesTheDelegatingSlot() throws {
        let craft = try SignedSealCraft()
        let opened = try VaultCodec.open(try craft.delegated(fileKeyID: craft.unlocked.sealFileKeyID), path: "t", password: password("pw"), limits: testLimits)
        let evidence = try #require(opened.sealEvidence)
        #expect(evidence.scheme == .delegated && evidence.signer == MemberKey(type: 4, bytes: craft.unlocked.slotMetadata![0].publicKey))
    }

    @Test func test_open_aDelegationForAnotherFileKeyIsDamage() throws {
        let craft = try SignedSealCraft()
        expectDamage(craft, try craft.delegated(fileKeyID: [UInt8](repeating: 0xAB, count: 16)), "delegation does not verify")
    }

    // MARK: - The seal record, written with the file key

    @Test func test_open_aSealRecordOutOfBoundsIsDamage() throws {
        let craft = try SignedSealCraft()
        let attestations = try #require(craft.unlocked.sealEvidence).record.attestations
        let ancestor = SealAncestor(generation: 1, headerHash: [UInt8](repeating: 1, count: 16))
        let nine = SealRecord(ancestors: Array(repeating: ancestor, count: 9), attestations: attestations)
        expectDamage(craft, try craft.resealed(rawMetadata: craft.rawMetadata(record: nine)), "9 ancestors")
        let tombstone = Tombstone(removed: [UInt8](repeating: 2, count: 16), remover: [UInt8](repeating: 3, count: 16), generation: 1)
        let many = SealRecord(attestations: attestations, tombstones: Array(repeating: tombstone, count: 257))
        expectDamage(craft, try craft.resealed(rawMetadata: craft.rawMetadata(record: many)), "257 tombstones")
        expectDamage(craft, try craft.resealed(rawMetadata: craft.rawMetadata(record: SealRecord(attestations: attestations), extra: [5])),
                     "non-zero padding")
        let good = craft.rawMetadata(record: SealRecord(attestations: attestations))
        #expect(craft.openError(try craft.resealed(rawMetadata: good)) == nil, "the same record re-signed opens")
        expectDamage(craft, try craft.resealed(rawMetadata: craft.rawMetadata(record: SealRecord(attestations: [attestations[0]]))), "attestation 1")
    }

    @Test func test_open_aBlockWithBadPaddingOrSchemeIsDamage() throws {
        let craft = try SignedSealCraft()
        var plaintext = try SignatureBlock.encode(try craft.block)
        plaintext[383] = 1
        expectDamage(craft, try craft.resealed(rawBlock: plaintext), "non-zero padding")
        plaintext[383] = 0
        plaintext[1] = 9
        expectDamage(craft, try craft.resealed(rawBlock: plaintext), "unknown signature scheme")
    }

    // MARK: - Flags and slots

    @Test func test_parse_theSignedFlagNeedsMinor3AndTheKeyslotsFlag() throws {
        let craft = try SignedSealCraft()
        var bytes = craft.base
        bytes[9] = 2
        fixChecksum(&bytes)
        #expect(throws: VaultError.unsupportedFeature("header flags 0x\(String(craft.header.flags, radix: 16))")) { _ = try VaultHeader.parse(bytes, path: "t") }
        bytes = craft.base
        bytes[37] &= ~VaultHeader.keyslotsFlag
        fixChecksum(&bytes)
        #expect(throws: VaultError.headerDamaged("flag 0x08 (signed seals) is set without flag 0x02 (keyslots)")) { _ = try VaultHeader.parse(bytes, path: "t") }
    }

    @Test func test_parse_aV1PasswordSlotInASignedFileIsDamage() throws {
        let craft = try SignedSealCraft()
        let v1 = try VaultCodec.makePasswordSlot(password: password("pw"), kdf: testKDF, fileKey: craft.unlocked.fileKey, vaultID: craft.header.vaultID)
        var next = craft.header
        next.keyslots.append(.password(v1))
        #expect(throws: VaultError.headerDamaged("keyslot 2 is a v1 password slot, which a signed vault never holds")) {
            _ = try VaultHeader.parse(next.encoded() + Array(craft.base[craft.headerLength...]), path: "t")
        }
    }

    // MARK: - Codecs

    @Test func test_signatureBlockCodec_roundTripsAndChecksEveryLength() throws {
        let delegation = SealDelegation(delegatingScheme: .ed25519, expiry: 0x0102030405060708, signature: [UInt8](repeating: 4, count: 64))
        let blocks = [
            SealSignatureBlock(scheme: .xeddsa, signerPosition: 3, signerType: 2, signerKey: [UInt8](repeating: 1, count: 32), delegation: nil,
                               signature: [UInt8](repeating: 2, count: 64)),
            SealSignatureBlock(scheme: .delegated, signerPosition: 15, signerType: 6, signerKey: [UInt8](repeating: 3, count: 32),
                               delegation: delegation, signature: [UInt8](repeating: 5, count: 64)),
        ]
        for block in blocks {
            let plaintext = try SignatureBlock.encode(block)
            let decoded = try SignatureBlock.decode(plaintext)
            #expect(plaintext.count == 384 && decoded == block)
            for cut in [0, 100, 383] { #expect(throws: VaultError.self) { _ = try SignatureBlock.decode(Array(plaintext.prefix(cut))) } }
        }
        var noDelegation = blocks[1]
        noDelegation.delegation = nil
        #expect(throws: VaultError.self) { _ = try SignatureBlock.encode(noDelegation) }
        var plaintext = try SignatureBlock.encode(blocks[0])
        plaintext[4] = 0  // an empty signer key
        #expect(throws: VaultError.self) { _ = try SignatureBlock.decode(plaintext) }
    }

    @Test func test_sealRecordCodec_roundTripsAndDecodeMetadataChecksTheRecord() throws {
        let craft = try SignedSealCraft()
        let record = SealRecord(
            ancestors: [SealAncestor(generation: 9, headerHash: [UInt8](repeating: 9, count: 16))],
            attestations: try #require(craft.unlocked.sealEvidence).record.attestations,
            tombstones: [Tombstone(removed: [UInt8](repeating: 1, count: 16), remover: [UInt8](repeating: 2, count: 16), generation: 0xFFEE)])
        let raw = craft.rawMetadata(record: record)
        let (entries, decoded) = try SealRecordCodec.decodeMetadata(raw, slots: craft.header.keyslots)
        #expect(entries == craft.unlocked.slotMetadata! && decoded == record)
        #expect(MetadataBlock.encode(entries, slots: craft.header.keyslots, record: record) == raw)
        #expect(throws: VaultError.self) { _ = try SealRecordCodec.decodeMetadata(Array(raw.prefix(300)), slots: craft.header.keyslots) }
    }
}
