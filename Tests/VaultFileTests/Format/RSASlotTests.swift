import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// ssh-rsa keyslots (type 7) and the long slot keys of format 1.4 (flag 0x10, metadata version 2):
/// the wrap and its label, the explicit upgrade, rotations, signing with RSA-PSS, the header limit.
@Suite struct RSASlotTests {
    static let rsa2048 = try! RSAFixtureTests.identity(2048)
    static let rsa4096 = try! RSAFixtureTests.identity(4096)
    static let alice = AgeIdentity.generate()

    static func rsaCredential(_ identity: SSHRSAIdentity = rsa2048) -> UnlockCredential {
        UnlockCredential(.sshRSAIdentity(identity), source: "--identity rsa")
    }

    static func signedVault() throws -> [UInt8] {
        try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "admin"), (.recipient(alice.recipient), "alice")],
                              now: 1).seal()
    }

    // MARK: - Creating and adding

    @Test func test_create_recipientsWithAnRSAKeyMakeFormat14() throws {
        let bytes = try VaultCodec.create(try sampleVault(), slots: [(.sshRSA(Self.rsa2048.publicKey), "carol"), (.recipient(Self.alice.recipient), "")],
                                          now: 1).seal()
        let header = try VaultHeader.parse(bytes, path: "v").header
        #expect(header.flags == VaultHeader.keyslotsFlag | VaultHeader.longKeysFlag && header.minorVersion == 4)
        guard case .sshRSA(let slot) = header.keyslots[0] else { Issue.record("slot 0 is \(header.keyslots[0])"); return }
        #expect(slot.ciphertext.count == 256)
        let opened = try VaultCodec.open(bytes, path: "v", credentials: [Self.rsaCredential()], limits: testLimits)
        #expect(opened.openedSlot?.index == 0 && opened.slots[0].kind == "ssh-rsa" && opened.slots[0].recipient == Self.rsa2048.publicKey.description)
        #expect(opened.slots[0].fingerprint == Self.rsa2048.publicKey.fingerprint && opened.slotMetadata?[0].publicKey == Self.rsa2048.publicKey.wireBytes)
    }

    @Test func test_create_withoutAnRSAKeyIsWrittenAsBefore() throws {
        let header = try VaultHeader.parse(try Self.signedVault(), path: "v").header
        #expect(!header.usesLongKeys && header.minorVersion == 3 && header.signatureBlock?.sealed.count == SignatureBlock.sealedLength)
    }

    @Test func test_addSlot_isTheExplicitUpgradeAndEveryRotationKeepsTheSlot() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try opened.addSlot(.sshRSA(Self.rsa4096.publicKey), label: "dave", now: 2)
        let bytes = try opened.seal()
        let header = try VaultHeader.parse(bytes, path: "v").header
        #expect(header.usesLongKeys && header.isSigned && header.minorVersion == 4)
        #expect(header.signatureBlock?.sealed.count == SignatureBlock.expectedSealedLength(longKeys: true, keyslots: header.keyslots))
        let byPassword = try VaultCodec.open(bytes, path: "v", password: password("pw"), limits: testLimits)
        let (rotated, wrappedTo) = try byPassword.rotated(now: 3)
        #expect(wrappedTo.map(\.kind) == ["password", "recipient", "ssh-rsa"])
        let rotatedBytes = try rotated.seal()
        let byDave = try VaultCodec.open(rotatedBytes, path: "v", credentials: [Self.rsaCredential(Self.rsa4096)], limits: testLimits)
        #expect(byDave.fileKey.withUnsafeBytes { Array($0) } != byPassword.fileKey.withUnsafeBytes { Array($0) })
        // A rotation opened by the ssh-rsa key itself re-wraps it (an identity keeps its key) and signs with it.
        let (byDaveRotated, _) = try byDave.rotated(now: 4)
        let again = try VaultCodec.open(try byDaveRotated.seal(), path: "v", credentials: [Self.rsaCredential(Self.rsa4096)], limits: testLimits)
        #expect(again.sealEvidence?.scheme == .rsaPSS && again.sealEvidence?.signer.bytes == Self.rsa4096.publicKey.wireBytes)
    }

    @Test func test_addSlot_refusesTheSameKeyTwice() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try opened.addSlot(.sshRSA(Self.rsa2048.publicKey), label: "carol", now: 2)
        #expect(throws: VaultError.self) { try opened.addSlot(.sshRSA(Self.rsa2048.publicKey), label: "again", now: 3) }
        #expect(opened.header.keyslots.count == 3)
    }

    @Test func test_slotRm_ofTheLastRSASlotClearsFlag0x10() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try opened.addSlot(.sshRSA(Self.rsa2048.publicKey), label: "carol", now: 2)
        let (removed, _) = try opened.rotated(removing: [2], now: 3)
        let header = try VaultHeader.parse(try removed.seal(), path: "v").header
        #expect(!header.usesLongKeys && header.minorVersion == 4 && header.signatureBlock?.sealed.count == SignatureBlock.sealedLength)
    }

    // MARK: - The wrap

    @Test func test_wrap_bindsTheVaultIDAndNeverAgesLabel() throws {
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultA = randomBytes(count: 16), vaultB = randomBytes(count: 16)
        let slot = try RSASlot.wrap(fileKey, to: Self.rsa2048.publicKey, vaultID: vaultA)
        #expect(RSASlot.label(vaultID: vaultA) == Array("vaultfile keyslot 1.3 ssh-rsa".utf8) + [7] + vaultA)
        #expect(slot.unwrap(with: Self.rsa2048, vaultID: vaultA)?.constantTimeEquals(fileKey) == true)
        #expect(slot.unwrap(with: Self.rsa2048, vaultID: vaultB) == nil)
        #expect(slot.unwrap(with: Self.rsa4096, vaultID: vaultA) == nil)
        let ageStanza = try Self.rsa2048.publicKey.oaepEncrypt(fileKey, label: Array("age-encryption.org/v1/ssh-rsa".utf8))
        #expect(RSASlot(ciphertext: ageStanza).unwrap(with: Self.rsa2048, vaultID: vaultA) == nil)
        #expect(try RSASlot.wrap(fileKey, to: Self.rsa2048.publicKey, vaultID: vaultA) != slot, "fresh OAEP randomness")
    }

    @Test(arguments: [0, 255, 1025])
    func test_parse_refusesABodyOutside256To1024Bytes(length: Int) {
        #expect(throws: VaultError.headerDamaged("keyslot 3 is \(length) bytes; an ssh-rsa slot is 256 to 1024")) {
            _ = try RSASlot.parse(body: ArraySlice(repeating: 1, count: length), index: 3)
        }
    }

    // MARK: - Signing

    @Test func test_seal_byAnRSASlotIsSignedWithPSSAndItsAttestationsVerify() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try opened.addSlot(.sshRSA(Self.rsa2048.publicKey), label: "carol", now: 2)
        let byCarol = try VaultCodec.open(try opened.seal(), path: "v", credentials: [Self.rsaCredential()], limits: testLimits)
        try byCarol.addSlot(.sshRSA(Self.rsa4096.publicKey), label: "dave", now: 3)
        let bytes = try byCarol.seal()
        let reopened = try VaultCodec.open(bytes, path: "v", password: password("pw"), limits: testLimits)
        let evidence = try #require(reopened.sealEvidence)
        #expect(evidence.scheme == .rsaPSS && evidence.signerPosition == 2 && evidence.signer.type == 7)
        #expect(evidence.record.attestations[3].adder.bytes == Self.rsa2048.publicKey.wireBytes && evidence.record.attestations[3].signature.count == 256)
        #expect(evidence.slots.indices.allSatisfy { evidence.attestationVerifies(at: $0) })
    }

    @Test func test_open_refusesAForgedRSASignature() throws {
        let craft = try LongKeysCraft.signedByRSA()
        let forged = try craft.resealed { $0.signature[17] ^= 0x01 }
        #expect(throws: VaultError.headerDamaged("seal signature: the signature does not verify (the header or payload was changed after signing)")) {
            _ = try VaultCodec.open(forged, path: "v", password: password("pw"), limits: testLimits)
        }
    }

    @Test func test_open_refusesASignerThatIsNotASlot() throws {
        let craft = try LongKeysCraft.signedByRSA(key: Self.rsa4096)
        let stranger = try craft.signedBy(Self.rsa2048)
        #expect(throws: VaultError.headerDamaged("seal signature: the signer key is not keyslot 2's key (nor the key it replaced)")) {
            _ = try VaultCodec.open(stranger, path: "v", password: password("pw"), limits: testLimits)
        }
    }

    @Test func test_delegate_isRefusedForAnRSASlot() throws {
        let craft = try LongKeysCraft.signedByRSA()
        let byCarol = try VaultCodec.open(craft.base, path: "v", credentials: [Self.rsaCredential()], limits: testLimits)
        #expect(byCarol.openedSlot?.sealSigner(in: byCarol.header) == nil)
        let signer = try #require(byCarol.sealSigner as? SlotSealSigner)
        #expect(throws: VaultError.noSealSigner) {
            _ = try signer.delegate(vaultID: byCarol.header.vaultID, fileKeyID: byCarol.sealFileKeyID, delegatedKey: [UInt8](repeating: 1, count: 32), expiry: 1)
        }
    }

    @Test func test_seal_throughADelegationInALongKeysVaultUsesTheVersion2BlockAndTheAgentsPrefix() throws {
        let craft = try LongKeysCraft.signedByRSA()
        let byAdmin = try VaultCodec.open(craft.base, path: "v", password: password("pw"), limits: testLimits)
        // The agent's view of the header it is asked to sign: the prefix parses, its metadata (version 2) opens.
        let prefix = try HeaderPrefix(byAdmin.header.signedPrefix())
        #expect(try prefix.openMetadata(fileKey: byAdmin.fileKey)?.map(\.type) == [4, 3, 7])
        byAdmin.sealSigner = DelegatedTestSigner(slot: try requireSigner(byAdmin), expiry: 1_800_000_000)
        try byAdmin.vault.setValue([7], for: "through/agent", now: 9)
        let reopened = try VaultCodec.open(try byAdmin.seal(), path: "v", credentials: [Self.rsaCredential()], limits: testLimits)
        #expect(reopened.sealEvidence?.scheme == .delegated && reopened.sealEvidence?.signerPosition == 0)
        #expect(try reopened.vault.value(of: "through/agent") == [7] && reopened.header.usesLongKeys)
    }

    // MARK: - Older readers and unknown types

    @Test func test_parse_type7WithoutFlag0x10IsUnknownKeptAndBlocksARotation() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        let body = randomBytes(count: 256)
        opened.header.keyslots.append(.unknown(type: 7, body: body))
        opened.slotMetadata!.append(SlotMetadata(type: 7, label: "", publicKey: [UInt8](repeating: 2, count: 200), added: 0))
        opened.sealState.attestations.append(opened.sealState.attestations[0])
        opened.headerChanged = true
        let bytes = try opened.seal()
        let header = try VaultHeader.parse(bytes, path: "v").header
        #expect(!header.usesLongKeys && header.keyslots[2] == .unknown(type: 7, body: body))
        let reopened = try VaultCodec.open(bytes, path: "v", password: password("pw"), limits: testLimits)
        try reopened.vault.setValue([9], for: "more", now: 5)
        #expect(try VaultHeader.parse(try reopened.seal(), path: "v").header.keyslots[2] == .unknown(type: 7, body: body), "kept byte for byte")
        #expect(throws: VaultError.rotationBlocked(slots: ["keyslot 2 (of type 7, unknown to this vaultfile)"])) { _ = try reopened.rotated(now: 6) }
    }

    @Test func test_parse_flag0x10IsUnknownBeforeMinor4AndNeeds0x02() throws {
        var bytes = try LongKeysCraft.signedByRSA().base
        bytes[9] = 3
        fixChecksum(&bytes)
        #expect(throws: VaultError.unsupportedFeature("header flags 0x\(String(bytes[37], radix: 16))")) { _ = try VaultHeader.parse(bytes, path: "v") }
        #expect(bytes[37] & VaultHeader.longKeysFlag != 0)
        var plain = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF).seal()
        plain[9] = 4
        plain[37] = VaultHeader.longKeysFlag
        fixChecksum(&plain)
        #expect(throws: VaultError.headerDamaged("flag 0x10 (long slot keys) is set without flag 0x02 (keyslots)")) { _ = try VaultHeader.parse(plain, path: "v") }
    }

    // MARK: - The header limit

    @Test func test_addSlot_refusesASlotThatWouldPassTheHeaderLimit() throws {
        // An 8,192-bit ssh-rsa member adds 8,192-bit keys: each slot costs its 1,024-byte wrap, its
        // 1,047-byte key in the metadata and an attestation of the adder's key and 1,024-byte signature.
        let rsa8192 = try RSAFixtureTests.identity(8192)
        let made = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try made.addSlot(.sshRSA(rsa8192.publicKey), label: "big", now: 2)
        let opened = try VaultCodec.open(try made.seal(), path: "v", credentials: [Self.rsaCredential(rsa8192)], limits: testLimits)
        // 16 slots of them fit in 64 KiB; the 256 tombstones a long-lived vault may carry (10 KiB) do not.
        opened.sealState.tombstones = (0..<SealRecord.maxTombstones).map { Tombstone(removed: randomBytes(count: 16), remover: randomBytes(count: 16),
                                                                                    generation: UInt64($0)) }
        func big() throws -> SSHRSAPublicKey { try SSHRSAPublicKey(wire: SSHRSAKeyTests.wire(e: [1, 0, 1], n: SSHRSAKeyTests.modulus(bits: 8192))) }
        var refusal: VaultError?
        while opened.header.keyslots.count < VaultHeader.maxKeyslots {
            let before = opened.header.keyslots.count
            do {
                try opened.addSlot(.sshRSA(try big()), label: String(repeating: "x", count: 64), now: 3)
            } catch let error as VaultError {
                refusal = error
                #expect(opened.header.keyslots.count == before && opened.slotMetadata?.count == before && opened.sealState.attestations.count == before)
                break
            }
        }
        let slots = opened.header.keyslots.count
        #expect(refusal.map { "\($0)".contains("; a header holds at most 65,535") } == true, "\(String(describing: refusal)) at \(slots) slots")
        #expect(slots < VaultHeader.maxKeyslots && opened.projectedHeaderLength() <= VaultHeader.maxLength)
        let sealed = try VaultHeader.parse(try opened.seal(), path: "v")
        #expect(sealed.length > 60_000 && sealed.header.keyslots.count == slots)
    }
}
