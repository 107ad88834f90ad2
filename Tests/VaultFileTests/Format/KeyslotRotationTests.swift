import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Adding slots (keeps the file key) and rotating it (slot rm, rekey, passwd in 1.1).
@Suite struct KeyslotRotationTests {
    static let now: Int64 = 1_764_000_000_000

    static func open(_ bytes: [UInt8], _ secret: UnlockCredential.Secret) throws -> UnlockedVault {
        try VaultCodec.open(bytes, path: "t", credentials: [UnlockCredential(secret, source: "s")], limits: testLimits)
    }

    // MARK: - addSlot

    @Test func test_addSlot_upgradesA10VaultAndKeepsTheFileKey() throws {
        let old = try Self.open(try sealedBytes(try sampleVault()), .password(password("pw")))
        let alice = AgeIdentity.generate()
        try old.addSlot(.recipient(alice.recipient), label: "alice", now: Self.now)
        let bytes = try old.seal()
        let header = try VaultHeader.parse(bytes, path: "t").header
        #expect(header.flags == VaultHeader.keyslotsFlag && header.minorVersion == 1)
        // The v1 password slot that opened it is now a 1.1 password slot with the same KDF.
        #expect(header.keyslots.map(\.typeByte) == [4, 3])
        #expect(header.keyslots[0].passwordKDF == testKDF)
        let byPassword = try Self.open(bytes, .password(password("pw")))
        let byIdentity = try Self.open(bytes, .ageIdentity(alice))
        #expect(byPassword.fileKey.constantTimeEquals(old.fileKey) && byIdentity.fileKey.constantTimeEquals(old.fileKey))
        #expect(byIdentity.vault == (try sampleVault()))
        #expect(byIdentity.slots.map(\.label) == ["", "alice"])
    }

