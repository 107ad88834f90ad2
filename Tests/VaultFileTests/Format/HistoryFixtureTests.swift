import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The golden vaults of format 1.2 (`Fixtures/v1.2/`): history, history with keyslots, and a
/// removed entry in the trash. A released fixture never changes.
///
/// `VAULTFILE_WRITE_FIXTURES=1 swift test --filter HistoryFixtureTests` writes the set once
/// (refusing to overwrite).
@Suite struct HistoryFixtureTests {
    struct Manifest: Codable {
        struct Policy: Codable, Equatable {
            var versions: Int
            var byteBudget: Int
            var trashLimit: Int
        }
        struct Version: Codable, Equatable {
            var replaced: Int64
            var created: Int64
            var modified: Int64
            var valueHex: String
            var fields: [String: String]
        }
        struct Record: Codable, Equatable {
            var name: String
            var inTrash: Bool
            var versions: [Version]
        }
        struct Fixture: Codable {
            var file: String
            var password: String
            var identityFile: String?
            var policy: Policy
            var entries: [FixtureTests.Manifest.FixtureEntry]
            var history: [Record]
        }
        var formatVersion: String
        var fixtures: [Fixture]
    }

    static let folder = ProjectPaths.fixtures.appendingPathComponent("v1.2")
    static let password12 = "fixture 1.2 pässword"

    // MARK: - open

    @Test func test_open_everyFixtureMatchesItsManifest() throws {
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: Self.folder.appendingPathComponent("manifest.json")))
        #expect(manifest.fixtures.count == 3)
        for fixture in manifest.fixtures {
            let store = VaultStore(path: Self.folder.appendingPathComponent(fixture.file).path)
            let header = try store.readHeader().header
            #expect(header.keepsHistory && header.minorVersion == 2, "\(fixture.file)")
            let unlocked = try store.open(password: password(fixture.password), limits: .defaults)
            #expect(FixtureTests.entries(of: unlocked.vault) == fixture.entries, "\(fixture.file)")
            #expect(try Self.records(of: unlocked.vault) == fixture.history, "\(fixture.file)")
            let policy = try #require(unlocked.vault.historyPolicy)
            #expect(Manifest.Policy(versions: policy.versions, byteBudget: policy.byteBudget, trashLimit: policy.trashLimit) == fixture.policy)
            if let identityFile = fixture.identityFile {
                let path = ProjectPaths.fixtures.appendingPathComponent(identityFile).path
                let age = try AgeIdentityFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)[0]
                let byKey = try store.open(credentials: [UnlockCredential(.ageIdentity(age), source: "identity")], limits: .defaults)
                #expect(header.usesKeyslots11)
                #expect(try Self.records(of: byKey.vault) == fixture.history)
            }
        }
    }

    static func records(of vault: Vault) throws -> [Manifest.Record] {
        try vault.historyState!.names().map { key in
            let name = String(decoding: key, as: UTF8.self)
            return Manifest.Record(name: name, inTrash: !vault.contains(name), versions: try vault.history(of: name).map {
                Manifest.Version(replaced: $0.replaced, created: $0.entry.created, modified: $0.entry.modified,
                                 valueHex: Hex.encode($0.entry.value), fields: $0.entry.fields.mapValues { Hex.encode($0) })
            })
        }
    }

    // MARK: - Writing the set (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeFixtures_v1_2() throws {
        let folder = Self.folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String {
            let full = folder.appendingPathComponent(name).path
            precondition(!FileManager.default.fileExists(atPath: full), "\(name) exists: released fixtures never change")
            return full
        }
        let kdf = KDFParameters.argon2id(.init(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1))
        let policy = HistoryPolicy(versions: 3, byteBudget: 64, trashLimit: 2)
        var vault = Vault(history: policy)
        let t: Int64 = 1_764_000_000_000
        try vault.setValue(Array("first".utf8), for: "db/password", now: t)
        try vault.setField("username", value: Array("admin".utf8), for: "db/password", now: t + 1)
        try vault.setValue(Array("second".utf8), for: "db/password", now: t + 2)
        try vault.setValue(Array("third".utf8), for: "db/password", now: t + 3)
        try vault.setValue(Array("fourth".utf8), for: "db/password", now: t + 4)  // 3 versions kept: the first goes
        try vault.setValue([0, 255, 10], for: "binary", now: t + 5)
        try vault.setValue([UInt8](repeating: 0x41, count: 100), for: "big", now: t + 6)
        try vault.setValue(Array("small".utf8), for: "big", now: t + 7)  // 100 bytes > the 64-byte budget: no history
        try vault.setValue(Array("v1".utf8), for: "api/token", now: t + 8)
        try vault.setValue(Array("v2".utf8), for: "api/token", now: t + 9)
        var fixtures: [Manifest.Fixture] = []
        func write(_ file: String, _ vault: Vault, recipient: Bool) throws {
            var slots: [(slot: NewSlot, label: String)] = [(.password(password(Self.password12), kdf), "admin")]
            var identityFile: String?
            if recipient {
                identityFile = "v1.1/recipient.key"
                let key = ProjectPaths.fixtures.appendingPathComponent(identityFile!).path
                let age = try AgeIdentityFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: key))), source: key)[0]
                slots.append((.recipient(age.recipient), "alice"))
            }
            let unlocked = try VaultCodec.create(vault, slots: slots, now: t, signed: false)
            try Data(try unlocked.seal()).write(to: URL(fileURLWithPath: path(file)))
            fixtures.append(.init(file: file, password: Self.password12, identityFile: identityFile,
                                  policy: .init(versions: policy.versions, byteBudget: policy.byteBudget, trashLimit: policy.trashLimit),
                                  entries: FixtureTests.entries(of: vault), history: try Self.records(of: vault)))
        }
        try write("history.vault", vault, recipient: false)
        try write("history-keyslots.vault", vault, recipient: true)
        try vault.remove("api/token", now: t + 10)
        try vault.remove("binary", now: t + 11)
        try vault.setValue(Array("x".utf8), for: "gone", now: t + 12)
        try vault.remove("gone", now: t + 13)  // the trash keeps 2: api/token, removed first, goes
        try write("history-trash.vault", vault, recipient: false)
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Manifest(formatVersion: "1.2", fixtures: fixtures)).write(to: URL(fileURLWithPath: path("manifest.json")))
    }
}
