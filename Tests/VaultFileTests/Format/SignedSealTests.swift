import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Format 1.3, signed seals: what a signed seal writes, what an open establishes, and how slot
/// operations keep attestations, ancestors and tombstones (docs/FORMAT.md "Signed seals").
@Suite struct SignedSealTests {
    static let now: Int64 = 1_764_000_000_000

    // MARK: - Creating and opening

    @Test func test_create_makesASignedVaultWhoseOpenChecksTheSeal() throws {
        let craft = try SignedSealCraft()
        #expect(craft.header.flags & VaultHeader.signedFlag != 0 && craft.header.minorVersion == VaultHeader.signedMinorVersion)
        #expect(craft.header.signatureBlock?.sealed.count == SignatureBlock.sealedLength)
        let evidence = try #require(craft.unlocked.sealEvidence)
        let admin = craft.unlocked.slotMetadata![0].publicKey
        #expect(evidence.signer == MemberKey(type: 4, bytes: admin) && evidence.signerPosition == 0 && evidence.scheme == .xeddsa)
        #expect(evidence.replacedKey == nil && evidence.generation == 1 && evidence.record.ancestors.isEmpty)
        #expect(evidence.slots.map(\.label) == ["admin", "alice"] && evidence.slots.allSatisfy(\.canSign))
        #expect(evidence.headerHash == SealTranscript.headerHash(Array(craft.base.prefix(craft.headerLength))))
        #expect(evidence.fileKeyID == craft.unlocked.sealFileKeyID && evidence.vaultID == craft.header.vaultID)
        // The creator's first signing slot attests every slot, itself too.
        #expect(evidence.record.attestations.allSatisfy { $0.adder == MemberKey(type: 4, bytes: admin) })
        #expect(evidence.attestationVerifies(at: 0) && evidence.attestationVerifies(at: 1) && !evidence.attestationVerifies(at: 2))
        #expect(craft.unlocked.vault.entry("db/password")?.value == Array("hunter2".utf8))
    }

