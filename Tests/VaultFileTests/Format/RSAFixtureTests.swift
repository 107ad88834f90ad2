import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The golden vaults of format 1.4 (`Fixtures/v1.4/`): ssh-rsa slots and the long slot keys they
/// need (flag 0x10, metadata version 2), with the two RSA keys ssh-keygen made for them.
/// `scripts/make-fixtures-1.4.sh` wrote the set once (`VAULTFILE_WRITE_FIXTURES=1`, refusing to
/// overwrite); a released fixture never changes.
@Suite struct RSAFixtureTests {
    /// A fixture's secret, as the manifests list it. (At the type's scope: a type declared inside a
    /// test function made the compiler misjudge the `try`s of the local function beside it.)
    private typealias Secret = KeyslotFixtureTests.Manifest.Secret

    struct Manifest: Codable {
        /// A slot as format 1.3's manifest lists it.
        typealias Slot = SignedFixtureTests.Manifest.Slot
        struct Fixture: Codable {
            var file: String
            /// Secrets as `KeyslotFixtureTests` names them; files relative to Fixtures/.
            var secrets: [KeyslotFixtureTests.Manifest.Secret]
            var minorVersion: UInt8
            var flags: UInt8
            var generation: UInt64
            /// The member that signed the last seal (nil for an unsigned vault).
            var signer: SignedFixtureTests.Manifest.Signer?
            var slots: [Slot]
            var entries: [FixtureTests.Manifest.FixtureEntry]
        }
        var formatVersion: String
        var fixtures: [Fixture]
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("v1.4")
    static let password14 = "fixture 1.4 pässword"

