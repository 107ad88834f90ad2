import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The golden vaults of format 1.3 (`Fixtures/v1.3/`): signed seals by a password slot, a team of
/// every slot kind, a copy with a tombstone and ancestors, and one signed through a delegation.
/// A released fixture never changes. `scripts/make-fixtures-1.3.sh` wrote the set once
/// (`VAULTFILE_WRITE_FIXTURES=1`, refusing to overwrite). Older fixtures stay unsigned when written.
@Suite struct SignedFixtureTests {
    /// A fixture's secret, as the manifests list it. (At the type's scope: a type declared inside a
    /// test function made the compiler misjudge the `try`s of the local function beside it.)
    private typealias Secret = KeyslotFixtureTests.Manifest.Secret

    struct Manifest: Codable {
        struct Signer: Codable, Equatable {
            var position: Int
            var scheme: UInt8
            var keyHex: String
        }
        struct Slot: Codable, Equatable {
            var type: UInt8
            var label: String
            var keyHex: String
        }
        struct Fixture: Codable {
            var file: String
            /// Secrets as `KeyslotFixtureTests` names them; files relative to Fixtures/.
            var secrets: [KeyslotFixtureTests.Manifest.Secret]
            var generation: UInt64
            var signer: Signer
            var slots: [Slot]
            var ancestors: Int
            var tombstones: Int
            var entries: [FixtureTests.Manifest.FixtureEntry]
        }
        var formatVersion: String
        var fixtures: [Fixture]
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("v1.3")
    static let password13 = "fixture 1.3 pässword"

    static func credential(_ secret: KeyslotFixtureTests.Manifest.Secret) throws -> UnlockCredential {
        var relative = secret
        relative.file = secret.file.map { "../" + $0 }
        return try KeyslotFixtureTests.credential(relative)
    }

    // MARK: - open

