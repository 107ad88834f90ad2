import Foundation
import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Issue 39, items 3 and 4 in the library: the generation ceiling (2^63) and jump (2^32), which no
/// copy passes to make a vault unwritable or a genuine copy older; diverged copies refused; and a
/// merge written to both copies.
@Suite struct GenerationBoundsTests {
    /// A folder with `a.vault` at generation 3, recorded in `state`.
    private struct Setup {
        let directory: TemporaryDirectory
        let seen: SeenGenerations
        var store: VaultStore { VaultStore(path: directory.path("a.vault")) }

        init() throws {
            directory = try TemporaryDirectory()
            seen = SeenGenerations(state: StateFolder(path: directory.path("state")))
            try store.create(try sampleVault(), password: password("pw"), kdf: testKDF)
            for value in ["one", "two"] { try set(store, "k", value) }
        }

        func check(allowRollback: Bool = false) -> RollbackCheck { RollbackCheck(seen: seen, allowRollback: allowRollback) }

        func set(_ store: VaultStore, _ name: String, _ value: String, rollback: RollbackCheck? = nil) throws {
            try store.update(password: password("pw"), limits: testLimits, rollback: rollback ?? check()) { unlocked in
                try unlocked.vault.setValue(Array(value.utf8), for: name)
            }
        }

        /// A copy of `a.vault` at `name`, rewritten at `generation` (`craftGeneration`).
        func craftedCopy(_ name: String, at generation: UInt64) throws -> VaultStore {
            try AtomicFileWriter().write(try store.read().bytes, to: directory.path(name), finalLink: .follow)
            try craftGeneration(ofVaultAt: directory.path(name), to: generation)
            return VaultStore(path: directory.path(name))
        }

        var vaultID: [UInt8] { get throws { try store.readHeader().header.vaultID } }
    }

    // MARK: - The bounds

    @Test func test_isPlausible_boundsTheCeilingAndTheJump() {
        let record = SeenRecord(generation: 10, headerHash: [UInt8](repeating: 1, count: 32), seen: 0, path: "/v")
        #expect(Generations.isPlausible(1 << 63, after: nil) && !Generations.isPlausible((1 << 63) + 1, after: nil))
        #expect(!Generations.isPlausible(UInt64.max, after: nil))
        #expect(Generations.isPlausible(10 + (1 << 32), after: record) && !Generations.isPlausible(11 + (1 << 32), after: record))
        #expect(Generations.isPlausible(3, after: record), "an older copy is plausible: it is only older")
        let high = SeenRecord(generation: (1 << 63) - 5, headerHash: record.headerHash, seen: 0, path: "/v")
        #expect(!Generations.isPlausible((1 << 63) + 1, after: high), "the ceiling holds whatever the record")
    }

    @Test func test_successorBase_ignoresImplausibleSidesAndARecordAtTheCeiling() {
        let record = SeenRecord(generation: 10, headerHash: [UInt8](repeating: 1, count: 32), seen: 0, path: "/v")
        #expect(Generations.successorBase(of: [7, UInt64.max], record: record) == 10)
        #expect(Generations.successorBase(of: [12, 11 + (1 << 32)], record: record) == 12)
        #expect(Generations.successorBase(of: [7, UInt64.max], record: nil) == 7)
        #expect(Generations.successorBase(of: [1 << 63], record: nil) == 0, "nothing can be sealed past the ceiling")
        let ceiling = SeenRecord(generation: 1 << 63, headerHash: record.headerHash, seen: 0, path: "/v")
        #expect(Generations.successorBase(of: [5], record: ceiling) == 5)
    }