    @Test func test_create_unsignedOrWithoutASecretMakesA11Vault() throws {
        let unsigned = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "")], now: Self.now, signed: false).seal()
        let recipientsOnly = try VaultCodec.create(Vault(), slots: [(.recipient(AgeIdentity.generate().recipient), "")], now: Self.now).seal()
        for bytes in [unsigned, recipientsOnly] {
            let header = try VaultHeader.parse(bytes, path: "t").header
            #expect(header.flags == VaultHeader.keyslotsFlag && header.minorVersion == 1 && header.signatureBlock == nil)
        }
        #expect(try VaultCodec.open(unsigned, path: "t", password: password("pw"), limits: testLimits).sealEvidence == nil)
    }

    @Test func test_open_eachSigningKindSignsItsNextSeal() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(Keyfile.generate()).write(to: folder.url.appendingPathComponent("keyfile"))
        let alice = AgeIdentity.generate(), code = RecoveryCode.generate()
        let ssh = try SSHEd25519Identity.parse(OpenSSHKeyBuilder().pem(), source: "id")
        let bytes = try VaultCodec.create(try sampleVault(), slots: [
            (.password(password("pw"), testKDF), "admin"), (.recipient(alice.recipient), "alice"), (.sshEd25519(ssh.publicKey), "bob"),
            (.keyfile(path: folder.path("keyfile")), "ci"), (.recovery(code, testKDF), "recovery"),
        ], now: Self.now).seal()
        let secrets: [(Int, UnlockCredential.Secret, SealScheme)] = [
            (1, .ageIdentity(alice), .xeddsa), (2, .sshIdentity(ssh), .ed25519), (3, .keyfile(path: folder.path("keyfile")), .xeddsa),
            (4, .recovery(code), .xeddsa),
        ]
        for (index, secret, scheme) in secrets {
            let opened = try VaultCodec.open(bytes, path: "t", credentials: [UnlockCredential(secret, source: "s")], limits: testLimits)
            try opened.vault.setValue([UInt8(index)], for: "by", now: Self.now)
            let resealed = try VaultCodec.open(try opened.seal(), path: "t", password: password("pw"), limits: testLimits)
            let evidence = try #require(resealed.sealEvidence)
            #expect(evidence.signerPosition == index && evidence.scheme == scheme, "slot \(index)")
            #expect(evidence.signer.bytes == resealed.slotMetadata![index].publicKey)
            #expect(resealed.vault.entry("by")?.value == [UInt8(index)])
        }
    }

    @Test func test_seal_withNoSignerIsRefusedAndWritesNothing() throws {
        let craft = try SignedSealCraft()
        let byKey = try VaultCodec.open(craft.base, path: "t", fileKey: craft.unlocked.fileKey)
        #expect(byKey.sealSigner == nil && byKey.sealEvidence != nil)
        try byKey.vault.setValue([1], for: "x", now: Self.now)
        #expect(throws: VaultError.noSealSigner) { _ = try byKey.seal() }
        #expect(throws: VaultError.noSealSigner) { try byKey.addSlot(.recipient(AgeIdentity.generate().recipient), label: "c", now: Self.now) }
        #expect(byKey.header.keyslots.count == 2)
    }

    // MARK: - Ancestors

    @Test func test_seal_listsTheHeaderItWasMadeFromAndAtMostEightAncestors() throws {
        let craft = try SignedSealCraft()
        var file = craft.base
        var headers: [SealAncestor] = []
        for round in 0..<10 {
            let opened = try VaultCodec.open(file, path: "t", password: password("pw"), limits: testLimits)
            headers.insert(SealAncestor(generation: opened.header.generation, headerHash: opened.sealEvidence!.headerHash), at: 0)
            try opened.vault.setValue([UInt8(round)], for: "r", now: Self.now)
            file = try opened.seal()
        }
        let last = try #require(try VaultCodec.open(file, path: "t", password: password("pw"), limits: testLimits).sealEvidence)
        #expect(last.record.ancestors == Array(headers.prefix(8)))
        #expect(last.record.ancestors.first?.generation == last.generation - 1)
    }

    @Test func test_recordMergeParent_listsBothParentsAndTheUnionOfTombstones() throws {
        let craft = try SignedSealCraft()
        let ours = try VaultCodec.open(craft.base, path: "t", password: password("pw"), limits: testLimits)
        try ours.vault.setValue([1], for: "ours", now: Self.now)
        let oursFile = try ours.seal()
        let theirs = try VaultCodec.open(craft.base, path: "t", credentials: [UnlockCredential(.ageIdentity(craft.alice), source: "a")], limits: testLimits)
        theirs.sealState.tombstones = [Tombstone(removed: [UInt8](repeating: 7, count: 16), remover: [UInt8](repeating: 8, count: 16), generation: 1)]
        try theirs.vault.setValue([2], for: "theirs", now: Self.now)
        let theirsFile = try theirs.seal()
        let left = try VaultCodec.open(oursFile, path: "t", password: password("pw"), limits: testLimits)
        let right = try VaultCodec.open(theirsFile, path: "t", password: password("pw"), limits: testLimits)
        left.recordMergeParent(right)
        left.advanceGeneration(past: right.header.generation)
        try left.vault.setValue([3], for: "merged", now: Self.now)
        let merged = try #require(try VaultCodec.open(try left.seal(), path: "t", password: password("pw"), limits: testLimits).sealEvidence)
        #expect(merged.record.ancestors.count == 3, "both parents, then their one shared ancestor")
        #expect(merged.record.ancestors.contains(SealAncestor(generation: 2, headerHash: right.sealEvidence!.headerHash)))
        #expect(merged.record.ancestors.contains(SealAncestor(generation: 1, headerHash: craft.unlocked.sealEvidence!.headerHash)))
        #expect(merged.record.tombstones.map(\.generation) == [1])
    }

    @Test func test_mergeFiles_ofTwoSignedSidesIsSignedAndListsBothParents() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let base = VaultStore(path: directory.path("base.vault"))
        try base.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "admin")], now: Self.now)
        let bytes = try base.read().bytes
        for name in ["ours.vault", "theirs.vault"] { try AtomicFileWriter().write(bytes, to: directory.path(name), finalLink: .follow) }
        let ours = VaultStore(path: directory.path("ours.vault")), theirs = VaultStore(path: directory.path("theirs.vault"))
        try ours.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "ours-only") }
        try theirs.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([2], for: "theirs-only") }
        let parents = try [ours, theirs].map { store in
            let opened = try store.open(password: password("pw"), limits: testLimits)
            return SealAncestor(generation: opened.header.generation, headerHash: try #require(opened.sealEvidence).headerHash)
        }
        let conflicts = try VaultStore.mergeFiles(base: base.path, ours: ours.path, theirs: theirs.path, password: password("pw"), limits: testLimits)
        #expect(conflicts.isEmpty)
        let merged = try ours.open(password: password("pw"), limits: testLimits)
        let evidence = try #require(merged.sealEvidence)
        #expect(Array(evidence.record.ancestors.prefix(2)) == parents && evidence.record.ancestors.count == 3)
        #expect(merged.vault.entry("ours-only")?.value == [1] && merged.vault.entry("theirs-only")?.value == [2])
    }

    // MARK: - Slot operations

    @Test func test_addSlot_isAttestedByTheSlotThatOpenedTheVault() throws {
        let craft = try SignedSealCraft()
        let opened = try VaultCodec.open(craft.base, path: "t", credentials: [UnlockCredential(.ageIdentity(craft.alice), source: "a")], limits: testLimits)
        try opened.addSlot(.recipient(AgeIdentity.generate().recipient), label: "carol", now: Self.now)
        let evidence = try #require(try VaultCodec.open(try opened.seal(), path: "t", password: password("pw"), limits: testLimits).sealEvidence)
        #expect(evidence.record.attestations[2].adder == MemberKey(type: 3, bytes: craft.alice.recipient.publicKey))
        #expect(evidence.attestationVerifies(at: 2) && evidence.signerPosition == 1)
    }

    @Test func test_rotated_reSaltIsSignedByTheOldKeyAndTheNextSealByTheNew() throws {
        let craft = try SignedSealCraft()
        let oldKey = craft.unlocked.slotMetadata![0].publicKey
        let (rotated, _) = try craft.unlocked.rotated(now: Self.now)
        let first = try VaultCodec.open(try rotated.seal(), path: "t", password: password("pw"), limits: testLimits)
        let evidence = try #require(first.sealEvidence)
        let newKey = first.slotMetadata![0].publicKey
        #expect(newKey != oldKey && evidence.replacedKey == MemberKey(type: 4, bytes: oldKey) && evidence.signer.bytes == oldKey)
        #expect(evidence.record.attestations[0].adder.bytes == oldKey && evidence.attestationVerifies(at: 0) && evidence.attestationVerifies(at: 1))
        // The same rotated vault seals again with its new key, and a later open signs with it too.
        try rotated.vault.setValue([1], for: "again", now: Self.now)
        let second = try #require(try VaultCodec.open(try rotated.seal(), path: "t", password: password("pw"), limits: testLimits).sealEvidence)
        #expect(second.replacedKey == nil && second.signer.bytes == newKey)
    }

    @Test func test_rotated_removingASlotWritesATombstoneAndRefusesToRemoveTheSigner() throws {
        let craft = try SignedSealCraft()
        let aliceID = MemberKey.id(of: craft.alice.recipient.publicKey)
        let (rotated, _) = try craft.unlocked.rotated(removing: [1], now: Self.now)
        let evidence = try #require(try VaultCodec.open(try rotated.seal(), path: "t", password: password("pw"), limits: testLimits).sealEvidence)
        let remover = MemberKey.id(of: craft.unlocked.slotMetadata![0].publicKey)
        #expect(evidence.record.tombstones == [Tombstone(removed: aliceID, remover: remover, generation: evidence.generation)])
        #expect(evidence.slots.count == 1 && evidence.record.attestations.count == 1)
        #expect(throws: VaultError.self) { _ = try craft.unlocked.rotated(removing: [0], now: Self.now) }
    }

    @Test func test_rotatedSigning_convertsA10VaultAndAttestsEverySlot() throws {
        let bytes = try sealedBytes(try sampleVault())
        let old = try VaultCodec.open(bytes, path: "t", password: password("pw"), limits: testLimits)
        let (signed, wrappedTo) = try old.rotatedSigning(now: Self.now)
        let reopened = try VaultCodec.open(try signed.seal(), path: "t", password: password("pw"), limits: testLimits)
        #expect(reopened.header.minorVersion == 3 && reopened.header.flags & 0x0A == 0x0A && wrappedTo.map(\.type) == [4])
        let evidence = try #require(reopened.sealEvidence)
        #expect(evidence.signerPosition == 0 && evidence.attestationVerifies(at: 0) && evidence.replacedKey == nil)
        #expect(throws: VaultError.self) { _ = try reopened.rotatedSigning(now: Self.now) }
        // Opened by a file key alone, nothing can sign.
        let byKey = try VaultCodec.open(bytes, path: "t", fileKey: old.fileKey)
        #expect(throws: VaultError.self) { _ = try byKey.rotatedSigning(now: Self.now) }
    }

    // MARK: - Unsigned vaults

    @Test func test_seal_unsignedVaultsWriteTheirHeaderFirstAsBefore() throws {
        let bytes = try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "")], now: Self.now, signed: false).seal()
        let opened = try VaultCodec.open(bytes, path: "t", password: password("pw"), limits: testLimits)
        let resealed = try opened.seal()
        let (header, length) = try VaultHeader.parse(resealed, path: "t")
        #expect(header.signatureBlock == nil && header.encoded() == Array(resealed.prefix(length)) && header.flags & VaultHeader.signedFlag == 0)
        #expect(try VaultCodec.open(resealed, path: "t", password: password("pw"), limits: testLimits).sealEvidence == nil)
    }
}
