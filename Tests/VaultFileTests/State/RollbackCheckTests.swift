#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The rollback check through `VaultStore`: older copies read with a finding, written never
/// (unless allowed), the record raised after the rename; and what a merge of copies seals.
@Suite struct RollbackCheckTests {
    /// A folder with a vault `a.vault` at generation 3, recorded, and `old.vault`, its copy at generation 2.
    private struct Setup {
        let directory: TemporaryDirectory
        let seen: SeenGenerations
        var store: VaultStore { VaultStore(path: directory.path("a.vault")) }
        var old: VaultStore { VaultStore(path: directory.path("old.vault")) }

        init() throws {
            directory = try TemporaryDirectory()
            seen = SeenGenerations(state: StateFolder(path: directory.path("state")))
            let store = VaultStore(path: directory.path("a.vault"))
            try store.create(try sampleVault(), password: password("pw"), kdf: testKDF)
            try set(store, "k", "one")
            try AtomicFileWriter().write(try store.read().bytes, to: directory.path("old.vault"), finalLink: .follow)
            try set(store, "k", "two")
        }

        func check(allowRollback: Bool = false) -> RollbackCheck { RollbackCheck(seen: seen, allowRollback: allowRollback) }

        func set(_ store: VaultStore, _ name: String, _ value: String, rollback: RollbackCheck? = nil) throws {
            try store.update(password: password("pw"), limits: testLimits, rollback: rollback ?? check()) { unlocked in
                try unlocked.vault.setValue(Array(value.utf8), for: name)
            }
        }
    }

    // MARK: - open

