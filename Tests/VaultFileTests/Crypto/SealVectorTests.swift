import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Seal signatures checked by an independent XEdDSA and Ed25519 (libxeddsa, PyPI `xeddsa` 1.2.0):
/// `Fixtures/vectors/seals/seals.json` holds what the signature blocks of the 1.3 fixtures hold
/// (only a holder of the file key can read them), and `scripts/verify-seal-vectors.py` rebuilds
/// each transcript from the vault file's own bytes and the FORMAT.md layout, then verifies it.
@Suite struct SealVectorTests {
    struct Vectors: Codable {
        struct Attestation: Codable, Equatable {
            var slotType: UInt8
            var slotKeyHex: String
            var label: String
            var adderType: UInt8
            var adderKeyHex: String
            var signatureHex: String
        }
        struct Delegation: Codable, Equatable {
            var scheme: UInt8
            var expiry: UInt64
            var slotKeyHex: String
            var signatureHex: String
        }
        struct Seal: Codable, Equatable {
            var file: String
            var fileKeyIDHex: String
            var scheme: UInt8
            var signerPosition: Int
            var signerType: UInt8
            var signerKeyHex: String
            var signatureHex: String
            var delegation: Delegation?
            var transcriptHex: String
            var attestations: [Attestation]
        }
        var source: String
        var seals: [Seal]
    }

    static let file = ProjectPaths.fixtures.appendingPathComponent("vectors/seals/seals.json")

    /// What vaultfile finds in fixture `name` (under Fixtures/), opened with its first secret.
    static func seal(of name: String, secret: KeyslotFixtureTests.Manifest.Secret) throws -> Vectors.Seal {
        let bytes = Array(try Data(contentsOf: ProjectPaths.fixtures.appendingPathComponent(name)))
        let opened = try VaultCodec.open(bytes, path: name, credentials: [try SignedFixtureTests.credential(secret)], limits: .defaults)
        let block = try SignatureBlock.open(opened.header, fileKey: opened.fileKey)
        let evidence = try #require(opened.sealEvidence)
        let (_, length) = try VaultHeader.parse(bytes, path: name)
        let transcript = SealTranscript.seal(scheme: block.scheme, vaultID: opened.header.vaultID, generation: opened.header.generation,
                                             fileKeyID: opened.sealFileKeyID, signerPosition: block.signerPosition, signerType: block.signerType,
                                             signerKey: block.signerKey, headerPrefix: opened.header.signedPrefix(),
                                             payloadHash: SealTranscript.blake2b512(Array(bytes[length...])))
        let slots = evidence.slots
        return Vectors.Seal(
            file: name, fileKeyIDHex: Hex.encode(opened.sealFileKeyID), scheme: block.scheme.rawValue, signerPosition: block.signerPosition,
            signerType: block.signerType, signerKeyHex: Hex.encode(block.signerKey), signatureHex: Hex.encode(block.signature),
            delegation: block.delegation.map {
                Vectors.Delegation(scheme: $0.delegatingScheme.rawValue, expiry: $0.expiry, slotKeyHex: Hex.encode(slots[block.signerPosition].key),
                                   signatureHex: Hex.encode($0.signature))
            },
            transcriptHex: Hex.encode(transcript),
            attestations: zip(slots, evidence.record.attestations).map { slot, attestation in
                Vectors.Attestation(slotType: slot.type, slotKeyHex: Hex.encode(slot.key), label: slot.label, adderType: attestation.adder.type,
                                    adderKeyHex: Hex.encode(attestation.adder.bytes), signatureHex: Hex.encode(attestation.signature))
            })
    }

    static func fixtureSeals() throws -> [Vectors.Seal] {
        let manifest = try JSONDecoder().decode(SignedFixtureTests.Manifest.self,
                                                from: Data(contentsOf: SignedFixtureTests.folder.appendingPathComponent("manifest.json")))
        return try manifest.fixtures.map { try seal(of: "v1.3/" + $0.file, secret: $0.secrets[0]) }
    }

    @Test func test_vectors_areWhatTheFixturesSignatureBlocksHold() throws {
        let vectors = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: Self.file))
        let seals = try Self.fixtureSeals()
        #expect(vectors.seals == seals)
        #expect(Set(seals.map(\.scheme)) == [1, 2, 3] && seals.allSatisfy { !$0.attestations.isEmpty })
    }

    /// Runs the independent verifier with `VAULTFILE_XEDDSA_PYTHON` (else `python3`); skipped, saying
    /// why, when that Python lacks the `xeddsa` module (`pip install xeddsa==1.2.0`).
    @Test func test_verifySealVectors_anIndependentXEdDSAVerifiesEverySignature() throws {
        let python = ProcessInfo.processInfo.environment["VAULTFILE_XEDDSA_PYTHON"] ?? "/usr/bin/env"
        let prefix = ProcessInfo.processInfo.environment["VAULTFILE_XEDDSA_PYTHON"] == nil ? ["python3"] : []
        guard Self.run(python, prefix + ["-c", "import xeddsa"]).status == 0 else {
            print("SealVectorTests: skipped: no Python with the xeddsa module (pip install xeddsa==1.2.0; VAULTFILE_XEDDSA_PYTHON names its python)")
            return
        }
        let result = Self.run(python, prefix + [ProjectPaths.root.appendingPathComponent("scripts/verify-seal-vectors.py").path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("0 failed"), "\(result.output)")
    }

    static func run(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = ProjectPaths.root
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (127, "\(error)") }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    // MARK: - Writing the vectors (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeVectors_seals() throws {
        precondition(!FileManager.default.fileExists(atPath: Self.file.path), "seals.json exists: committed vectors never change")
        try FileManager.default.createDirectory(at: Self.file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let vectors = Vectors(source: "vaultfile's own seals of Fixtures/v1.3 (SealVectorTests.test_writeVectors_seals)", seals: try Self.fixtureSeals())
        try encoder.encode(vectors).write(to: Self.file)
    }
}