    static func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("manifest.json")))
    }

    /// The ssh-rsa identity `Fixtures/v1.4/ssh-rsa-BITS.key`.
    static func identity(_ bits: Int) throws -> SSHRSAIdentity {
        let path = folder.appendingPathComponent("ssh-rsa-\(bits).key").path
        return try SSHRSAIdentity.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
    }

    // MARK: - open

    @Test func test_open_everyFixtureMatchesItsManifestWithEachSecret() throws {
        let manifest = try Self.manifest()
        #expect(manifest.formatVersion == "1.4" && manifest.fixtures.count == 2)
        var schemes = Set<UInt8>()
        for fixture in manifest.fixtures {
            let store = VaultStore(path: Self.folder.appendingPathComponent(fixture.file).path)
            let header = try store.readHeader().header
            #expect(header.usesLongKeys && header.minorVersion == fixture.minorVersion && header.flags == fixture.flags, "\(fixture.file)")
            #expect(header.generation == fixture.generation && header.keyslots.contains { $0.typeByte == RSASlot.type })
            for secret in fixture.secrets {
                let unlocked = try store.open(credentials: [try SignedFixtureTests.credential(secret)], limits: .defaults)
                #expect(FixtureTests.entries(of: unlocked.vault) == fixture.entries, "\(fixture.file) with \(secret.file ?? secret.kind)")
                let slots = try #require(unlocked.slotMetadata).map { Manifest.Slot(type: $0.type, label: $0.label, keyHex: Hex.encode($0.publicKey)) }
                #expect(slots == fixture.slots, "\(fixture.file)")
                if let evidence = unlocked.sealEvidence {
                    #expect(SignedFixtureTests.signer(evidence) == fixture.signer, "\(fixture.file)")
                    #expect(evidence.slots.indices.allSatisfy { evidence.attestationVerifies(at: $0) }, "\(fixture.file)")
                    schemes.insert(evidence.scheme.rawValue)
                } else {
                    #expect(fixture.signer == nil, "\(fixture.file)")
                }
            }
        }
        #expect(schemes == [SealScheme.rsaPSS.rawValue])
    }

    @Test func test_open_fixtureKeysAreThoseTheSlotsHold() throws {
        for bits in [2048, 4096, 8192] {
            let identity = try Self.identity(bits)
            let pub = try String(contentsOf: Self.folder.appendingPathComponent("ssh-rsa-\(bits).key.pub"), encoding: .utf8)
            let parsed = try SSHRSAPublicKey(parsing: pub.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(parsed == identity.publicKey && parsed.bits == bits && parsed.comment == "rsa\(bits)@fixture")
        }
    }

    @Test func test_seal_fixturesKeepLongKeysAndTheirSlotsAfterAWrite() throws {
        for fixture in try Self.manifest().fixtures {
            let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(fixture.file)))
            let opened = try VaultCodec.open(bytes, path: fixture.file, credentials: [try SignedFixtureTests.credential(fixture.secrets[0])],
                                             limits: .defaults)
            try opened.vault.setValue([1], for: "written", now: 1)
            let written = try opened.seal()
            let after = try VaultHeader.parse(written, path: fixture.file).header
            #expect(after.flags == fixture.flags && after.minorVersion == fixture.minorVersion, "\(fixture.file)")
            #expect(after.keyslots.map(\.typeByte) == fixture.slots.map(\.type))
            let again = try VaultCodec.open(written, path: fixture.file, credentials: [try SignedFixtureTests.credential(fixture.secrets.last!)],
                                            limits: .defaults)
            #expect(try again.vault.value(of: "written") == [1])
        }
    }

    @Test func test_open_fixtureRefusesAnotherRSAKey() throws {
        let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent("ssh-rsa-recipients.vault")))
        let other = UnlockCredential(.sshRSAIdentity(try Self.identity(4096)), source: "--identity other")
        #expect(throws: VaultError.noKeyslotOpens(sources: ["--identity other"], unknownTypes: [])) {
            _ = try VaultCodec.open(bytes, path: "v", credentials: [other], limits: .defaults)
        }
    }

    // MARK: - Writing the set (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeFixtures_v1_4() throws {
        let folder = Self.folder
        func path(_ name: String) -> String {
            let full = folder.appendingPathComponent(name).path
            precondition(!FileManager.default.fileExists(atPath: full), "\(name) exists: released fixtures never change")
            return full
        }
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1))
        let t: Int64 = 1_764_600_000_000
        var vault = Vault()
        try vault.setValue(Array("rsa".utf8), for: "db/password", now: t)
        try vault.setField("username", value: Array("admin".utf8), for: "db/password", now: t + 1)
        try vault.setValue([0, 255, 10], for: "binary", now: t + 2)
        let rsa2048 = try Self.identity(2048), rsa4096 = try Self.identity(4096)
        let ageFile = KeyslotFixtureTests.folder.appendingPathComponent("recipient.key")
        let age = try AgeIdentityFile.parse(Array(try Data(contentsOf: ageFile)), source: "r")[0]
        let passwordSecret = Secret(kind: "password", password: Self.password14)
        let key2048 = Secret(kind: "identity", file: "v1.4/ssh-rsa-2048.key"), key4096 = Secret(kind: "identity", file: "v1.4/ssh-rsa-4096.key")
        let ageSecret = Secret(kind: "identity", file: "v1.1/recipient.key")
        var fixtures: [Manifest.Fixture] = []
        func write(_ name: String, _ bytes: [UInt8], secrets: [Secret]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
            let header = try VaultHeader.parse(bytes, path: name).header
            let reopened = try VaultCodec.open(bytes, path: name, credentials: [try SignedFixtureTests.credential(secrets[0])], limits: .defaults)
            fixtures.append(.init(file: name, secrets: secrets, minorVersion: header.minorVersion, flags: header.flags, generation: header.generation,
                                  signer: reopened.sealEvidence.map(SignedFixtureTests.signer),
                                  slots: try #require(reopened.slotMetadata).map { .init(type: $0.type, label: $0.label, keyHex: Hex.encode($0.publicKey)) },
                                  entries: FixtureTests.entries(of: reopened.vault)))
        }
        // Signed: made by the admin's password (which attests every slot), then alice's age key
        // added by the 2,048-bit ssh-rsa slot (an RSA-PSS attestation), then written by the 4,096-bit one.
        let made = try VaultCodec.create(vault, slots: [(.password(password(Self.password14), kdf), "admin"),
                                                        (.sshRSA(rsa2048.publicKey), "carol"), (.sshRSA(rsa4096.publicKey), "dave")], now: t)
        let byCarol = try VaultCodec.open(try made.seal(), path: "s", credentials: [UnlockCredential(.sshRSAIdentity(rsa2048), source: "c")],
                                          limits: .defaults)
        try byCarol.addSlot(.recipient(age.recipient), label: "alice", now: t + 3)
        let byDave = try VaultCodec.open(try byCarol.seal(), path: "s", credentials: [UnlockCredential(.sshRSAIdentity(rsa4096), source: "d")],
                                         limits: .defaults)
        try byDave.vault.setValue(Array("by dave".utf8), for: "team/note", now: t + 4)
        try write("ssh-rsa-signed.vault", try byDave.seal(), secrets: [key4096, passwordSecret, key2048, ageSecret])
        // Unsigned: recipients only (no secret at hand to sign), an ssh-rsa key and an age key.
        let recipients = try VaultCodec.create(vault, slots: [(.sshRSA(rsa2048.publicKey), "carol"), (.recipient(age.recipient), "alice")], now: t)
        try write("ssh-rsa-recipients.vault", try recipients.seal(), secrets: [key2048, ageSecret])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Manifest(formatVersion: "1.4", fixtures: fixtures)).write(to: URL(fileURLWithPath: path("manifest.json")))
    }
}
