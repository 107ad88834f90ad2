import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Entry history (format 1.2, docs/FORMAT.md §7.1): what edits keep, the policy, the trash, the
/// format bit that follows it, and that old vaults keep their format until asked.
@Suite struct HistoryTests {
    static let t: Int64 = 1_764_000_000_000

    func reopen(_ unlocked: UnlockedVault) throws -> UnlockedVault {
        try VaultCodec.open(try unlocked.seal(), path: "v", password: password("pw"), limits: testLimits)
    }

    // MARK: - recordHistory (set, field changes, put, remove)

    @Test func test_setValue_keepsThePreviousValueAndFieldsNewestFirst() throws {
        var vault = Vault(history: .standard)
        try vault.setValue(Array("a".utf8), for: "x", now: Self.t)
        try vault.setField("user", value: Array("u".utf8), for: "x", now: Self.t + 1)
        try vault.setValue(Array("b".utf8), for: "x", now: Self.t + 2)
        let versions = try vault.history(of: "x")
        #expect(versions.map(\.replaced) == [Self.t + 2, Self.t + 1])
        #expect(versions[0].entry.value == Array("a".utf8) && versions[0].entry.fields == ["user": Array("u".utf8)])
        #expect(versions[1].entry.fields.isEmpty)
        try vault.setValue(Array("b".utf8), for: "x", now: Self.t + 3)  // unchanged: nothing recorded
        #expect(try vault.history(of: "x").count == 2)
    }

    @Test func test_put_recordsOnlyAReplacementThatDiffers() throws {
        var vault = Vault(history: .standard)
        try vault.put(Entry(value: [1], created: 1, modified: 1), as: "x", now: 5)
        try vault.put(Entry(value: [1], created: 1, modified: 9), as: "x", now: 6)
        #expect(try vault.history(of: "x").isEmpty)
        try vault.put(Entry(value: [2], created: 1, modified: 9), as: "x", now: 7)
        #expect(try vault.history(of: "x").map(\.entry.value) == [[1]])
    }