    @Test func test_open_recordsANewerCopyAndFindsNothing() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let record = try #require(try setup.seen.record(for: try setup.store.readHeader().header.vaultID))
        #expect(record.generation == 3 && record.path == setup.directory.path("a.vault"))
        let check = setup.check()
        _ = try setup.store.open(password: password("pw"), limits: testLimits, rollback: check)
        #expect(check.findings.isEmpty && check.problem == nil)
    }

    @Test func test_open_anOlderCopyIsReadWithAFinding() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let check = setup.check()
        let unlocked = try setup.old.open(password: password("pw"), limits: testLimits, rollback: check)
        #expect(unlocked.vault.entry("k")?.value == Array("one".utf8))
        guard case .olderCopy(let path, 2, let newer)? = check.findings.first else { Issue.record("\(check.findings)"); return }
        #expect(path == setup.directory.path("old.vault") && newer.generation == 3)
        #expect(check.findings[0].description.contains("is an older copy: generation 2, but generation 3"))
        #expect(try setup.seen.record(for: unlocked.header.vaultID)?.generation == 3, "an older copy never lowers the record")
    }

    // MARK: - update

    @Test func test_update_refusesAWriteToAnOlderCopyAndLeavesItByteIdentical() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let before = try setup.old.read().bytes
        let check = setup.check()
        #expect(throws: VaultError.self) { try setup.set(setup.old, "k", "fork", rollback: check) }
        do {
            try setup.set(setup.old, "k", "fork", rollback: setup.check())
        } catch let error as VaultError {
            guard case .staleCopy(_, 2, let newer) = error else { Issue.record("\(error)"); return }
            #expect(newer.generation == 3 && error.category == .stale)
        }
        #expect(try setup.old.read().bytes == before)
        #expect(check.findings.isEmpty, "the error says it; no warning beside it")
        // A command that changes nothing writes nothing, and so is not refused.
        try setup.old.update(password: password("pw"), limits: testLimits, rollback: setup.check()) { _ in }
    }

    @Test func test_update_allowRollbackSealsPastTheRecordOnce() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        try setup.set(setup.old, "k", "restored", rollback: setup.check(allowRollback: true))
        #expect(try setup.old.readHeader().header.generation == 4, "recorded 3, plus one")
        try setup.set(setup.old, "k", "again")
        #expect(try setup.old.readHeader().header.generation == 5)
        #expect(throws: VaultError.self, "the copy that was newest is now the older one") { try setup.set(setup.store, "k", "x") }
    }

    @Test func test_update_divergedCopiesAreAFindingAndTheWriteGoesOn() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        // Another machine wrote the old copy (no record there): now generation 3, like a.vault, with other contents.
        try setup.old.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "other") }
        let check = setup.check()
        _ = try setup.old.open(password: password("pw"), limits: testLimits, rollback: check)
        guard case .diverged(_, 3, let other)? = check.findings.first else { Issue.record("\(check.findings)"); return }
        #expect(other.path == setup.directory.path("a.vault"))
    }

    /// The record rises after the rename, never before: a kill in between leaves the file newer than the record, not older.
    @Test func test_update_recordsTheNewGenerationOnlyAfterTheRename() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        let id = try setup.store.readHeader().header.vaultID
        let seen = setup.seen
        let observed = Observed()
        var system = SystemCalls.live
        system.rename = { from, to in
            observed.generation = (try? seen.record(for: id))?.generation
            return Glibc.rename(from, to)
        }
        try setup.set(VaultStore(path: setup.directory.path("a.vault"), system: system), "k", "three")
        #expect(observed.generation == 3, "at the rename the record still says 3")
        #expect(try seen.record(for: id)?.generation == 4)
        // A rename that fails leaves the file and the record as they were.
        system.rename = { _, _ in errno = EIO; return -1 }
        #expect(throws: VaultError.self) { try setup.set(VaultStore(path: setup.directory.path("a.vault"), system: system), "k", "four") }
        #expect(try seen.record(for: id)?.generation == 4 && setup.store.readHeader().header.generation == 4)
    }

    @Test func test_update_aStateFolderThatFailsIsAProblemNotAFailure() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        _ = FileManager.default.createFile(atPath: setup.directory.path("file"), contents: Data())
        let check = RollbackCheck(seen: SeenGenerations(state: StateFolder(path: setup.directory.path("file/state"))))
        try setup.set(setup.store, "k", "fine", rollback: check)
        #expect(check.problem?.folder == setup.directory.path("file/state"))
        #expect(try setup.store.readHeader().header.generation == 4)
    }

    // MARK: - seal

    /// Issue 39: the ceiling is 2^63, not 2^64 − 1 (before, a seal reached 2^64 − 1 and every later one failed).
    @Test func test_seal_refusesToPassTheCeiling() throws {
        let unlocked = try VaultCodec.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        unlocked.advanceGeneration(past: Generations.ceiling - 1)
        _ = try unlocked.seal()
        #expect(unlocked.header.generation == 1 << 63)
        #expect(throws: VaultError.generationCeiling(generation: 1 << 63)) { _ = try unlocked.seal() }
        #expect(unlocked.header.generation == 1 << 63, "the refused seal changed nothing")
        #expect(VaultError.generationCeiling(generation: 1 << 63).category == .overLimit)
    }

    // MARK: - merge of copies

    @Test func test_mergeTwoWay_keepsOneSidedEntriesAndConflictsOnDifferences() throws {
        func vault(_ entries: [String: (String, [String: String], Int64)]) throws -> Vault {
            var vault = Vault()
            for (name, (value, fields, time)) in entries {
                try vault.put(Entry(value: Array(value.utf8), fields: fields.mapValues { Array($0.utf8) }, created: time, modified: time), as: name)
            }
            return vault
        }
        let ours = try vault(["same": ("s", ["u": "x"], 1), "ours-only": ("o", [:], 1), "value": ("a", [:], 1), "field": ("f", ["u": "1"], 1)])
        let theirs = try vault(["same": ("s", ["u": "x"], 5), "theirs-only": ("t", [:], 1), "value": ("b", [:], 1), "field": ("f", [:], 1)])
        let (merged, conflicts) = try VaultMerge.merge(ours: ours, theirs: theirs)
        #expect(conflicts.map(\.name) == ["field", "value"])
        #expect(merged.names == ["field", "field.conflict-theirs", "ours-only", "same", "theirs-only", "value", "value.conflict-theirs"])
        #expect(merged.entry("same").map { ($0.created, $0.modified) } ?? (0, 0) == (1, 5))
        #expect(merged.entry("value")?.value == Array("a".utf8) && merged.entry("value.conflict-theirs")?.value == Array("b".utf8))
    }

    @Test func test_mergeCopy_sealsPastBothSidesAndTheRecord() throws {
        let setup = try Setup(); defer { setup.directory.remove() }
        // The record says 3; ours (old.vault) is 2, theirs (a.vault) 3: the result is 4, and recorded.
        let check = setup.check()
        let (conflicts, generation) = try setup.old.mergeCopy(theirs: setup.directory.path("a.vault"), password: password("pw"), limits: testLimits, rollback: check)
        #expect(conflicts.map(\.name) == ["k"], "'one' against 'two' with no base")
        #expect(try generation == 4 && setup.old.readHeader().header.generation == 4)
        #expect(try setup.seen.record(for: try setup.old.readHeader().header.vaultID)?.generation == 4)
        // With a base, the one-sided change merges cleanly, past a record that is higher still.
        try setup.seen.note(try sealedHeader(generation: 10, id: try setup.old.readHeader().header.vaultID), path: "/elsewhere")
        let base = setup.directory.path("a.vault")
        let clean = try setup.store.mergeCopy(theirs: setup.directory.path("old.vault"), base: base, password: password("pw"), limits: testLimits, rollback: check)
        #expect(clean.generation == 11)
    }
}

