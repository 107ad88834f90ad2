import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The format-1.4 cases of the damaged corpus (`Fixtures/damaged/long-keys-*`: flag 0x10,
/// metadata version 2, ssh-rsa slots and their seals) and the hostile ssh-rsa keys of
/// `Fixtures/damaged/keys/` (`*ssh-rsa-*`).
///
/// `VAULTFILE_WRITE_DAMAGED_RSA=1 swift test --filter RSACorpusTests` appends these cases to both
/// corpora (once; the committed files never change). The corpus suites (DamagedCorpusTests,
/// DamagedCorpusCLITests, KeyCorpusCLITests) check them with every other case.
@Suite struct RSACorpusTests {
    @Test func test_corpus_holdsTheLongKeysCases() throws {
        let cases = try #require(DamagedCorpus.manifest).cases.filter { $0.file.hasPrefix("long-keys-") }
        #expect(cases.count >= 10, "Fixtures/damaged lacks the format-1.4 cases")
        #expect(cases.filter { $0.expectStatus == 0 }.map(\.file) == ["long-keys-ok.vault"])
    }

    @Test func test_keyCorpus_holdsTheRSACases() throws {
        let cases = try KeyslotCorpusTests.KeyCase.read(Self.keyFolder.appendingPathComponent("manifest.json"))
        let rsa = cases.map(\.file).filter { $0.contains("ssh-rsa-") }
        #expect(rsa.count >= 10, "Fixtures/damaged/keys lacks the ssh-rsa cases")
    }

    static let keyFolder = DamagedCorpus.folder.appendingPathComponent("keys")

    // MARK: - Writing the cases (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_RSA"] == "1"))
    func test_writeCorpus_longKeys() throws {
        let folder = DamagedCorpus.folder
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(DamagedCorpus.Manifest.self, from: Data(contentsOf: manifestURL))
        var vault = Vault()
        try vault.setValue(Array(manifest.canaryValue.utf8), for: manifest.canaryName, now: 1_700_000_000_000)
        let craft = try LongKeysCraft.signedByRSA(password: manifest.password, vault: vault)
        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            precondition(!manifest.cases.contains { $0.file == file })
            let error = craft.openError(bytes)
            precondition(status == 0 ? error == nil : error.map { "\($0)".contains(message) } == true, "\(file): \(String(describing: error))")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            manifest.cases.append(.init(file: file, description: description, expectStatus: status, expectMessage: message))
        }
        try add("long-keys-ok.vault", "format 1.4: a password, an age recipient and a 2,048-bit ssh-rsa slot, sealed by the ssh-rsa slot (RSA-PSS)",
                0, "", craft.base)
        var minor3 = craft.base
        minor3[9] = 3
        fixChecksum(&minor3)
        try add("long-keys-flag-at-minor-3.vault", "flag 0x10 in a file of minor version 3, where it is unknown", 4, "which this vaultfile cannot read", minor3)
        var plain = try VaultCodec.create(vault, password: password(manifest.password), kdf: DamagedCorpusTests.kdf).seal()
        plain[9] = 4
        plain[37] |= VaultHeader.longKeysFlag
        fixChecksum(&plain)
        try add("long-keys-flag-without-keyslots.vault", "flag 0x10 without flag 0x02", 4, "without flag 0x02", plain)
        try add("long-keys-signature-forged.vault", "the RSA-PSS seal signature with one bit flipped, by a holder of the file key", 4, "does not verify",
                try craft.resealed { $0.signature[17] ^= 0x01 })
        let craft4096 = try LongKeysCraft.signedByRSA(password: manifest.password, vault: vault, key: RSASlotTests.rsa4096)
        try add("long-keys-signer-not-a-slot.vault", "signed by a 2,048-bit ssh-rsa key no slot holds, claiming the 4,096-bit ssh-rsa slot", 4,
                "is not keyslot 2's key", try craft4096.signedBy(RSASlotTests.rsa2048))
        var shortSlot = craft.header
        shortSlot.keyslots[2] = .sshRSA(RSASlot(ciphertext: randomBytes(count: 255)))
        try add("long-keys-rsa-slot-255-bytes.vault", "an ssh-rsa slot of 255 bytes (a 2,040-bit modulus), checksum recomputed", 4,
                "an ssh-rsa slot is 256 to 1024", shortSlot.encoded() + Array(craft.base[craft.headerLength...]))
        var smallBlock = craft.header
        smallBlock.signatureBlock = SignatureBlock.placeholder()
        try add("long-keys-signature-block-400.vault", "a 400-byte signature block (format 1.3's) in a file with flag 0x10", 4,
                "signature block length 400 is not", smallBlock.encoded() + Array(craft.base[craft.headerLength...]))
        // Unsigned files (recipients and a password): only the metadata block covers the keys.
        let unsigned = try VaultCodec.create(vault, slots: [(.password(password(manifest.password), DamagedCorpusTests.kdf), "admin"),
                                                            (.recipient(AgeIdentity.generate().recipient), "alice")], now: 1, signed: false)
        let unsignedBytes = try unsigned.seal()
        let (header11, length11) = try VaultHeader.parse(unsignedBytes, path: "u")
        let opened11 = try VaultCodec.open(unsignedBytes, path: "u", password: password(manifest.password), limits: testLimits)
        let entries = try #require(opened11.slotMetadata)
        try add("long-keys-metadata-v2-without-flag.vault", "keyslot metadata of version 2 (u16 key lengths) in a header without flag 0x10", 4,
                "version 2 (long keys) in a header without flag 0x10",
                try LongKeysCraft.withMetadata(MetadataBlock.encode(entries, slots: header11.keyslots, longKeys: true), header: header11,
                                               fileKey: opened11.fileKey, payload: Array(unsignedBytes[length11...])))
        var flagged = header11
        flagged.flags |= VaultHeader.longKeysFlag
        flagged.minorVersion = 4
        try add("long-keys-metadata-v1-with-flag.vault", "keyslot metadata of version 1 in a header with flag 0x10", 4,
                "version 1 in a header with flag 0x10",
                try LongKeysCraft.withMetadata(MetadataBlock.encode(entries, slots: flagged.keyslots), header: flagged,
                                               fileKey: opened11.fileKey, payload: Array(unsignedBytes[length11...])))
        var pastEnd = MetadataBlock.encode(entries, slots: flagged.keyslots, longKeys: true)
        // Entry 1's key length (after position, hash, type, time, label length 5 and "alice"): 0xFFFF, past the plaintext.
        let entry1 = 2 + (44 + 1 + entries[0].label.utf8.count + entries[0].publicKey.count)
        let lengthAt = entry1 + 1 + 32 + 1 + 8 + 1 + entries[1].label.utf8.count
        precondition(pastEnd[lengthAt] == UInt8(entries[1].publicKey.count) && pastEnd[lengthAt + 1] == 0)
        pastEnd[lengthAt] = 0xFF
        pastEnd[lengthAt + 1] = 0xFF
        try add("long-keys-key-length-past-the-end.vault", "metadata version 2 whose second entry's u16 key length (65,535) runs past the block", 4,
                "entry 1 is truncated",
                try LongKeysCraft.withMetadata(pastEnd, header: flagged, fileKey: opened11.fileKey, payload: Array(unsignedBytes[length11...])))
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: manifestURL)
        try writeKeyCases()
    }

    /// The hostile ssh-rsa keys of `Fixtures/damaged/keys/`, appended to its manifest.
    func writeKeyCases() throws {
        let folder = Self.keyFolder
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var cases = try KeyslotCorpusTests.KeyCase.read(manifestURL)
        func add(_ file: String, _ use: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            cases.append(.init(file: file, use: use, description: description, expectStatus: status, expectMessage: message))
        }
        func line(e: [UInt8], n: [UInt8]) -> [UInt8] { Array(("ssh-rsa " + base64Encode(SSHRSAKeyTests.wire(e: e, n: n)) + " hostile@test\n").utf8) }
        let n2048 = SSHRSAKeyTests.modulus(bits: 2048)
        try add("recipients-ssh-rsa-modulus-1-byte.txt", "recipients", "an ssh-rsa key whose modulus is one byte (11)", 2,
                "a 4-bit modulus", line(e: [1, 0, 1], n: [0x0B]))
        try add("recipients-ssh-rsa-e-3.txt", "recipients", "an ssh-rsa key of 2,048 bits with e = 3", 2, "public exponent is 3", line(e: [3], n: n2048))
        try add("recipients-ssh-rsa-16384-bits.txt", "recipients", "an ssh-rsa key of 16,384 bits", 2, "a 16,384-bit modulus",
                line(e: [1, 0, 1], n: SSHRSAKeyTests.modulus(bits: 16384)))
        try add("recipients-ssh-rsa-1024-bits.txt", "recipients", "an ssh-rsa key of 1,024 bits", 2, "a 1,024-bit modulus",
                line(e: [1, 0, 1], n: SSHRSAKeyTests.modulus(bits: 1024)))
        try add("recipients-ssh-rsa-mpint-padded.txt", "recipients", "an ssh-rsa key whose modulus has a needless leading zero byte", 2,
                "not minimally encoded", line(e: [1, 0, 1], n: [0] + n2048))
        try add("recipients-ssh-rsa-length-past-the-end.txt", "recipients", "an ssh-rsa key whose modulus length runs past the key", 2,
                "not minimally encoded", Array(("ssh-rsa " + base64Encode(Array(SSHRSAKeyTests.wire(e: [1, 0, 1], n: n2048).dropLast(10))) + "\n").utf8))
        let keyBytes = try SSHRSAKeyTests.keyText(2048)
        let identity = try SSHRSAIdentity.parse(keyBytes, source: "k")
        let section = try RSAKeyCorpus.privateSection(of: keyBytes)
        let wire = identity.publicKey.wireBytes
        try add("ssh-rsa-ok-no-slot.key", "identity", "a valid 2,048-bit ssh-rsa key (Fixtures/v1.4's) the corpus vault has no slot for", 3,
                "no keyslot of the vault opens with --identity", keyBytes)
        let edits: [(String, String, Int)] = [("ssh-rsa-check-integers.key", "check integers that differ", 0),
                                              ("ssh-rsa-public-halves-differ.key", "a private n that differs from the public key", 1),
                                              ("ssh-rsa-d-wrong.key", "a private exponent d that is not e's inverse", 2),
                                              ("ssh-rsa-p-wrong.key", "a factor p whose product with q is not n", 3),
                                              ("ssh-rsa-iqmp-wrong.key", "a CRT coefficient iqmp that is not q⁻¹ mod p", 4)]
        for (file, description, index) in edits {
            var edited = section
            RSAKeyCorpus.privateSectionEdits[index].edit(&edited)
            try add(file, "identity", description, 2, RSAKeyCorpus.privateSectionEdits[index].message,
                    RSAKeyCorpus.keyFile(publicWire: wire, privateSection: edited))
        }
        let e3 = SSHRSAKeyTests.wire(e: [3], n: mpintBytes(identity.publicKey.modulus))
        try add("ssh-rsa-e-3.key", "identity", "an OpenSSH RSA key whose public exponent is 3", 2, "public exponent is 3",
                RSAKeyCorpus.keyFile(publicWire: e3, privateSection: section))
        let small = SSHRSAKeyTests.wire(e: [1, 0, 1], n: SSHRSAKeyTests.modulus(bits: 1024))
        try add("ssh-rsa-1024-bits.key", "identity", "an OpenSSH RSA key of 1,024 bits", 2, "a 1,024-bit modulus",
                RSAKeyCorpus.keyFile(publicWire: small, privateSection: section))
        try KeyslotCorpusTests.KeyCase.write(cases, to: manifestURL)
    }
}
