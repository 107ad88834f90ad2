import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel
@testable import VaultPQ

/// age 1.3's post-quantum keys: `age1pq1…` recipients (Bech32 past 90 characters for this prefix
/// only, FIPS 203's encapsulation-key checks), `AGE-SECRET-KEY-PQ-1…` identities, identity files
/// with both kinds, and age files to them (the mlkem768x25519 stanza, age's no-mixing rule).
@Suite struct AgePQKeyTests {
    static let identity = try! AgePQIdentity.generate()

    // MARK: - Recipients

    @Test func test_recipient_roundTripsThroughItsBech32Text() throws {
        let text = Self.identity.recipient.description
        #expect(text.hasPrefix("age1pq1") && text.count == AgePQRecipient.encodedLength)
        #expect(try AgePQRecipient(parsing: text) == Self.identity.recipient)
    }

    @Test func test_recipient_refusesUpperCaseAndAnotherPrefix() {
        let text = Self.identity.recipient.description
        #expect(throws: VaultError.self) { _ = try AgePQRecipient(parsing: text.uppercased()) }
        let other = Bech32.encode(humanReadablePart: "age1pr", data: Self.identity.recipient.publicKey.bytes)
        #expect(throws: VaultError.self) { _ = try AgePQRecipient(parsing: other) }
    }

    @Test func test_bech32_longTextIsOnlyForThePostQuantumPrefix() {
        let long = Bech32.encode(humanReadablePart: "age", data: Self.identity.recipient.publicKey.bytes)
        #expect(throws: VaultError.self) { _ = try AgeRecipient(parsing: long) }
        #expect(throws: Bech32.Failure.tooLong) { _ = try Bech32.decode(long) }
    }

