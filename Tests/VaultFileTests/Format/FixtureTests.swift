import Foundation
import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// Golden vaults of every released format version: each must open, with the contents its manifest lists.
///
/// A released fixture never changes. `VAULTFILE_WRITE_FIXTURES=1 swift test --filter FixtureTests`
/// writes the v1 set once (it refuses to overwrite existing files).
@Suite struct FixtureTests {
    /// `Fixtures/<version>/manifest.json`, shared with the other test targets.
    typealias Manifest = FixtureManifest

    static let versions = ["v1"]

    // MARK: - open

    @Test(arguments: versions)
    func test_open_everyFixtureMatchesItsManifest(version: String) throws {
        let folder = Manifest.folder(version)
        let manifest = try Manifest.load(version)
        #expect(manifest.fixtures.count >= 4)
        var opened = 0
        for fixture in manifest.fixtures {
            let store = VaultStore(path: folder.appendingPathComponent(fixture.file).path)
            let unlocked = try store.open(password: password(fixture.password), limits: .defaults)
            #expect(unlocked.passwordKDF?.description == fixture.kdf, "\(fixture.file)")
            #expect(Self.entries(of: unlocked.vault) == fixture.entries, "\(fixture.file)")
            #expect(openError(try store.read().bytes, pass: fixture.password + "x") as? VaultError == .wrongPassword)
            opened += 1
        }
        #expect(opened == manifest.fixtures.count)
    }

    // MARK: - Writing the set (once, by hand)

    @Test(.enabled(if: ProcessInfo.processInfo.environment["VAULTFILE_WRITE_FIXTURES"] == "1"))
    func test_writeFixtures_v1() throws {
        let folder = ProjectPaths.fixtures.appendingPathComponent("v1")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var multichunk = Vault()
        var generator = SplitMix(seed: 42)
        try multichunk.setValue((0..<(200 * 1024)).map { _ in generator.nextByte() }, for: "files/archive.bin", now: 1_763_800_000_000)
        try multichunk.setField("notes", value: Array("200 KiB of seeded bytes: four payload chunks".utf8), for: "files/archive.bin", now: 1_763_800_000_001)
        let sets: [(String, String, KDFParameters, Vault)] = [
            ("empty-argon2id-p1.vault", "correct horse battery staple", .argon2id(.init(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1)), Vault()),
            ("entries-argon2id-default.vault", "fixture-password-1", .defaults, try sampleVault()),
            ("entries-pbkdf2.vault", "pässwörd 🔑", .pbkdf2SHA256(.defaults), try sampleVault()),
            ("binary-multichunk-argon2id-p2.vault", "chunks", .argon2id(.init(memoryKiB: 8 * 1024, iterations: 1, parallelism: 2)), multichunk),
        ]
        var fixtures: [Manifest.Fixture] = []
        for (file, pass, kdf, vault) in sets {
            let store = VaultStore(path: folder.appendingPathComponent(file).path)
            try store.create(vault, password: password(pass), kdf: kdf)
            fixtures.append(.init(file: file, password: pass, kdf: kdf.description, entries: Self.entries(of: vault)))
        }
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasSuffix(".lock") {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Manifest(formatVersion: "1.0", fixtures: fixtures)).write(to: folder.appendingPathComponent("manifest.json"))
    }

    static func entries(of vault: Vault) -> [Manifest.FixtureEntry] {
        vault.sortedEntries.map { name, entry in
            let large = entry.value.count > 1024
            var generator = SplitMix(seed: 42)
            // Large fixture values come from SplitMix(42); any other large value reads as seed 0, a mismatch.
            let fromSeed = large && entry.value == (0..<entry.value.count).map { _ in generator.nextByte() }
            return .init(name: name, valueHex: large ? nil : Hex.encode(entry.value),
                         valueLength: large ? entry.value.count : nil, valueSplitMixSeed: large ? (fromSeed ? 42 : 0) : nil,
                         fields: entry.fields.mapValues { Hex.encode($0) }, created: entry.created, modified: entry.modified)
        }
    }
}
