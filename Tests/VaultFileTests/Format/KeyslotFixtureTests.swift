import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The golden vaults of format 1.1 (`Fixtures/v1.1/`): one per slot kind, and one with every
/// kind, each with the secrets that open it. A released fixture never changes.
///
/// `VAULTFILE_WRITE_FIXTURES=1 swift test --filter KeyslotFixtureTests` writes the set once
/// (refusing to overwrite), with keys from the real age-keygen and ssh-keygen.
@Suite struct KeyslotFixtureTests {
    struct Manifest: Codable {
        struct Secret: Codable {
            /// `password`, `identity` (an age identity file or OpenSSH key, `file`), `keyfile` (`file`) or `recovery`.
            var kind: String
            var password: String?
            var file: String?
            var code: String?
        }
        struct Slot: Codable, Equatable {
            var kind: String
            var label: String
            var kdf: String?
            var recipient: String?
        }
        struct Fixture: Codable {
            var file: String
            var secrets: [Secret]
            var slots: [Slot]
            var entries: [FixtureTests.Manifest.FixtureEntry]
        }
        var formatVersion: String
        var fixtures: [Fixture]
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("v1.1")

    // MARK: - open

    @Test func test_open_everyFixtureOpensWithEachOfItsSecrets() throws {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: Self.folder.appendingPathComponent("manifest.json")))
        #expect(manifest.fixtures.count >= 6)
        var kindsSeen = Set<String>()
        for fixture in manifest.fixtures {
            let store = VaultStore(path: Self.folder.appendingPathComponent(fixture.file).path)
            let header = try store.readHeader().header
            #expect(header.usesKeyslots11 && header.minorVersion == 1, "\(fixture.file)")
            for secret in fixture.secrets {
                let unlocked = try store.open(credentials: [try Self.credential(secret)], limits: .defaults)
                #expect(FixtureTests.entries(of: unlocked.vault) == fixture.entries, "\(fixture.file) with \(secret.kind)")
                let slots = unlocked.slots.map { Manifest.Slot(kind: $0.kind, label: $0.label, kdf: $0.kdf?.description, recipient: $0.recipient) }
                #expect(slots == fixture.slots, "\(fixture.file)")
                kindsSeen.formUnion(slots.map(\.kind))
            }
            // And nothing else opens it.
            #expect(throws: VaultError.self) { _ = try store.open(credentials: [UnlockCredential(.ageIdentity(.generate()), source: "x")], limits: .defaults) }
        }
        #expect(kindsSeen.isSuperset(of: ["password", "password (v1)", "recipient", "ssh-ed25519", "keyfile", "recovery"]))
    }

    static func credential(_ secret: Manifest.Secret) throws -> UnlockCredential {
        let path = secret.file.map { folder.appendingPathComponent($0).path }
        switch secret.kind {
        case "password": return UnlockCredential(.password(password(secret.password!)), source: "password")
        case "keyfile": return UnlockCredential(.keyfile(path: path!), source: "keyfile")
        case "recovery": return UnlockCredential(.recovery(try RecoveryCode(parsing: password(secret.code!))), source: "recovery")
        default:
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path!)))
            if SSHRSAIdentity.holdsRSAKey(bytes) {
                return UnlockCredential(.sshRSAIdentity(try SSHRSAIdentity.parse(bytes, source: path!)), source: "identity")
            }
            if SSHEd25519Identity.looksLikeOpenSSHKey(bytes) {
                return UnlockCredential(.sshIdentity(try SSHEd25519Identity.parse(bytes, source: path!)), source: "identity")
            }
            return UnlockCredential(.ageIdentity(try AgeIdentityFile.parse(bytes, source: path!)[0]), source: "identity")
        }
    }

    // MARK: - Writing the set (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeFixtures_v1_1() throws {
        let folder = Self.folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String {
            let full = folder.appendingPathComponent(name).path
            precondition(!FileManager.default.fileExists(atPath: full), "\(name) exists: released fixtures never change")
            return full
        }
        try AgeTool.run(AgeTool.keygen, ["-o", path("recipient.key")])
        try AgeTool.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "fixture@vaultfile", "-f", path("ssh-ed25519.key")])
        try Data(Keyfile.generate()).write(to: URL(fileURLWithPath: path("keyfile.bin")))
        let age = try AgeIdentityFile.parse(Array(try Data(contentsOf: folder.appendingPathComponent("recipient.key"))), source: "")[0]
        let ssh = try SSHEd25519Identity.parse(Array(try Data(contentsOf: folder.appendingPathComponent("ssh-ed25519.key"))), source: "")
        let code = RecoveryCode.generate()
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1))
        let keyfilePath = folder.appendingPathComponent("keyfile.bin").path
        let now: Int64 = 1_764_000_000_000
        let secrets: [String: Manifest.Secret] = [
            "password": .init(kind: "password", password: "fixture 1.1 pässword"),
            "recipient": .init(kind: "identity", file: "recipient.key"),
            "ssh": .init(kind: "identity", file: "ssh-ed25519.key"),
            "keyfile": .init(kind: "keyfile", file: "keyfile.bin"),
            "recovery": .init(kind: "recovery", code: code.formatted()),
        ]
        let slotsOf: [String: (NewSlot, String)] = [
            "password": (.password(password("fixture 1.1 pässword"), kdf), "admin"),
            "recipient": (.recipient(age.recipient), "alice"),
            "ssh": (.sshEd25519(ssh.publicKey), "bob's laptop"),
            "keyfile": (.keyfile(path: keyfilePath), "CI"),
            "recovery": (.recovery(code, NewSlot.recoveryKDF), "paper in the safe"),
        ]
        let sets: [(String, [String])] = [
            ("password.vault", ["password"]), ("recipient.vault", ["recipient"]), ("ssh-ed25519.vault", ["ssh"]),
            ("keyfile.vault", ["keyfile"]), ("recovery.vault", ["recovery"]),
            ("team.vault", ["password", "recipient", "ssh", "keyfile", "recovery"]),
        ]
        var fixtures: [Manifest.Fixture] = []
        let vault = try sampleVault()
        for (file, kinds) in sets {
            let unlocked = try VaultCodec.create(vault, slots: kinds.map { (slotsOf[$0]!.0, slotsOf[$0]!.1) }, now: now, signed: false)
            try Data(try unlocked.seal()).write(to: URL(fileURLWithPath: path(file)))
            fixtures.append(.init(file: file, secrets: kinds.map { secrets[$0]! }, slots: Self.slots(unlocked), entries: FixtureTests.entries(of: vault)))
        }
        // A 1.0 vault that got a recipient: its v1 password slot became a 1.1 one. And a 1.1 vault that
        // still holds a v1 password slot that did not open it (so a rotation needs --drop-slot).
        let old = try VaultCodec.create(vault, password: password("fixture 1.0 password"), kdf: kdf)
        let reopened = try VaultCodec.open(try old.seal(), path: "", password: password("fixture 1.0 password"), limits: .defaults)
        try reopened.addSlot(.recipient(age.recipient), label: "alice", now: now)
        try Data(try reopened.seal()).write(to: URL(fileURLWithPath: path("upgraded-from-1.0.vault")))
        fixtures.append(.init(file: "upgraded-from-1.0.vault", secrets: [.init(kind: "password", password: "fixture 1.0 password"), secrets["recipient"]!],
                              slots: Self.slots(reopened), entries: FixtureTests.entries(of: vault)))
        let mixed = try VaultCodec.create(vault, password: password("fixture 1.0 password"), kdf: kdf)
        let byAge = try VaultCodec.open(try mixed.seal(), path: "", password: password("fixture 1.0 password"), limits: .defaults)
        byAge.openedSlot = nil  // added as if by a recipient: the v1 slot stays v1
        try byAge.addSlot(.recipient(age.recipient), label: "alice", now: now)
        try Data(try byAge.seal()).write(to: URL(fileURLWithPath: path("v1-slot-kept.vault")))
        fixtures.append(.init(file: "v1-slot-kept.vault", secrets: [.init(kind: "password", password: "fixture 1.0 password"), secrets["recipient"]!],
                              slots: Self.slots(byAge), entries: FixtureTests.entries(of: vault)))
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Manifest(formatVersion: "1.1", fixtures: fixtures)).write(to: URL(fileURLWithPath: path("manifest.json")))
    }

    static func slots(_ unlocked: UnlockedVault) -> [Manifest.Slot] {
        unlocked.slots.map { Manifest.Slot(kind: $0.kind, label: $0.label, kdf: $0.kdf?.description, recipient: $0.recipient) }
    }
}