/// A value written by a `@Sendable` system-call closure and read by the test.
private final class Observed: @unchecked Sendable {
    var generation: UInt64?
}

/// Finding the git work tree a vault lies in, without running git.
@Suite struct GitWorkTreeTests {
    @Test func test_root_findsADotGitHoldingHEADAboveTheFile() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory.path("repo/.git"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory.path("repo/sub/deeper"), withIntermediateDirectories: true)
        let root = resolved(directory.path("repo"))
        #expect(GitWorkTree.root(containing: directory.path("repo/sub/deeper/x.vault")) == nil, "a .git without HEAD does not count")
        _ = manager.createFile(atPath: directory.path("repo/.git/HEAD"), contents: Data("ref: refs/heads/main\n".utf8))
        #expect(GitWorkTree.root(containing: directory.path("repo/sub/deeper/x.vault")) == root)
        #expect(GitWorkTree.root(containing: directory.path("repo/x.vault")) == root)
        #expect(GitWorkTree.root(containing: directory.path("x.vault")) == nil)
    }

    @Test func test_root_followsAGitfileOnlyToAFolderHoldingHEAD() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory.path("tree"), withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory.path("gitdirs/tree"), withIntermediateDirectories: true)
        _ = manager.createFile(atPath: directory.path("tree/.git"), contents: Data("gitdir: ../gitdirs/tree\n".utf8))
        #expect(GitWorkTree.root(containing: directory.path("tree/x.vault")) == nil, "the named folder has no HEAD")
        _ = manager.createFile(atPath: directory.path("gitdirs/tree/HEAD"), contents: Data("ref: refs/heads/main\n".utf8))
        #expect(GitWorkTree.root(containing: directory.path("tree/x.vault")) != nil)
        _ = manager.createFile(atPath: directory.path("tree/.git"), contents: Data("not a gitfile\n".utf8))
        #expect(GitWorkTree.root(containing: directory.path("tree/x.vault")) == nil)
        _ = manager.createFile(atPath: directory.path("tree/.git"), contents: Data("gitdir: \(directory.path("gitdirs/tree"))\n".utf8))
        #expect(GitWorkTree.root(containing: directory.path("tree/x.vault")) != nil, "an absolute gitdir")
    }
}

/// `path` with every symbolic link resolved (the temporary folder may be behind one).
private func resolved(_ path: String) -> String {
    guard let real = realpath(path, nil) else { return path }
    defer { free(real) }
    return String(cString: real)
}