    @Test func test_history_survivesSealAndOpen() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([2], for: "x", now: 2)
        let opened = try reopen(try VaultCodec.create(vault, password: password("pw"), kdf: testKDF))
        #expect(opened.header.keepsHistory && opened.header.minorVersion == 2)
        #expect(opened.vault == vault)
        #expect(try opened.vault.history(of: "x").map(\.entry.value) == [[1]])
        // An edit after opening copies the untouched records and adds the new version.
        try opened.vault.setValue([3], for: "x", now: 3)
        try opened.vault.setValue([9], for: "y", now: 3)
        let again = try reopen(opened)
        #expect(try again.vault.history(of: "x").map(\.entry.value) == [[2], [1]])
        #expect(try again.vault.history(of: "y").isEmpty)
    }

    @Test func test_history_failsWhenTheVaultKeepsNone() throws {
        #expect(throws: VaultError.historyOff) { try Vault().history(of: "x") }
    }

    @Test func test_version_namesTheRevisionsKept() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([2], for: "x", now: 2)
        #expect(try vault.version(of: "x", revision: 1).entry.value == [1])
        #expect(throws: VaultError.revisionNotFound(entry: "x", revision: 2, available: 1)) { try vault.version(of: "x", revision: 2) }
        #expect(throws: VaultError.entryNotFound("nope")) { try vault.version(of: "nope", revision: 1) }
    }

    // MARK: - HistoryPolicy.trimmed

    @Test func test_trimmed_dropsTheOldestBeyondTheCountAndTheBudget() throws {
        var vault = Vault(history: HistoryPolicy(versions: 3, byteBudget: 10, trashLimit: 5))
        for value in 1...6 { try vault.setValue([UInt8](repeating: UInt8(value), count: 3), for: "x", now: Int64(value)) }
        #expect(try vault.history(of: "x").map { $0.entry.value[0] } == [5, 4, 3])
        try vault.setValue([UInt8](repeating: 7, count: 4), for: "x", now: 7)
        try vault.setValue([8], for: "x", now: 8)
        // 4 + 3 + 3 = 10 bytes fit; the next 3 would not.
        #expect(try vault.history(of: "x").map { $0.entry.value[0] } == [7, 6, 5])
    }

    @Test func test_trimmed_aVersionOverTheBudgetKeepsNone() throws {
        var vault = Vault(history: HistoryPolicy(versions: 10, byteBudget: 10, trashLimit: 5))
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([UInt8](repeating: 2, count: 11), for: "x", now: 2)
        try vault.setValue([3], for: "x", now: 3)
        #expect(try vault.history(of: "x").isEmpty, "the 11-byte version does not fit, and the older one goes with it")
    }

    // MARK: - restore, prune

    @Test func test_restore_bringsBackAVersionAndKeepsTheCurrentOne() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setField("f", value: [7], for: "x", now: 2)
        try vault.setValue([2], for: "x", now: 3)
        try vault.restore("x", revision: 2, now: 4)
        #expect(vault.entry("x")?.value == [1] && vault.entry("x")?.fields.isEmpty == true)
        #expect(try vault.history(of: "x")[0].entry.value == [2])
    }

    @Test func test_pruneHistory_dropsEveryVersionAndTheTrash() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([2], for: "x", now: 2)
        try vault.setValue([1], for: "gone", now: 2)
        try vault.remove("gone", now: 3)
        #expect(try vault.pruneHistory() == 2)
        #expect(try vault.history(of: "x").isEmpty && vault.trash().isEmpty && vault.keepsHistory)
    }

    // MARK: - The trash

    @Test func test_remove_keepsTheEntryInABoundedTrash() throws {
        var vault = Vault(history: HistoryPolicy(versions: 10, byteBudget: 100, trashLimit: 2))
        for (index, name) in ["a", "b", "c"].enumerated() {
            try vault.setValue([UInt8(index)], for: name, now: 1)
            try vault.remove(name, now: Int64(10 + index))
        }
        #expect(try vault.trash().map(\.name) == ["c", "b"])
        try vault.trimTrashIfNeeded()  // as every seal does: "a", removed first, goes
        try vault.restore("b", revision: 1, now: 20)
        #expect(vault.entry("b")?.value == [1])
        #expect(try vault.history(of: "b").isEmpty, "the restored version left the history")
        #expect(try vault.trash().map(\.name) == ["c"])
    }

    @Test func test_moveFolder_movesHistoryWithTheEntries() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "a/x", now: 1)
        try vault.setValue([2], for: "a/x", now: 2)
        try vault.moveFolder("a/", to: "b/", overwrite: false)
        #expect(try vault.history(of: "b/x").map(\.entry.value) == [[1]])
        #expect(try vault.trash().isEmpty)
        try vault.rename("b/x", to: "c")
        #expect(try vault.history(of: "c").map(\.entry.value) == [[1]])
    }

    // MARK: - The format bit follows a request, never an ordinary write

    @Test func test_seal_anOldVaultKeepsItsFormatThroughOrdinaryWrites() throws {
        for version in ["v1"] {
            let manifest = try FixtureTests.Manifest.load(version)
            let fixture = manifest.fixtures[0]
            let bytes = Array(try Data(contentsOf: FixtureTests.Manifest.folder(version).appendingPathComponent(fixture.file)))
            let unlocked = try VaultCodec.open(bytes, path: "f", password: password(fixture.password), limits: .defaults)
            try unlocked.vault.setValue([1], for: "new", now: 1)
            try unlocked.vault.setValue([2], for: "new", now: 2)
            let resealed = try VaultCodec.open(try unlocked.seal(), path: "f", password: password(fixture.password), limits: .defaults)
            #expect(!resealed.header.keepsHistory && resealed.header.minorVersion == 0 && !resealed.vault.keepsHistory)
        }
    }

    @Test func test_enableHistory_upgradesAndDisableGoesBack() throws {
        let created = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let opened = try reopen(created)
        #expect(opened.header.minorVersion == 0 && !opened.header.keepsHistory)
        try opened.vault.enableHistory(.standard)
        try opened.vault.setValue([9], for: "db/password", now: 5)
        let upgraded = try reopen(opened)
        #expect(upgraded.header.keepsHistory && upgraded.header.minorVersion == 2)
        #expect(try upgraded.vault.history(of: "db/password").count == 1)
        upgraded.vault.disableHistory()
        let back = try reopen(upgraded)
        #expect(!back.header.keepsHistory && back.header.minorVersion == 0 && !back.vault.keepsHistory)
        #expect(back.vault.entry("db/password")?.value == [9])
    }

    @Test func test_changePassword_keepsHistory() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([2], for: "x", now: 2)
        let rotated = try VaultCodec.create(vault, password: password("pw"), kdf: testKDF).changePassword(to: password("pw"), kdf: testKDF)
        let opened = try reopen(rotated)
        #expect(opened.header.keepsHistory)
        #expect(try opened.vault.history(of: "x").count == 1)
    }

    // MARK: - Reading: the bit, the content version, the lazily checked section

    @Test func test_parse_historyBitBelowMinor2IsUnsupported() throws {
        let created = try VaultCodec.create(Vault(history: .standard), password: password("pw"), kdf: testKDF)
        var bytes = try created.seal()
        #expect(bytes[9] == 2 && bytes[37] == 4)
        bytes[9] = 1
        let length = Int(bytes[10]) | Int(bytes[11]) << 8
        bytes.replaceSubrange(length - 32..<length, with: Checksum.blake2b256(bytes[0..<length - 32]))
        #expect(throws: VaultError.unsupportedFeature("header flags 0x4")) { try VaultHeader.parse(bytes, path: "v") }
    }

    @Test func test_decode_contentVersionMustMatchTheBit() throws {
        let v2 = try EntryCodec.encode(Vault(history: .standard))
        #expect(v2.prefix(8) == [2, 10, 0, 0, 16, 0, 100, 0])
        #expect(throws: VaultError.contentsDamaged("content encoding version 2 is unknown")) { try EntryCodec.decode(v2) }
        let v1 = try EntryCodec.encode(Vault())
        #expect(throws: VaultError.contentsDamaged("content encoding version 1 in a vault that keeps history (expected 2)")) {
            try EntryCodec.decode(v1, history: true)
        }
        var badPolicy = v2
        badPolicy[1] = 0
        #expect(throws: VaultError.self) { try EntryCodec.decode(badPolicy, history: true) }
    }

    @Test func test_decode_leavesTheHistorySectionUnreadUntilAsked() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "x", now: 1)
        try vault.setValue([2], for: "x", now: 2)
        var broken = try EntryCodec.encode(vault)
        broken[broken.count - 1] ^= 0xFF  // inside the last version's value length… or value: either way the section no longer parses
        broken.append(0)
        var decoded = try EntryCodec.decode(broken, history: true)
        #expect(try decoded.value(of: "x") == [2], "get reads the entries only")
        #expect(throws: VaultError.self) { try decoded.checkHistory() }
        #expect(throws: VaultError.self) { try decoded.setValue([3], for: "x", now: 3) }
    }

    @Test func test_decode_rejectsANonCanonicalHistorySection() throws {
        var vault = Vault(history: .standard)
        try vault.setValue([1], for: "b", now: 1)
        try vault.setValue([2], for: "b", now: 2)
        try vault.setValue([1], for: "a", now: 1)
        try vault.setValue([2], for: "a", now: 2)
        let good = try EntryCodec.encode(vault)
        _ = try Vault(decodingHistoryContent: good)
        // Swap the two records' names (a ↔ b): out of order.
        var swapped = good
        let names = swapped.indices.filter { swapped[$0] == UInt8(ascii: "a") || swapped[$0] == UInt8(ascii: "b") }.suffix(2)
        swapped[names.first!] = UInt8(ascii: "b")
        swapped[names.last!] = UInt8(ascii: "a")
        #expect(throws: VaultError.contentsDamaged("history record 1 is out of order or duplicated")) { try Vault(decodingHistoryContent: swapped) }
        #expect(throws: VaultError.self) { try Vault(decodingHistoryContent: good + [0]) }
    }

    // MARK: - Merge

    @Test func test_merge_keepsBothSidesHistories() throws {
        var base = Vault(history: .standard)
        try base.setValue([1], for: "x", now: 1)
        try base.setValue([1], for: "y", now: 1)
        var ours = base, theirs = base
        try ours.setValue([2], for: "x", now: 2)
        try theirs.setValue([3], for: "y", now: 3)
        let merged = try VaultMerge.merge(base: base, ours: ours, theirs: theirs).vault
        #expect(try merged.history(of: "x").map(\.entry.value) == [[1]])
        #expect(try merged.history(of: "y").map(\.entry.value) == [[1]])
        var plain = Vault()
        try plain.setValue([1], for: "x", now: 1)
        #expect(try VaultMerge.merge(ours: plain, theirs: ours).vault.keepsHistory, "a merge never drops history by itself")
        #expect(try !VaultMerge.merge(base: plain, ours: plain, theirs: plain).vault.keepsHistory)
    }
}
