import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel
import VaultPQ

/// mlkem768x25519 keyslots (type 8): the wrap and its info, lengths, fresh encapsulations, the
/// long keys of format 1.4, rotations, the no-signing rule, and what older readers keep.
@Suite struct HybridSlotTests {
    static let alice = try! AgePQIdentity.generate()
    static let bob = try! AgePQIdentity.generate()

    static func pqCredential(_ identity: AgePQIdentity = alice) -> UnlockCredential {
        UnlockCredential(.pqIdentity(identity), source: "--identity pq")
    }

    /// A signed vault: a password slot and Alice's post-quantum slot.
    static func signedVault() throws -> [UInt8] {
        try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "admin"), (.postQuantum(alice.recipient), "alice")],
                              now: 1).seal()
    }

    // MARK: - Creating, opening, rotating

    @Test func test_create_aPostQuantumRecipientMakesFormat14AndOpensWithItsIdentity() throws {
        let bytes = try VaultCodec.create(try sampleVault(), slots: [(.postQuantum(Self.alice.recipient), "alice")], now: 1).seal()
        let header = try VaultHeader.parse(bytes, path: "v").header
        #expect(header.flags & VaultHeader.longKeysFlag != 0 && header.minorVersion == 4)
        guard case .mlkem768x25519(let slot) = header.keyslots[0] else { Issue.record("slot 0 is \(header.keyslots[0])"); return }
        #expect(slot.enc.count == 1_120 && slot.ciphertext.count == 48 && slot.body().count == 1_168)
        let opened = try VaultCodec.open(bytes, path: "v", credentials: [Self.pqCredential()], limits: testLimits)
        #expect(opened.openedSlot?.index == 0 && opened.slots[0].kind == "mlkem768x25519")
        #expect(opened.slots[0].recipient == Self.alice.recipient.description && opened.slotMetadata?[0].publicKey.count == 1_216)
        #expect(throws: VaultError.self) { _ = try VaultCodec.open(bytes, path: "v", credentials: [Self.pqCredential(Self.bob)], limits: testLimits) }
    }

    @Test func test_rotated_givesEveryPostQuantumSlotAFreshEncapsulation() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        try opened.addSlot(.postQuantum(Self.bob.recipient), label: "bob", now: 2)
        let before = opened.header.keyslots
        let (rotated, wrappedTo) = try opened.rotated(now: 3)
        #expect(wrappedTo.map(\.kind) == ["password", "mlkem768x25519", "mlkem768x25519"])
        for index in [1, 2] {
            guard case .mlkem768x25519(let old) = before[index], case .mlkem768x25519(let new) = rotated.header.keyslots[index] else {
                Issue.record("slot \(index) is not post-quantum"); continue
            }
            #expect(old.enc != new.enc, "a fresh encapsulation for slot \(index)")
        }
        let bytes = try rotated.seal()
        let byBob = try VaultCodec.open(bytes, path: "v", credentials: [Self.pqCredential(Self.bob)], limits: testLimits)
        #expect(byBob.openedSlot?.index == 2 && byBob.vault == opened.vault)
    }

    @Test func test_addSlot_refusesTheSameRecipientTwice() throws {
        let opened = try VaultCodec.open(try Self.signedVault(), path: "v", password: password("pw"), limits: testLimits)
        #expect(throws: VaultError.self) { try opened.addSlot(.postQuantum(Self.alice.recipient), label: "again", now: 2) }
        #expect(opened.header.keyslots.count == 2)
    }

    @Test func test_create_sixteenPostQuantumSlotsFitTheHeader() throws {
        let identities = try (0..<VaultHeader.maxKeyslots).map { _ in try AgePQIdentity.generate() }
        let bytes = try VaultCodec.create(try sampleVault(), slots: identities.map { (.postQuantum($0.recipient), "") }, now: 1).seal()
        let (header, length) = try VaultHeader.parse(bytes, path: "v")
        #expect(header.keyslots.count == 16 && length > 38_000 && length < VaultHeader.maxLength, "header \(length) bytes")
        let last = try VaultCodec.open(bytes, path: "v", credentials: [Self.pqCredential(identities[15])], limits: testLimits)
        #expect(last.openedSlot?.index == 15)
    }

    // MARK: - Signing: post-quantum slots cannot

    @Test func test_seal_byAPostQuantumSlotOfASignedVaultIsRefusedNamingIt() throws {
        let byAlice = try VaultCodec.open(try Self.signedVault(), path: "v", credentials: [Self.pqCredential()], limits: testLimits)
        #expect(byAlice.isSigned && byAlice.openedSlot?.sealSigner(in: byAlice.header) == nil)
        try byAlice.vault.setValue(Array("x".utf8), for: "new", now: 5)
        #expect(throws: VaultError.slotCannotSign(slot: 1, kind: "post-quantum (mlkem768x25519)", signers: 1)) { _ = try byAlice.seal() }
        #expect(throws: VaultError.slotCannotSign(slot: 1, kind: "post-quantum (mlkem768x25519)", signers: 1)) { try byAlice.addSlot(.postQuantum(Self.bob.recipient), label: "bob", now: 6) }
    }

    @Test func test_seal_ofAnUnsignedVaultByAPostQuantumSlotWorks() throws {
        let bytes = try VaultCodec.create(try sampleVault(), slots: [(.postQuantum(Self.alice.recipient), "alice")], now: 1).seal()
        let byAlice = try VaultCodec.open(bytes, path: "v", credentials: [Self.pqCredential()], limits: testLimits)
        try byAlice.vault.setValue(Array("x".utf8), for: "new", now: 5)
        let again = try VaultCodec.open(try byAlice.seal(), path: "v", credentials: [Self.pqCredential()], limits: testLimits)
        #expect(again.vault.entry("new")?.value == Array("x".utf8))
    }

    // MARK: - The wrap

    @Test func test_wrap_bindsTheVaultIDAndNeverAgesInfo() throws {
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultA = randomBytes(count: 16), vaultB = randomBytes(count: 16)
        let slot = try HybridSlot.wrap(fileKey, to: Self.alice.recipient.publicKey, vaultID: vaultA)
        #expect(HybridSlot.info(vaultID: vaultA) == Array("vaultfile keyslot 1.3 mlkem768x25519".utf8) + [8] + vaultA)
        #expect(slot.unwrap(with: Self.alice.identity, vaultID: vaultA)?.constantTimeEquals(fileKey) == true)
        #expect(slot.unwrap(with: Self.alice.identity, vaultID: vaultB) == nil)
        #expect(slot.unwrap(with: Self.bob.identity, vaultID: vaultA) == nil)
        let (enc, ciphertext) = try HybridKEM.seal(fileKey, to: Self.alice.recipient.publicKey, info: Array("age-encryption.org/mlkem768x25519".utf8))
        #expect(HybridSlot(enc: enc, ciphertext: ciphertext).unwrap(with: Self.alice.identity, vaultID: vaultA) == nil, "age's info opens no slot")
        #expect(try HybridSlot.wrap(fileKey, to: Self.alice.recipient.publicKey, vaultID: vaultA).enc != slot.enc, "a fresh encapsulation")
    }

    @Test(arguments: [0, 1_167, 1_169, 1_216])
    func test_parse_refusesABodyOtherThan1168Bytes(length: Int) {
        #expect(throws: VaultError.headerDamaged("keyslot 2 is \(length) bytes; an mlkem768x25519 slot is 1168")) {
            _ = try HybridSlot.parse(body: ArraySlice(repeating: 1, count: length), index: 2)
        }
    }

    @Test(arguments: [0, 500, 1_087, 1_100, 1_119])
    func test_unwrap_refusesATamperedEncapsulation(byte: Int) throws {
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultID = randomBytes(count: 16)
        var slot = try HybridSlot.wrap(fileKey, to: Self.alice.recipient.publicKey, vaultID: vaultID)
        slot.enc[byte] ^= 0x01
        #expect(slot.unwrap(with: Self.alice.identity, vaultID: vaultID) == nil)
    }

    @Test func test_unwrap_refusesALowOrderShareAndWrongLengths() throws {
        let vaultID = randomBytes(count: 16)
        var slot = try HybridSlot.wrap(SecureBytes(copying: randomBytes(count: 32)), to: Self.alice.recipient.publicKey, vaultID: vaultID)
        slot.enc.replaceSubrange(1_088..<1_120, with: [UInt8](repeating: 0, count: 32))
        #expect(slot.unwrap(with: Self.alice.identity, vaultID: vaultID) == nil)
        #expect(HybridSlot(enc: Array(slot.enc.dropLast()), ciphertext: slot.ciphertext).unwrap(with: Self.alice.identity, vaultID: vaultID) == nil)
        #expect(HybridSlot(enc: slot.enc, ciphertext: slot.ciphertext + [0]).unwrap(with: Self.alice.identity, vaultID: vaultID) == nil)
    }

    // MARK: - Older readers

    @Test func test_parse_withoutFlag0x10KeepsType8AsAnUnknownSlotByteForByte() throws {
        let slot = try HybridSlot.wrap(SecureBytes(copying: randomBytes(count: 32)), to: Self.alice.recipient.publicKey, vaultID: randomBytes(count: 16))
        let encoded = Keyslot.mlkem768x25519(slot).encoded()
        var reader = ByteReader(encoded[...], reading: .header)
        let parsed = try Keyslot.parse(&reader, index: 0, extended: true, longKeys: false)
        #expect(parsed == .unknown(type: 8, body: slot.body()) && parsed.encoded() == encoded)
        var long = ByteReader(encoded[...], reading: .header)
        #expect(try Keyslot.parse(&long, index: 0, extended: true, longKeys: true) == .mlkem768x25519(slot))
    }
}