    @Test func test_open_everyFixtureMatchesItsManifestWithEachSecret() throws {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: Self.folder.appendingPathComponent("manifest.json")))
        #expect(manifest.formatVersion == "1.3" && manifest.fixtures.count == 4)
        var schemes = Set<UInt8>()
        for fixture in manifest.fixtures {
            let store = VaultStore(path: Self.folder.appendingPathComponent(fixture.file).path)
            let header = try store.readHeader().header
            #expect(header.isSigned && header.minorVersion == 3 && header.generation == fixture.generation, "\(fixture.file)")
            for secret in fixture.secrets {
                let unlocked = try store.open(credentials: [try Self.credential(secret)], limits: .defaults)
                #expect(FixtureTests.entries(of: unlocked.vault) == fixture.entries, "\(fixture.file) with \(secret.kind)")
                let evidence = try #require(unlocked.sealEvidence)
                #expect(Self.signer(evidence) == fixture.signer, "\(fixture.file)")
                #expect(evidence.slots.map { Manifest.Slot(type: $0.type, label: $0.label, keyHex: Hex.encode($0.key)) } == fixture.slots)
                #expect(evidence.record.ancestors.count == fixture.ancestors && evidence.record.tombstones.count == fixture.tombstones)
                #expect(evidence.slots.indices.allSatisfy { evidence.attestationVerifies(at: $0) }, "\(fixture.file)")
                schemes.insert(evidence.scheme.rawValue)
            }
        }
        #expect(schemes == [1, 2, 3])
    }

    static func signer(_ evidence: SealEvidence) -> Manifest.Signer {
        Manifest.Signer(position: evidence.signerPosition, scheme: evidence.scheme.rawValue, keyHex: Hex.encode(evidence.signer.bytes))
    }

    @Test func test_seal_olderFixturesStayUnsignedAfterAWrite() throws {
        let root = ProjectPaths.fixtures
        var files: [(String, UnlockCredential)] = [
            ("v1/empty-argon2id-p1.vault", UnlockCredential(.password(password("correct horse battery staple")), source: "p")),
            ("v1/entries-pbkdf2.vault", UnlockCredential(.password(password("pässwörd 🔑")), source: "p")),
            ("v1.2/history.vault", UnlockCredential(.password(password(HistoryFixtureTests.password12)), source: "p")),
            ("v1.2/history-keyslots.vault", UnlockCredential(.password(password(HistoryFixtureTests.password12)), source: "p")),
        ]
        let manifest = try JSONDecoder().decode(KeyslotFixtureTests.Manifest.self,
                                                from: Data(contentsOf: KeyslotFixtureTests.folder.appendingPathComponent("manifest.json")))
        for fixture in manifest.fixtures { files.append(("v1.1/" + fixture.file, try KeyslotFixtureTests.credential(fixture.secrets[0]))) }
        for (file, credential) in files {
            let bytes = Array(try Data(contentsOf: root.appendingPathComponent(file)))
            let before = try VaultHeader.parse(bytes, path: file).header
            let opened = try VaultCodec.open(bytes, path: file, credentials: [credential], limits: .defaults)
            #expect(opened.sealEvidence == nil, "\(file)")
            try opened.vault.setValue([1], for: "written", now: 1)
            let after = try VaultHeader.parse(try opened.seal(), path: file).header
            #expect(!after.isSigned && after.signatureBlock == nil && after.minorVersion == before.minorVersion, "\(file)")
        }
    }

    // MARK: - Writing the set (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeFixtures_v1_3() throws {
        let folder = Self.folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String {
            let full = folder.appendingPathComponent(name).path
            precondition(!FileManager.default.fileExists(atPath: full), "\(name) exists: released fixtures never change")
            return full
        }
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1))
        let t: Int64 = 1_764_500_000_000
        var vault = Vault(history: HistoryPolicy(versions: 2, byteBudget: 1024, trashLimit: 2))
        try vault.setValue(Array("signed".utf8), for: "db/password", now: t)
        try vault.setField("username", value: Array("admin".utf8), for: "db/password", now: t + 1)
        try vault.setValue([0, 255, 10], for: "binary", now: t + 2)
        let v11 = KeyslotFixtureTests.folder
        func file(_ name: String) -> String { v11.appendingPathComponent(name).path }
        let age = try AgeIdentityFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file("recipient.key")))), source: "r")[0]
        let ssh = try SSHEd25519Identity.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file("ssh-ed25519.key")))), source: "s")
        let code = "WSH3R-4EQQD-BHX03-P2BWD-CKJ27-YRDK7-SVZ2E"
        let passwordSecret = Secret(kind: "password", password: Self.password13)
        let all = [passwordSecret, Secret(kind: "identity", file: "v1.1/recipient.key"), Secret(kind: "identity", file: "v1.1/ssh-ed25519.key"),
                   Secret(kind: "keyfile", file: "v1.1/keyfile.bin"), Secret(kind: "recovery", code: code)]
        var fixtures: [Manifest.Fixture] = []
        func write(_ name: String, _ unlocked: UnlockedVault, secrets: [Secret]) throws {
            let bytes = try unlocked.seal()
            try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
            let reopened = try VaultCodec.open(bytes, path: name, credentials: [try Self.credential(secrets[0])], limits: .defaults)
            let evidence = try #require(reopened.sealEvidence)
            fixtures.append(.init(file: name, secrets: secrets, generation: evidence.generation, signer: Self.signer(evidence),
                                  slots: evidence.slots.map { .init(type: $0.type, label: $0.label, keyHex: Hex.encode($0.key)) },
                                  ancestors: evidence.record.ancestors.count, tombstones: evidence.record.tombstones.count,
                                  entries: FixtureTests.entries(of: reopened.vault)))
        }
        try write("signed-password.vault", try VaultCodec.create(vault, slots: [(.password(password(Self.password13), kdf), "admin")], now: t),
                  secrets: [passwordSecret])
        let team = try VaultCodec.create(vault, slots: [
            (.password(password(Self.password13), kdf), "admin"), (.recipient(age.recipient), "alice"), (.sshEd25519(ssh.publicKey), "bob"),
            (.keyfile(path: file("keyfile.bin")), "ci"), (.recovery(try RecoveryCode(parsing: password(code)), NewSlot.recoveryKDF), "recovery"),
        ], now: t)
        let teamBytes = try team.seal()
        // Opened by bob's ssh key (scheme 2), written once more.
        let byBob = try VaultCodec.open(teamBytes, path: "team", credentials: [UnlockCredential(.sshIdentity(ssh), source: "s")], limits: .defaults)
        try byBob.vault.setValue(Array("by bob".utf8), for: "team/note", now: t + 3)
        try write("signed-team.vault", byBob, secrets: all)
        // alice removed by the admin (a tombstone, a re-salt signed by the old key), then two writes.
        let admin = try VaultCodec.open(teamBytes, path: "team", credentials: [UnlockCredential(.password(password(Self.password13)), source: "p")],
                                        limits: .defaults)
        let (removed, _) = try admin.rotated(removing: [1], now: t + 4)
        var file3 = try removed.seal()
        for round in 0..<2 {
            let next = try VaultCodec.open(file3, path: "t", credentials: [UnlockCredential(.password(password(Self.password13)), source: "p")],
                                           limits: .defaults)
            try next.vault.setValue([UInt8(round)], for: "round", now: t + 5 + Int64(round))
            file3 = try next.seal()
        }
        let last = try VaultCodec.open(file3, path: "t", credentials: [UnlockCredential(.password(password(Self.password13)), source: "p")], limits: .defaults)
        try last.vault.setValue(Array("after removal".utf8), for: "team/note", now: t + 8)
        try write("signed-tombstone.vault", last, secrets: [all[0], all[2], all[3], all[4]])
        // Written through a delegation by the keyfile slot (scheme 3), as the agent writes.
        let byCI = try VaultCodec.open(teamBytes, path: "team", credentials: [UnlockCredential(.keyfile(path: file("keyfile.bin")), source: "k")],
                                       limits: .defaults)
        byCI.sealSigner = DelegatedTestSigner(slot: try requireSigner(byCI), expiry: 1_800_000_000)
        try byCI.vault.setValue(Array("by the agent".utf8), for: "team/note", now: t + 9)
        try write("signed-delegated.vault", byCI, secrets: all)
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Manifest(formatVersion: "1.3", fixtures: fixtures)).write(to: URL(fileURLWithPath: path("manifest.json")))
    }
}