    @Test func test_addSlot_refusesBadLabelsAndASeventeenthSlot() throws {
        let vault = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "")], now: 0)
        #expect(throws: VaultError.self) { try vault.addSlot(.recipient(AgeIdentity.generate().recipient), label: "bad\nlabel", now: 0) }
        #expect(throws: VaultError.self) { try vault.addSlot(.recipient(AgeIdentity.generate().recipient), label: String(repeating: "é", count: 33), now: 0) }
        for _ in 1..<16 { try vault.addSlot(.recipient(AgeIdentity.generate().recipient), label: "", now: 0) }
        #expect(throws: VaultError.self) { try vault.addSlot(.recipient(AgeIdentity.generate().recipient), label: "", now: 0) }
        // Sixteen slots with labels still fit in a header.
        _ = try VaultHeader.parse(try vault.seal(), path: "t")
    }

    // MARK: - rotated

    @Test func test_rotated_removedSecretCannotOpenTheNewFile() throws {
        let alice = AgeIdentity.generate(), bob = AgeIdentity.generate()
        let vault = try VaultCodec.create(try sampleVault(), slots: [
            (.password(password("pw"), testKDF), "admin"), (.recipient(alice.recipient), "alice"), (.recipient(bob.recipient), "bob"),
        ], now: Self.now)
        let before = try vault.seal()
        let opened = try Self.open(before, .password(password("pw")))
        let (rotated, wrappedTo) = try opened.rotated(removing: [try opened.slotIndex(named: "bob")], now: Self.now + 1)
        let after = try rotated.seal()
        #expect(wrappedTo.map(\.label) == ["admin", "alice"])
        #expect(wrappedTo[1].fingerprint == alice.recipient.description && wrappedTo[0].fingerprint?.hasPrefix("x25519:") == true)
        #expect(throws: VaultError.noKeyslotOpens(sources: ["s"], unknownTypes: [])) { _ = try Self.open(after, .ageIdentity(bob)) }
        // Bob's old wrap does not open the new file key either: the key itself changed.
        #expect(!rotated.fileKey.constantTimeEquals(opened.fileKey))
        let byAlice = try Self.open(after, .ageIdentity(alice))
        #expect(byAlice.vault == (try sampleVault()))
        #expect(try Self.open(after, .password(password("pw"))).fileKey.constantTimeEquals(rotated.fileKey))
        // The old copy (git history) still opens with Bob's key: rotation protects the new file only.
        #expect(try Self.open(before, .ageIdentity(bob)).vault == (try sampleVault()))
    }

    @Test func test_rotated_resaltsTheSlotThatOpenedIt() throws {
        let vault = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "admin"), (.recipient(AgeIdentity.generate().recipient), "")],
                                          now: Self.now)
        let opened = try Self.open(try vault.seal(), .password(password("pw")))
        let (rotated, _) = try opened.rotated(now: Self.now)
        guard case .x25519(let old) = opened.header.keyslots[0], case .x25519(let new) = rotated.header.keyslots[0] else { Issue.record("kinds"); return }
        #expect(old.salt != new.salt && old.kdf == new.kdf)
        #expect(opened.slotMetadata![0].publicKey != rotated.slotMetadata![0].publicKey)
        // The other slot keeps its public key and gets a fresh ephemeral share.
        #expect(opened.slotMetadata![1] == rotated.slotMetadata![1])
        guard case .x25519(let otherOld) = opened.header.keyslots[1], case .x25519(let otherNew) = rotated.header.keyslots[1] else { return }
        #expect(otherOld.ephemeralShare != otherNew.ephemeralShare)
    }

    @Test func test_rotated_keyfileAndRecoverySlotsThatOpenedItAreResalted() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(Keyfile.generate()).write(to: folder.url.appendingPathComponent("k"))
        let code = RecoveryCode.generate()
        let vault = try VaultCodec.create(Vault(), slots: [(.keyfile(path: folder.path("k")), ""), (.recovery(code, testKDF), "")], now: 0)
        for secret: UnlockCredential.Secret in [.keyfile(path: folder.path("k")), .recovery(code)] {
            let opened = try Self.open(try vault.seal(), secret)
            let (rotated, _) = try opened.rotated(now: 0)
            let index = opened.openedSlot!.index
            #expect(opened.slotMetadata![index].publicKey != rotated.slotMetadata![index].publicKey)
            #expect(try Self.open(try rotated.seal(), secret).fileKey.constantTimeEquals(rotated.fileKey))
        }
    }

    @Test func test_rotated_v1AndUnknownSlotsBlockUnlessDropped() throws {
        // A 1.0 vault of two v1 password slots (the second with another password) and an unknown type.
        let base = try VaultCodec.open(try sealedBytes(try sampleVault()), path: "t", password: password("pw"), limits: testLimits)
        let second = try VaultCodec.makePasswordSlot(password: password("other"), kdf: testKDF, fileKey: base.fileKey, vaultID: base.header.vaultID)
        base.header.keyslots += [.password(second), .unknown(type: 9, body: [1, 2, 3])]
        let opened = try Self.open(try base.seal(), .password(password("pw")))
        #expect { _ = try opened.rotated(now: 0) } throws: { error in
            guard case .rotationBlocked(let slots) = error as? VaultError else { return false }
            return slots.count == 2 && slots[0].contains("keyslot 1") && slots[1].contains("type 9")
        }
        // Dropped on purpose: a 1.0 vault stays 1.0, with a new v1 slot for the password that opened it.
        let (rotated, _) = try opened.rotated(dropping: [1, 2], now: 0)
        let bytes = try rotated.seal()
        let header = try VaultHeader.parse(bytes, path: "t").header
        #expect(header.flags == 0 && header.keyslots.count == 1 && header.keyslots[0].typeByte == 1)
        #expect(openError(bytes, pass: "other") as? VaultError == .wrongPassword)
        #expect(openError(bytes) == nil)
    }

    @Test func test_rotated_refusesToLeaveNoSlot() throws {
        let opened = try Self.open(try sealedBytes(Vault()), .password(password("pw")))
        #expect(throws: VaultError.self) { _ = try opened.rotated(removing: [0], now: 0) }
        #expect(throws: VaultError.slotNotFound("5")) { _ = try opened.rotated(removing: [5], now: 0) }
    }

    @Test func test_rotated_newPasswordReplacesOnlyThePasswordThatOpenedIt() throws {
        let alice = AgeIdentity.generate()
        let bytes = try KeyslotFormatTests.teamVault(alice)
        let opened = try Self.open(bytes, .password(password("pw")))
        let (rotated, _) = try opened.rotated(newPassword: (password("new"), testKDF), now: 0)
        let after = try rotated.seal()
        #expect(openError(after, pass: "pw") as? VaultError == .wrongPassword)
        #expect(openError(after, pass: "new") == nil)
        #expect(try Self.open(after, .ageIdentity(alice)).slots.map(\.label) == ["admin", "alice"])
        // Opened by an identity, there is no password to change.
        let byAlice = try Self.open(bytes, .ageIdentity(alice))
        #expect(throws: VaultError.self) { _ = try byAlice.rotated(newPassword: (password("new"), testKDF), now: 0) }
    }

    @Test func test_slotIndex_findsIdsAndUniqueLabels() throws {
        let vault = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "a"), (.recipient(AgeIdentity.generate().recipient), "b"),
                                                          (.recipient(AgeIdentity.generate().recipient), "b")], now: 0)
        #expect(try vault.slotIndex(named: "1") == 1)
        #expect(try vault.slotIndex(named: "a") == 0)
        #expect(throws: VaultError.slotNotFound("zzz")) { _ = try vault.slotIndex(named: "zzz") }
        #expect(throws: VaultError.self) { _ = try vault.slotIndex(named: "b") }
    }
}
