import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// Format 1.1: slots in the recipient shape, the metadata block, flags and versions.
@Suite struct KeyslotFormatTests {
    static let now: Int64 = 1_764_000_000_000

    static func credential(_ secret: UnlockCredential.Secret) -> [UnlockCredential] { [UnlockCredential(secret, source: "test source")] }

    /// A 1.1 vault of a password slot and a recipient slot, with `sampleVault`'s entries (unsigned: format 1.1 itself).
    static func teamVault(_ identity: AgeIdentity) throws -> [UInt8] {
        try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "admin"), (.recipient(identity.recipient), "alice")],
                              now: now, signed: false).seal()
    }

    // MARK: - create and open

    @Test func test_open_eachKindOpensItsOwnSlot() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try Data(Keyfile.generate()).write(to: folder.url.appendingPathComponent("keyfile"))
        let alice = AgeIdentity.generate()
        let ssh = try SSHEd25519Identity.parse(OpenSSHKeyBuilder().pem(), source: "id")
        let code = RecoveryCode.generate()
        let bytes = try VaultCodec.create(try sampleVault(), slots: [
            (.password(password("pw"), testKDF), "admin"), (.recipient(alice.recipient), "alice"), (.sshEd25519(ssh.publicKey), "bob"),
            (.keyfile(path: folder.path("keyfile")), "ci"), (.recovery(code, testKDF), "recovery"),
        ], now: Self.now, signed: false).seal()
        let (header, _) = try VaultHeader.parse(bytes, path: "t")
        #expect(header.flags == VaultHeader.keyslotsFlag && header.minorVersion == 1)
        #expect(header.keyslots.map(\.typeByte) == [4, 3, 6, 2, 5])
        let secrets: [(Int, UnlockCredential.Secret)] = [
            (0, .password(password("pw"))), (1, .ageIdentity(alice)), (2, .sshIdentity(ssh)), (3, .keyfile(path: folder.path("keyfile"))),
            (4, .recovery(code)),
        ]
        for (index, secret) in secrets {
            let opened = try VaultCodec.open(bytes, path: "t", credentials: Self.credential(secret), limits: testLimits)
            #expect(opened.openedSlot?.index == index)
            #expect(opened.vault == (try sampleVault()))
            #expect(opened.slots.map(\.label) == ["admin", "alice", "bob", "ci", "recovery"])
            #expect(opened.slots[1].recipient == alice.recipient.description)
            #expect(opened.slots[2].fingerprint == ssh.publicKey.fingerprint)
        }
    }

    @Test func test_open_wrongSecretsOpenNothingAndSayWhichSourcesWereTried() throws {
        let bytes = try Self.teamVault(AgeIdentity.generate())
        #expect(openError(bytes, pass: "not it") as? VaultError == .wrongPassword)
        let tried = [UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "--identity other.key"),
                     UnlockCredential(.password(password("no")), source: "the password from --password-file")]
        #expect(throws: VaultError.noKeyslotOpens(sources: ["--identity other.key", "the password from --password-file"], unknownTypes: [])) {
            _ = try VaultCodec.open(bytes, path: "t", credentials: tried, limits: testLimits)
        }
    }

    @Test func test_open_credentialsAreTriedInOrder() throws {
        let alice = AgeIdentity.generate()
        let bytes = try Self.teamVault(alice)
        let opened = try VaultCodec.open(bytes, path: "t", credentials: [
            UnlockCredential(.ageIdentity(AgeIdentity.generate()), source: "a"), UnlockCredential(.ageIdentity(alice), source: "b"),
            UnlockCredential(.password(password("pw")), source: "c"),
        ], limits: testLimits)
        #expect(opened.openedSlot?.index == 1 && opened.openedSlot?.credential.source == "b")
    }

    @Test func test_parse_headerRoundTripsWithTheMetadataBlock() throws {
        let bytes = try Self.teamVault(AgeIdentity.generate())
        let (header, length) = try VaultHeader.parse(bytes, path: "t")
        #expect(header.encoded() == Array(bytes.prefix(length)))
        #expect(header.metadata.map { ($0.sealed.count - 16) % 256 == 0 } == true)
    }

    @Test func test_slotSecrets_neverTheRawKDFOutputAndOneContextPerKind() throws {
        let output = SecureBytes(copying: randomBytes(count: 32))
        let password = SlotSecrets.password(output), recovery = SlotSecrets.recovery(output)
        let keyfile = Subkey.derive(from: output, SlotSecrets.keyfileContext)
        #expect(!password.constantTimeEquals(output) && !recovery.constantTimeEquals(output) && !keyfile.constantTimeEquals(output))
        #expect(!password.constantTimeEquals(recovery) && !password.constantTimeEquals(keyfile) && !recovery.constantTimeEquals(keyfile))
        // One password in a v1 slot and a 1.1 slot: the v1 wrap key (the KDF output) does not open the 1.1 wrap.
        let created = try VaultCodec.create(Vault(), slots: [(.password(VaultFileTests.password("pw"), testKDF), "")], now: 0)
        guard case .x25519(let slot) = created.header.keyslots[0] else { Issue.record("kind"); return }
        let raw = try testKDF.deriveKey(password: VaultFileTests.password("pw"), salt: slot.salt, limits: testLimits)
        #expect(slot.unwrap(secretKey: raw, recipientKey: try X25519.publicKey(of: raw), vaultID: created.header.vaultID) == nil)
        let secret = SlotSecrets.password(raw)
        #expect(slot.unwrap(secretKey: secret, recipientKey: try X25519.publicKey(of: secret), vaultID: created.header.vaultID) != nil)
    }

    // MARK: - seal

    @Test func test_seal_keepsTheVersionAndFlagsOfTheFile() throws {
        // A 1.0 vault stays 1.0 on an ordinary write, and so does a future minor version.
        let old = try VaultCodec.open(try sealedBytes(try sampleVault()), path: "t", password: password("pw"), limits: testLimits)
        try old.vault.setValue([1], for: "new", now: Self.now)
        let resealed = try VaultHeader.parse(try old.seal(), path: "t").header
        #expect(resealed.minorVersion == 0 && resealed.flags == 0 && resealed.metadata == nil)
        var header = old.header
        header.minorVersion = 7
        old.header = header
        #expect(try VaultHeader.parse(try old.seal(), path: "t").header.minorVersion == 7)
        // A 1.1 vault keeps its flag, and its metadata is sealed again with a fresh nonce.
        let team = try VaultCodec.open(try Self.teamVault(AgeIdentity.generate()), path: "t", password: password("pw"), limits: testLimits)
        let first = try VaultHeader.parse(try team.seal(), path: "t").header
        let second = try VaultHeader.parse(try team.seal(), path: "t").header
        #expect(first.flags == VaultHeader.keyslotsFlag && first.minorVersion == 1)
        #expect(first.metadata!.nonce != second.metadata!.nonce && first.keyslots == second.keyslots)
    }

    @Test func test_seal_metadataHidesLabelLengths() throws {
        let short = try VaultCodec.create(Vault(), slots: [(.recipient(AgeIdentity.generate().recipient), "a")], now: 0).seal()
        let long = try VaultCodec.create(Vault(), slots: [(.recipient(AgeIdentity.generate().recipient), String(repeating: "x", count: 64))], now: 0).seal()
        #expect(try VaultHeader.parse(short, path: "t").length == VaultHeader.parse(long, path: "t").length)
    }

    // MARK: - Hostile headers

    @Test func test_parse_newSlotTypesWithoutTheFlagStayUnknown() throws {
        let bytes = try Self.teamVault(AgeIdentity.generate())
        var header = try VaultHeader.parse(bytes, path: "t").header
        header.flags = 0
        header.metadata = nil
        let reparsed = try VaultHeader.parse(header.encoded(), path: "t").header
        #expect(reparsed.keyslots.allSatisfy { if case .unknown = $0 { return true } else { return false } })
    }

    @Test func test_parse_wrongBodyLengthsAreDamage() throws {
        for (kind, length) in [(SlotKind.recipient, 79), (.recipient, 81), (.sshEd25519, 0), (.keyfile, 80), (.password, 96)] {
            #expect(throws: VaultError.self, "\(kind) \(length)") {
                _ = try X25519Slot.parse(kind: kind, body: [UInt8](repeating: 1, count: length)[...], index: 0)
            }
        }
    }

    @Test func test_open_lowOrderEphemeralShareFailsToOpen() throws {
        let alice = AgeIdentity.generate()
        let created = try VaultCodec.create(try sampleVault(), slots: [(.recipient(alice.recipient), "alice")], now: Self.now)
        guard case .x25519(var slot) = created.header.keyslots[0] else { Issue.record("not an x25519 slot"); return }
        slot.ephemeralShare = [UInt8](repeating: 0, count: 32)
        #expect(slot.unwrap(secretKey: alice.secretKey, recipientKey: alice.recipient.publicKey, vaultID: created.header.vaultID) == nil)
        created.header.keyslots[0] = .x25519(slot)
        #expect(throws: VaultError.noKeyslotOpens(sources: ["test source"], unknownTypes: [])) {
            _ = try VaultCodec.open(try created.seal(), path: "t", credentials: Self.credential(.ageIdentity(alice)), limits: testLimits)
        }
    }

    /// Item 9 of issue 39: a low-order key never reaches a wrap as a raw `lowOrderPoint`. The wrap
    /// itself refuses one as bad input, and a metadata entry holding one is malformed, so a
    /// rotation names the slot instead of wrapping the new file key open to anyone.
    @Test func test_wrap_toALowOrderKeyIsBadInputAndRotationNamesTheSlot() throws {
        let zero = [UInt8](repeating: 0, count: 32)
        #expect(throws: VaultError.malformedInput("the key a keyslot would be wrapped to is a low-order X25519 point: a slot wrapped to it would open for anyone")) {
            _ = try X25519Slot.wrap(SecureBytes(copying: randomBytes(count: 32)), to: SlotRecipient(x25519: zero), kind: .recipient,
                                    kdf: nil, salt: [], vaultID: randomBytes(count: 16))
        }
        #expect(SlotRecipient(kind: .recipient, stored: zero) == nil && SlotRecipient(kind: .keyfile, stored: zero) == nil)
        let lowOrder = try #require(AgeRecipient(publicKey: zero))
        #expect(throws: VaultError.self) { _ = try VaultCodec.create(Vault(), slots: [(.recipient(lowOrder), "")], now: Self.now) }
        let opened = try VaultCodec.open(try Self.teamVault(AgeIdentity.generate()), path: "t", credentials: Self.credential(.password(password("pw"))),
                                         limits: testLimits)
        opened.slotMetadata![1].publicKey = zero
        #expect(throws: VaultError.headerDamaged("keyslot 1's public key in the metadata is malformed")) { _ = try opened.rotated(now: Self.now) }
    }

    /// docs/FORMAT.md §3.8: a v1 password slot has no public key, so its metadata entry's key is
    /// empty; a reader refuses another as damage, like any entry that does not match its slot.
    @Test func test_decodeMetadata_aV1PasswordSlotWithAPublicKeyIsDamage() throws {
        let v1 = Keyslot.password(try VaultCodec.makePasswordSlot(password: password("pw"), kdf: testKDF,
                                                                  fileKey: SecureBytes(copying: randomBytes(count: 32)), vaultID: randomBytes(count: 16)))
        let empty = SlotMetadata(type: 1, label: "old", publicKey: [], added: Self.now)
        #expect(try MetadataBlock.decode(MetadataBlock.encode([empty], slots: [v1]), slots: [v1]) == [empty])
        var keyed = empty
        keyed.publicKey = [UInt8](repeating: 9, count: 32)
        #expect(throws: VaultError.headerDamaged("keyslot metadata: entry 0 holds a 32-byte public key; a v1 password slot has none")) {
            _ = try MetadataBlock.decode(MetadataBlock.encode([keyed], slots: [v1]), slots: [v1])
        }
    }

    @Test func test_open_slotIsBoundToItsVault() throws {
        let alice = AgeIdentity.generate()
        let one = try VaultCodec.create(Vault(), slots: [(.recipient(alice.recipient), "")], now: 0)
        let other = try VaultCodec.create(Vault(), slots: [(.recipient(AgeIdentity.generate().recipient), "")], now: 0)
        guard case .x25519(let slot) = one.header.keyslots[0] else { return }
        #expect(slot.unwrap(secretKey: alice.secretKey, recipientKey: alice.recipient.publicKey, vaultID: other.header.vaultID) == nil)
        #expect(slot.unwrap(secretKey: alice.secretKey, recipientKey: alice.recipient.publicKey, vaultID: one.header.vaultID) != nil)
    }

    @Test func test_open_changedKDFParametersOpenNoSlot() throws {
        let created = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "")], now: 0)
        guard case .x25519(var slot) = created.header.keyslots[0] else { return }
        slot.kdf = .argon2id(.init(memoryKiB: 16, iterations: 1, parallelism: 1))
        created.header.keyslots[0] = .x25519(slot)
        #expect(openError(try created.seal()) as? VaultError == .wrongPassword)
    }

    @Test func test_open_metadataMismatchIsDamage() throws {
        let alice = AgeIdentity.generate()
        let created = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), ""), (.recipient(alice.recipient), "")], now: 0)
        // The metadata names another public key for the password slot: the client's check catches it.
        created.slotMetadata![0].publicKey = AgeIdentity.generate().recipient.publicKey
        #expect { _ = try VaultCodec.open(try created.seal(), path: "t", password: password("pw"), limits: testLimits) } throws: {
            ($0 as? VaultError)?.description.contains("does not match the key its secret derives") == true
        }
        // Entries that do not match the slots' bytes, count or types.
        let slots = created.header.keyslots
        let good = MetadataBlock.encode([SlotMetadata(type: 4, label: "", publicKey: [], added: 0), SlotMetadata(type: 3, label: "", publicKey: [], added: 0)], slots: slots)
        #expect(throws: VaultError.self) { _ = try MetadataBlock.decode(good, slots: Array(slots.reversed())) }
        #expect(throws: VaultError.self) { _ = try MetadataBlock.decode(good, slots: [slots[0]]) }
        var padding = good
        padding[padding.count - 1] = 1
        #expect(throws: VaultError.self) { _ = try MetadataBlock.decode(padding, slots: slots) }
        #expect(throws: VaultError.self) { _ = try MetadataBlock.decode(Array(good.prefix(100)), slots: slots) }
        let wrongType = MetadataBlock.encode([SlotMetadata(type: 3, label: "", publicKey: [], added: 0), SlotMetadata(type: 3, label: "", publicKey: [], added: 0)], slots: slots)
        #expect(throws: VaultError.self) { _ = try MetadataBlock.decode(wrongType, slots: slots) }
        #expect(try MetadataBlock.decode(good, slots: slots).count == 2)
    }

    @Test func test_open_metadataIsBoundToTheHeaderBeforeIt() throws {
        let created = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), "x")], now: 0)
        let sealed = try created.seal()
        var header = try VaultHeader.parse(sealed, path: "t").header
        // Sealed for one generation, presented with another (MAC recomputed by a key holder).
        let block = header.metadata
        header.generation += 1
        header.metadata = block
        header.mac = VaultCodec.headerMAC(header, fileKey: created.fileKey)
        let length = try VaultHeader.parse(sealed, path: "t").length
        #expect { _ = try VaultCodec.open(header.encoded() + Array(sealed[length...]), path: "t", password: password("pw"), limits: testLimits) } throws: {
            ($0 as? VaultError)?.description.contains("metadata fails authentication") == true
        }
    }
}
