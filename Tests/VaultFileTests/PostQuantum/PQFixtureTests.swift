import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The golden post-quantum vault of format 1.4 (`Fixtures/v1.4/pq-signed.vault`, its manifest
/// `pq-manifest.json` and identity `pq-identity.key`): a signed vault with a password slot and an
/// mlkem768x25519 slot, made once by `test_writeFixture_pq` and never changed. Every release must
/// keep opening it with each secret, and the post-quantum slot must survive every write.
@Suite struct PQFixtureTests {
    static let folder = ProjectPaths.fixtures.appendingPathComponent("v1.4")
    static let fixturePassword = "fixture 1.4 pq pässword"

    struct Manifest: Codable {
        var file: String
        var flags: UInt8
        var minorVersion: UInt8
        var slotKinds: [String]
        var entries: [String: String]
        var quantum: String
    }

    static func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("pq-manifest.json")))
    }

    static func identity() throws -> AgePQIdentity {
        let parsed = try AgeIdentityFile.parseAll(Array(try Data(contentsOf: folder.appendingPathComponent("pq-identity.key"))), source: "pq-identity.key")
        guard case .postQuantum(let identity)? = parsed.first else { throw VaultError.malformedInput("no post-quantum identity") }
        return identity
    }

    static func vaultBytes() throws -> [UInt8] { Array(try Data(contentsOf: folder.appendingPathComponent("pq-signed.vault"))) }

    @Test func test_open_theFixtureMatchesItsManifestWithEachSecret() throws {
        let manifest = try Self.manifest()
        let bytes = try Self.vaultBytes()
        let header = try VaultHeader.parse(bytes, path: "v").header
        #expect(header.flags == manifest.flags && header.minorVersion == manifest.minorVersion)
        #expect(PostQuantumStatus(header.keyslots).words == manifest.quantum)
        let byPassword = try VaultCodec.open(bytes, path: "v", password: password(Self.fixturePassword), limits: testLimits)
        let byIdentity = try VaultCodec.open(bytes, path: "v", credentials: [UnlockCredential(.pqIdentity(try Self.identity()), source: "pq")],
                                             limits: testLimits)
        for opened in [byPassword, byIdentity] {
            #expect(opened.slots.map(\.kind) == manifest.slotKinds)
            for (name, value) in manifest.entries { #expect(opened.vault.entry(name)?.value == Array(value.utf8), "\(name)") }
            #expect(opened.vault.names.count == manifest.entries.count)
        }
        let recipient = try Self.identity().recipient.description
        #expect(byIdentity.openedSlot?.index == 1 && byIdentity.slots[1].recipient == recipient)
    }

    @Test func test_seal_aRotationByThePasswordKeepsThePostQuantumSlotOpening() throws {
        let opened = try VaultCodec.open(try Self.vaultBytes(), path: "v", password: password(Self.fixturePassword), limits: testLimits)
        try opened.vault.setValue(Array("after".utf8), for: "written/later", now: 1_764_600_000_100)
        let (rotated, _) = try opened.rotated(now: 1_764_600_000_200)
        let bytes = try rotated.seal()
        let again = try VaultCodec.open(bytes, path: "v", credentials: [UnlockCredential(.pqIdentity(try Self.identity()), source: "pq")],
                                        limits: testLimits)
        #expect(again.vault.entry("written/later")?.value == Array("after".utf8) && again.header.usesLongKeys && again.isSigned)
    }

    /// Writes the fixture once (`VAULTFILE_WRITE_PQ_FIXTURE=1`); refuses to replace it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_PQ_FIXTURE"] == "1"))
    func test_writeFixture_pq() throws {
        let vaultURL = Self.folder.appendingPathComponent("pq-signed.vault")
        precondition(!FileManager.default.fileExists(atPath: vaultURL.path), "the fixture exists: fixtures never change")
        let identity = try AgePQIdentity.generate()
        let keyText = "# created: 2026-11-27T17:40:00Z\n# public key: \(identity.recipient)\n\(identity.encodedSecretKey())\n"
        try Data(keyText.utf8).write(to: Self.folder.appendingPathComponent("pq-identity.key"))
        let entries = ["db/password": "post-quantum", "team/note": "sealed to age1pq1"]
        var vault = Vault()
        for (index, (name, value)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
            try vault.setValue(Array(value.utf8), for: name, now: 1_764_600_000_000 + Int64(index))
        }
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 64 * 1024, iterations: 3, parallelism: 4))
        let unlocked = try VaultCodec.create(vault, slots: [(.password(password(Self.fixturePassword), kdf), "admin"), (.postQuantum(identity.recipient), "quantum")],
                                             now: 1_764_600_000_010)
        let written = try unlocked.seal()
        try Data(written).write(to: vaultURL)
        let header = try VaultHeader.parse(written, path: "v").header
        let manifest = Manifest(file: "pq-signed.vault", flags: header.flags, minorVersion: header.minorVersion,
                                slotKinds: ["password", "mlkem768x25519"], entries: entries, quantum: "post-quantum against outsiders")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: Self.folder.appendingPathComponent("pq-manifest.json"))
    }
}