    @Test func test_note_neverRecordsAboveTheCeilingAndReplacesARecordAtIt() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let id = try setup.vaultID
        #expect(try setup.seen.note(try sealedHeader(generation: UInt64.max, id: id), path: "/v/x") == false)
        #expect(try setup.seen.record(for: id)?.generation == 3)
        #expect(try setup.seen.note(try sealedHeader(generation: 1 << 63, id: id), path: "/v/x"))
        #expect(try setup.seen.note(try sealedHeader(generation: 4, id: id), path: "/v/y"), "a record at the ceiling cannot be passed: replaced")
        #expect(try setup.seen.record(for: id)?.generation == 4)
        #expect(try setup.seen.note(try sealedHeader(generation: 3, id: id), path: "/v/y") == false, "below the ceiling it only rises")
    }

    /// A record an earlier release wrote for a crafted copy (2^64 − 1) is not one: it makes no genuine copy older.
    @Test func test_record_aboveTheCeilingIsTreatedAsAbsent() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let id = try setup.vaultID
        let hash = String(repeating: "ab", count: 32)
        let text = "vaultfile-seen 1\ngeneration \(UInt64.max - 1)\nheader-blake2b \(hash)\nseen 100\npath /v/x\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: setup.seen.state.recordPath(SeenGenerations.recordName(id))))
        #expect(try setup.seen.record(for: id) == nil)
        try setup.set(setup.store, "k", "three")
        #expect(try setup.store.readHeader().header.generation == 4 && setup.seen.record(for: id)?.generation == 4)
    }

    // MARK: - A copy above the ceiling

    @Test func test_open_aCopyAboveTheCeilingIsAFindingAndNeverRecorded() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let crafted = try setup.craftedCopy("crafted.vault", at: UInt64.max)
        let check = setup.check()
        _ = try crafted.open(password: password("pw"), limits: testLimits, rollback: check)
        guard case .implausible(_, UInt64.max, let seen)? = check.findings.first else { Issue.record("\(check.findings)"); return }
        #expect(seen?.generation == 3)
        #expect(check.findings[0].description.contains("above 2^63") && check.findings[0].description.contains("makes no other copy older"))
        #expect(try setup.seen.record(for: try setup.vaultID)?.generation == 3)
        try setup.set(setup.store, "k", "genuine")
        #expect(try setup.store.readHeader().header.generation == 4, "the genuine copy is not older")
    }

    @Test func test_update_toAnImplausibleCopyIsRefusedUnlessAllowedThenSealsPastTheRecord() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let crafted = try setup.craftedCopy("crafted.vault", at: UInt64.max)
        let before = try crafted.read().bytes
        #expect(throws: VaultError.implausibleGeneration(path: crafted.path, generation: UInt64.max, seen: try setup.seen.record(for: try setup.vaultID))) {
            try setup.set(crafted, "k", "x")
        }
        #expect(try crafted.read().bytes == before)
        try setup.set(crafted, "k", "kept", rollback: setup.check(allowRollback: true))
        #expect(try crafted.readHeader().header.generation == 4, "its generation ignored: the record (3) plus one")
        #expect(try setup.seen.record(for: try setup.vaultID)?.generation == 4)
    }

    @Test func test_update_aJumpOfMoreThan2To32IsImplausibleAndOneOfExactly2To32IsNot() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let far = try setup.craftedCopy("far.vault", at: 3 + (1 << 32) + 1)
        #expect(throws: VaultError.self) { try setup.set(far, "k", "x") }
        #expect(try setup.seen.record(for: try setup.vaultID)?.generation == 3)
        let near = try setup.craftedCopy("near.vault", at: 3 + (1 << 32))
        try setup.set(near, "k", "x")
        #expect(try setup.seen.record(for: try setup.vaultID)?.generation == 4 + (1 << 32))
    }

    /// Exactly at the ceiling: plausible, but no seal can follow it; `--allow-rollback` ignores its generation.
    @Test func test_update_aCopyAtTheCeilingFailsClearlyAndAllowRollbackRestartsIt() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let top = try setup.craftedCopy("top.vault", at: 1 << 63)
        let before = try top.read().bytes
        #expect(throws: VaultError.implausibleGeneration(path: top.path, generation: 1 << 63, seen: try setup.seen.record(for: try setup.vaultID)),
                "a jump of more than 2^32 past the record (3)") { try setup.set(top, "k", "x") }
        // A machine whose first open it is.
        let fresh = SeenGenerations(state: StateFolder(path: setup.directory.path("fresh")))
        #expect(throws: VaultError.generationCeiling(generation: 1 << 63)) { try setup.set(top, "k", "x", rollback: RollbackCheck(seen: fresh)) }
        #expect(try top.read().bytes == before)
        #expect(try fresh.record(for: try setup.vaultID)?.generation == 1 << 63, "a first open within the bounds records it")
        try setup.set(top, "k", "x", rollback: RollbackCheck(seen: fresh, allowRollback: true))
        #expect(try top.readHeader().header.generation == 1, "the record at the ceiling is ignored too")
        #expect(try fresh.record(for: try setup.vaultID)?.generation == 1, "and replaced")
        try setup.set(top, "k", "y", rollback: RollbackCheck(seen: fresh))
        #expect(try top.readHeader().header.generation == 2)
    }

    // MARK: - Diverged copies

    @Test func test_update_toADivergedCopyIsRefusedAndAllowRollbackKeepsIt() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let stick = VaultStore(path: setup.directory.path("stick.vault"))
        try AtomicFileWriter().write(try setup.store.read().bytes, to: stick.path, finalLink: .follow)
        // Another machine (no record here) writes the stick; this machine writes its own copy: both at 4.
        try stick.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "there") }
        try setup.set(setup.store, "here", "1")
        let before = try stick.read().bytes
        do {
            try setup.set(stick, "k", "x")
            Issue.record("a write to a diverged copy went through")
        } catch let error as VaultError {
            guard case .divergedCopy(let path, 4, let other) = error else { Issue.record("\(error)"); return }
            #expect(path == stick.path && other.path == setup.store.path && error.category == .stale)
        }
        #expect(try stick.read().bytes == before)
        try setup.set(stick, "k", "x", rollback: setup.check(allowRollback: true))
        #expect(try stick.readHeader().header.generation == 5)
        #expect(throws: VaultError.self, "the other copy is now the older one") { try setup.set(setup.store, "k", "y") }
    }

    // MARK: - Merges

    @Test func test_mergeCopy_ignoresAnImplausibleSideAndWritesBothCopiesByteIdentical() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let crafted = try setup.craftedCopy("crafted.vault", at: UInt64.max)
        let check = setup.check()
        let result = try setup.store.mergeCopy(theirs: crafted.path, with: .password(password("pw"), limits: testLimits), rollback: check,
                                               writingBoth: true)
        #expect(result.generation == 4, "past ours (3) and the record (3); theirs (2^64 - 1) left out")
        #expect(try setup.store.read().bytes == crafted.read().bytes)
        #expect(try setup.seen.record(for: try setup.vaultID)?.generation == 4)
        #expect(try crafted.open(password: password("pw"), limits: testLimits, rollback: setup.check()).header.generation == 4)
        try setup.set(crafted, "k", "after")
        #expect(try crafted.readHeader().header.generation == 5)
    }

    @Test func test_mergeFiles_ignoresASideAboveTheCeiling() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let base = try setup.craftedCopy("base.vault", at: 3)
        let crafted = try setup.craftedCopy("crafted.vault", at: UInt64.max)
        _ = try VaultStore.mergeFiles(base: base.path, ours: setup.store.path, theirs: crafted.path, password: password("pw"), limits: testLimits)
        #expect(try setup.store.readHeader().header.generation == 4)
    }
}

/// Rewrites the vault at `path` as a seal at `generation` would have left it, past the ceiling
/// when asked: what an earlier release, or anyone who holds the key, can write.
func craftGeneration(ofVaultAt path: String, to generation: UInt64, pass: String = "pw") throws {
    let store = VaultStore(path: path)
    let unlocked = try store.open(password: password(pass), limits: testLimits)
    var header = unlocked.header
    header.generation = generation
    if header.usesKeyslots11 {
        header.metadata = try MetadataBlock.sealChecked(unlocked.slotMetadata ?? [], for: header, fileKey: unlocked.fileKey)
    }
    header.mac = VaultCodec.headerMAC(header, fileKey: unlocked.fileKey)
    let bytes = try store.read().bytes
    let length = try VaultHeader.parse(bytes, path: path).length
    try AtomicFileWriter().write(header.encoded() + bytes[length...], to: path, finalLink: .follow)
}