    @Test(arguments: [0, 32, 1_184, 1_215, 1_217])
    func test_recipient_refusesAKeyOfAnotherLength(length: Int) {
        #expect(throws: VaultError.malformedInput("the age post-quantum recipient holds \(length) bytes, not 1216 (ML-KEM-768 + X25519)")) {
            _ = try AgePQRecipient(bytes: Array(Self.identity.recipient.publicKey.bytes.prefix(length)) + (length > 1_216 ? [0] : []))
        }
    }

    @Test(arguments: [0, 600, 1_151])
    func test_recipient_refusesAnMLKEMKeyFailingTheModulusCheck(coefficientPair: Int) {
        // Bytes 3i…3i+2 hold two 12-bit coefficients; 0xFFF ≥ q = 3329 (FIPS 203 §7.2's modulus check).
        var bytes = Self.identity.recipient.publicKey.bytes
        let offset = 3 * (coefficientPair % 384)
        bytes[offset] = 0xFF
        bytes[offset + 1] |= 0x0F
        #expect(throws: HybridKEMError.mlkemKeyInvalid) { _ = try HybridPublicKey(validating: bytes) }
        #expect(throws: VaultError.self) { _ = try AgePQRecipient(bytes: bytes) }
    }

    @Test(arguments: [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31)])
    func test_recipient_refusesALowOrderX25519Part(point: [UInt8]) {
        let bytes = Array(Self.identity.recipient.publicKey.bytes.prefix(1_184)) + point
        #expect(throws: HybridKEMError.x25519KeyInvalid) { _ = try HybridPublicKey(validating: bytes) }
    }

    @Test func test_recipient_refusesAnMLKEMKeyWhoseTHatIsZero() throws {
        // t̂ = 0 passes FIPS 203's modulus check, but v = e₂ + μ: the secret travels in the clear.
        var bytes = Self.identity.recipient.publicKey.bytes
        for index in 0..<1_152 { bytes[index] = 0 }
        #expect(throws: HybridKEMError.mlkemKeyZero) { _ = try HybridPublicKey(validating: bytes) }
        #expect(throws: VaultError.self) { _ = try AgePQRecipient(parsing: Bech32.encode(humanReadablePart: "age1pq", data: bytes)) }
        // One non-zero coefficient is a key FIPS 203 accepts; only the all-zero t̂ is refused here.
        bytes[600] = 1
        #expect(try HybridPublicKey(validating: bytes).bytes == bytes)
    }

    @Test(arguments: ["high bit", "p", "p + 9", "2^255 - 1"])
    func test_recipient_refusesANonCanonicalX25519Part(name: String) {
        let key = Self.identity.recipient.publicKey.bytes
        let ones = [UInt8](repeating: 0xFF, count: 30)
        let point: [UInt8] = switch name {
        case "high bit": Array(key.suffix(32).prefix(31)) + [key[1_215] | 0x80]
        case "p": [0xED] + ones + [0x7F]
        case "p + 9": [0xF6] + ones + [0x7F]
        default: [0xFF] + ones + [0x7F]
        }
        let bytes = Array(key.prefix(1_184)) + point
        #expect(throws: HybridKEMError.x25519KeyNotCanonical, "\(name)") { _ = try HybridPublicKey(validating: bytes) }
        #expect(throws: VaultError.self) { _ = try AgePQRecipient(bytes: bytes) }
    }

    @Test func test_isCanonicalX25519_stopsExactlyAtP() {
        // p − 1 is canonical (the trial encapsulation then refuses it: −1 is of order 4), p is not.
        #expect(HybridPublicKey.isCanonicalX25519(ArraySlice([0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])))
        #expect(HybridPublicKey.isCanonicalX25519(ArraySlice(Self.identity.recipient.publicKey.bytes.suffix(32))))
        #expect(!HybridPublicKey.isCanonicalX25519(ArraySlice([0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F])))
    }

    // MARK: - Identities

    @Test func test_identity_roundTripsAndDerivesItsRecipient() throws {
        let text = Self.identity.encodedSecretKey()
        #expect(text.hasPrefix("AGE-SECRET-KEY-PQ-1") && text == text.uppercased())
        let parsed = try AgePQIdentity(parsing: text)
        #expect(parsed.recipient == Self.identity.recipient)
    }

    @Test func test_identity_refusesLowerCaseAndAWrongSeedLength() {
        #expect(throws: VaultError.self) { _ = try AgePQIdentity(parsing: Self.identity.encodedSecretKey().lowercased()) }
        let short = Bech32.encode(humanReadablePart: AgePQIdentity.humanReadablePart, data: [UInt8](repeating: 7, count: 31), upperCase: true)
        #expect(throws: VaultError.malformedInput("the age post-quantum identity holds 31 bytes, not 32")) { _ = try AgePQIdentity(parsing: short) }
    }

    @Test func test_parseAll_readsBothKindsInFileOrder() throws {
        let classical = AgeIdentity.generate()
        let file = "# created: now\n# public key: \(Self.identity.recipient)\n\(Self.identity.encodedSecretKey())\n\n\(classical.encodedSecretKey())\n"
        let parsed = try AgeIdentityFile.parseAll(Array(file.utf8), source: "ids")
        guard parsed.count == 2, case .postQuantum(let first) = parsed[0], case .x25519(let second) = parsed[1] else {
            Issue.record("parsed \(parsed)"); return
        }
        #expect(first.recipient == Self.identity.recipient && second.recipient == classical.recipient)
        #expect(throws: VaultError.malformedInput("ids, line 1: it is not an age post-quantum identity: it does not start 'AGE-SECRET-KEY-PQ-1' (upper case)")) {
            _ = try AgeIdentityFile.parseAll(Array((Self.identity.encodedSecretKey().lowercased() + "\n").utf8), source: "ids")
        }
    }

    // MARK: - age files

    @Test func test_encrypt_toAPostQuantumRecipientWritesOneMLKEMStanzaThatOpens() throws {
        let file = try AgeFile.encrypt(SecureBytes(copying: Array("shared".utf8)), to: [Self.identity.recipient])
        let header = try AgeHeader.parse(file[...])
        #expect(header.stanzas.count == 1 && header.stanzas[0].type == "mlkem768x25519" && header.stanzas[0].body.count == 32)
        #expect(AgeBase64.decodeUnpadded(header.stanzas[0].arguments[0].utf8Slice)?.count == 1_120)
        let plaintext = try AgeFile.decrypt(file, identities: [Self.identity])
        #expect(plaintext.withUnsafeBytes { Array($0) } == Array("shared".utf8))
        #expect(throws: AgeFileError.self) { _ = try AgeFile.decrypt(file, identities: [try AgePQIdentity.generate()]) }
    }

    @Test func test_encrypt_refusesMixingPostQuantumAndClassicalRecipients() {
        let recipients: [any AgeFileRecipient] = [Self.identity.recipient, AgeIdentity.generate().recipient]
        #expect(throws: AgeFileError.self) { _ = try AgeFile.encrypt(SecureBytes(copying: [1]), to: recipients) }
        let twoPQ: [any AgeFileRecipient] = [Self.identity.recipient, (try! AgePQIdentity.generate()).recipient]
        #expect(throws: Never.self) { _ = try AgeFile.encrypt(SecureBytes(copying: [1]), to: twoPQ) }
    }

    // MARK: - What a vault is

    @Test func test_postQuantumStatus_saysPostQuantumOnlyWhenEverySlotIs() throws {
        let pq = try VaultCodec.create(try sampleVault(), slots: [(.postQuantum(Self.identity.recipient), "")], now: 1)
        #expect(PostQuantumStatus(pq.header.keyslots) == .postQuantum)
        try pq.addSlot(.password(password("pw"), testKDF), label: "", now: 2)
        #expect(PostQuantumStatus(pq.header.keyslots) == .againstOutsiders)
        #expect(throws: VaultError.self) { try PostQuantumStatus.checkAdding(.recipient(AgeIdentity.generate().recipient), to: pq.header.keyslots, allowClassical: false) }
        try PostQuantumStatus.checkAdding(.recipient(AgeIdentity.generate().recipient), to: pq.header.keyslots, allowClassical: true)
        try PostQuantumStatus.checkAdding(.password(password("x"), testKDF), to: pq.header.keyslots, allowClassical: false)
        try pq.addSlot(.recipient(AgeIdentity.generate().recipient), label: "", now: 3)
        #expect(PostQuantumStatus(pq.header.keyslots) == .classical && PostQuantumStatus.classical.words == nil)
    }

    @Test func test_postQuantumStatus_ofAVaultWithoutAPostQuantumSlotIsClassicalAndAddsFreely() throws {
        let vault = try VaultCodec.create(try sampleVault(), slots: [(.password(password("pw"), testKDF), "")], now: 1)
        #expect(PostQuantumStatus(vault.header.keyslots) == .classical)
        try PostQuantumStatus.checkAdding(.recipient(AgeIdentity.generate().recipient), to: vault.header.keyslots, allowClassical: false)
    }
}
