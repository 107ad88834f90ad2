import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The signed cases of the damaged corpus (`Fixtures/damaged/signed-*`, format 1.3): copies whose
/// MACs verify but whose seal is wrong, as only a holder of the file key could write them, and
/// headers whose signed flag is misplaced.
///
/// `VAULTFILE_WRITE_DAMAGED_SIGNED=1 swift test --filter SignedCorpusTests` appends these cases to
/// `Fixtures/damaged/` (once; the committed files never change). The corpus suites
/// (DamagedCorpusTests, DamagedCorpusCLITests) check them with every other case.
@Suite struct SignedCorpusTests {
    @Test func test_corpus_holdsTheSignedCases() throws {
        let cases = try #require(DamagedCorpus.manifest).cases.filter { $0.file.hasPrefix("signed-") }
        #expect(cases.count >= 12, "Fixtures/damaged lacks the signed cases")
        #expect(cases.filter { $0.expectStatus == 0 }.count == 1 && cases.filter { $0.expectStatus == 4 }.count == cases.count - 1)
    }

    // MARK: - Writing the cases (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_DAMAGED_SIGNED"] == "1"))
    func test_writeCorpus_signed() throws {
        let folder = DamagedCorpus.folder
        let manifestURL = folder.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(DamagedCorpus.Manifest.self, from: Data(contentsOf: manifestURL))
        var vault = Vault()
        try vault.setValue(Array(manifest.canaryValue.utf8), for: manifest.canaryName, now: 1_700_000_000_000)
        let craft = try SignedSealCraft(password: manifest.password, vault: vault)
        func add(_ file: String, _ description: String, _ status: Int32, _ message: String, _ bytes: [UInt8]) throws {
            precondition(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(file).path), "\(file) exists: cases never change")
            precondition(!manifest.cases.contains { $0.file == file })
            let error = craft.openError(bytes)
            precondition(status == 0 ? error == nil : error.map { "\($0)".contains(message) } == true, "\(file): \(String(describing: error))")
            try Data(bytes).write(to: folder.appendingPathComponent(file))
            manifest.cases.append(.init(file: file, description: description, expectStatus: status, expectMessage: message))
        }
        let attestations = try #require(craft.unlocked.sealEvidence).record.attestations
        try add("signed-ok.vault", "format 1.3: a signed seal by the password slot, beside an age recipient slot", 0, "", craft.base)
        var tampered = craft.base
        tampered[craft.headerLength - 64 - 100] ^= 1
        fixChecksum(&tampered)
        try add("signed-block-forged.vault", "a byte of the encrypted signature block changed, checksum recomputed", 4, "fails authentication", tampered)
        try add("signed-signature-flipped.vault", "the seal signature with one bit flipped, by a holder of the file key", 4, "does not verify",
                try craft.resealed { $0.signature[5] ^= 0x10 })
        var missing = craft.header
        missing.signatureBlock = nil
        missing.mac = VaultCodec.headerMAC(missing, fileKey: craft.unlocked.fileKey)
        try add("signed-block-missing.vault", "flag 0x08 without a signature block, MAC valid", 4, "the signature block is missing",
                missing.encoded() + Array(craft.base[craft.headerLength...]))
        try add("signed-signer-position-wrong.vault", "the signer position names the recipient slot (type 3), not the signer's", 4,
                "is said to be of type 4, but keyslot 1 is of type 3", try craft.resealed { $0.signerPosition = 1 })
        try add("signed-signer-position-past-slots.vault", "the signer position names keyslot 7 of 2", 4, "names no keyslot",
                try craft.resealed { $0.signerPosition = 7 })
        try add("signed-signer-not-a-slot.vault", "signed by a key no slot holds, over the right transcript", 4, "is not keyslot 0's key",
                try craft.signedByStranger())
        try add("signed-delegation-other-file-key.vault", "a delegated seal whose delegation names another file key", 4, "delegation does not verify",
                try craft.delegated(fileKeyID: [UInt8](repeating: 0xAB, count: 16)))
        let ancestor = SealAncestor(generation: 1, headerHash: [UInt8](repeating: 1, count: 16))
        try add("signed-ancestors-9.vault", "a seal record of 9 ancestors (at most 8)", 4, "9 ancestors",
                try craft.resealed(rawMetadata: craft.rawMetadata(record: SealRecord(ancestors: Array(repeating: ancestor, count: 9), attestations: attestations))))
        let tombstone = Tombstone(removed: [UInt8](repeating: 2, count: 16), remover: [UInt8](repeating: 3, count: 16), generation: 1)
        try add("signed-tombstones-257.vault", "a seal record of 257 tombstones (at most 256)", 4, "257 tombstones",
                try craft.resealed(rawMetadata: craft.rawMetadata(record: SealRecord(attestations: attestations, tombstones: Array(repeating: tombstone, count: 257)))))
        var padded = try SignatureBlock.encode(try craft.block)
        padded[383] = 1
        try add("signed-block-padding.vault", "a non-zero byte in the signature block's padding", 4, "non-zero padding", try craft.resealed(rawBlock: padded))
        var minor2 = craft.base
        minor2[9] = 2
        fixChecksum(&minor2)
        try add("signed-flag-at-minor-2.vault", "flag 0x08 in a file of minor version 2, where it is unknown", 4, "which this vaultfile cannot read", minor2)
        var noKeyslots = craft.base
        noKeyslots[37] &= ~VaultHeader.keyslotsFlag
        fixChecksum(&noKeyslots)
        try add("signed-flag-without-keyslots.vault", "flag 0x08 without flag 0x02", 4, "without flag 0x02", noKeyslots)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: manifestURL)
    }
}
