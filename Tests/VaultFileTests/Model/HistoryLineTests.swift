import Foundation
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// `rm` ends an entry's line of history; a new entry under the same name starts its own (issue 39,
/// item 8: after `rm db; set db fresh`, `trash empty` kept the removed entry's values as db's history).
@Suite struct HistoryLineTests {
    /// A vault with history where `name` held "old1", then "old2", and was removed at 30.
    private func removedDB(_ name: String = "db") throws -> Vault {
        var vault = Vault(history: .standard)
        try vault.setValue(Array("old1".utf8), for: name, now: 10)
        try vault.setValue(Array("old2".utf8), for: name, now: 20)
        try vault.remove(name, now: 30)
        #expect(try vault.trash().map(\.name) == [name])
        return vault
    }

    /// Every value kept anywhere in the vault's history (the trash included).
    private func keptValues(_ vault: Vault) throws -> [[UInt8]] {
        try vault.historyNames().flatMap { try vault.history(of: String(decoding: $0, as: UTF8.self)).map(\.entry.value) }
    }

    // MARK: - A new entry under a removed one's name

    @Test func test_setOfARemovedName_startsANewLineAndTrashEmptyLeavesNoOldValue() throws {
        var vault = try removedDB()
        try vault.setValue(Array("fresh".utf8), for: "db", now: 40)
        #expect(try vault.history(of: "db").isEmpty, "the new entry starts a line of its own")
        #expect(try vault.trash().isEmpty)
        #expect(try vault.emptyTrash() == 0)
        try vault.setValue(Array("fresh2".utf8), for: "db", now: 50)
        #expect(try vault.history(of: "db").map(\.entry.value) == [Array("fresh".utf8)])
        // Removed again: the trash holds this line only, and emptying it leaves no value of db at all.
        try vault.remove("db", now: 60)
        #expect(try vault.trash().first?.versions.map(\.entry.value) == [Array("fresh2".utf8), Array("fresh".utf8)])
        #expect(try vault.emptyTrash() == 1)
        #expect(try keptValues(vault).isEmpty)
    }

    @Test func test_everyWayANameIsUsedAgain_endsTheRemovedLine() throws {
        let ways: [(String, (inout Vault) throws -> Void)] = [
            ("setField", { try $0.setField("user", value: [1], for: "db", now: 40) }),
            ("put", { try $0.put(Entry(value: [1], created: 40, modified: 40), as: "db", now: 40) }),
            ("rename", { try $0.setValue([1], for: "other", now: 35); try $0.setValue([2], for: "other", now: 36); try $0.rename("other", to: "db", now: 40) }),
            ("copy", { try $0.setValue([1], for: "other", now: 35); try $0.copy("other", to: "db", overwrite: false, now: 40) }),
            ("moveFolder", { try $0.setValue([1], for: "a/db", now: 35); try $0.moveFolder("a/", to: "b/", overwrite: false) }),
            ("put(contentsOf:)", { try $0.put(contentsOf: [("db", Entry(value: [1], created: 40, modified: 40))], now: 40) }),
            ("putOneByOne", { try $0.putOneByOne([("db", Entry(value: [1], created: 40, modified: 40))], now: 40) }),
        ]
        for (way, use) in ways {
            let name = way == "moveFolder" ? "b/db" : "db"
            var vault = try removedDB(name)
            try use(&vault)
            let values = try vault.history(of: name).map(\.entry.value)
            #expect(!values.contains(Array("old1".utf8)) && !values.contains(Array("old2".utf8)), "\(way): \(values)")
            #expect(try vault.trash().isEmpty, "\(way)")
        }
        // A rename keeps its own line: the moved entry's earlier version comes along.
        var renamed = try removedDB()
        try renamed.setValue([1], for: "other", now: 35)
        try renamed.setValue([2], for: "other", now: 36)
        try renamed.rename("other", to: "db", now: 40)
        #expect(try renamed.history(of: "db").map(\.entry.value) == [[1]])
    }

    @Test func test_bulkPut_endsTheRemovedLineAsPutOneByOneDoes() throws {
        var bulk = try removedDB()
        try bulk.setValue([9], for: "gone", now: 31)
        try bulk.remove("gone", now: 32)
        var single = bulk
        let entries = [("a", Entry(value: [1], created: 40, modified: 40)), ("db", Entry(value: [2], created: 40, modified: 40))]
        try bulk.put(contentsOf: entries, now: 40)
        try single.putOneByOne(entries, now: 40)
        #expect(bulk == single)
        #expect(try bulk.history(of: "db").isEmpty && bulk.trash().map(\.name) == ["gone"])
    }

    // MARK: - What stays as it was

    @Test func test_restoreFromTheTrash_bringsTheLineBackWithItsHistory() throws {
        var vault = try removedDB()
        try vault.restore("db", revision: 1, now: 40)
        #expect(vault.entry("db")?.value == Array("old2".utf8))
        #expect(try vault.history(of: "db").map(\.entry.value) == [Array("old1".utf8)], "a restore continues the line")
    }

    // MARK: - Merges

    @Test func test_merge_neverJoinsARemovedLineToALiveEntry() throws {
        var base = Vault(history: .standard)
        try base.setValue(Array("old1".utf8), for: "db", now: 10)
        try base.setValue(Array("old2".utf8), for: "db", now: 20)
        try base.setValue([1], for: "other", now: 20)
        var ours = base, theirs = base
        try ours.remove("db", now: 30)
        try ours.setValue(Array("fresh".utf8), for: "db", now: 40)
        try theirs.remove("db", now: 31)
        try theirs.setValue([2], for: "other", now: 32)
        // Ours re-made db, theirs removed it: the result holds ours' new entry, and theirs' removed
        // line (old2, old1 in its trash) does not become its history.
        let merged = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(merged.vault.entry("db")?.value == Array("fresh".utf8), "\(merged.conflicts)")
        #expect(try merged.vault.history(of: "db").isEmpty)
        #expect(try merged.vault.history(of: "other").map(\.entry.value) == [[1]])
        let twoWay = try VaultMerge.merge(ours: ours, theirs: theirs)
        #expect(try twoWay.vault.history(of: "db").allSatisfy { $0.entry.value == Array("fresh".utf8) })
        // Both sides removed it: the result has no db, and the removed line stays in the trash.
        var removedToo = base
        try removedToo.remove("db", now: 33)
        let gone = try VaultMerge.merge(base: base, ours: theirs, theirs: removedToo)
        #expect(gone.vault.entry("db") == nil)
        #expect(try gone.vault.trash().first?.versions.contains { $0.entry.value == Array("old1".utf8) } == true)
    }

    // MARK: - Three-way merge of versions

    @Test func test_mergeHistory_keepsWhatOneSideDroppedSinceBaseDropped() throws {
        var base = Vault(history: .standard)
        try base.setValue(Array("old1".utf8), for: "db", now: 10)
        try base.setValue(Array("old2".utf8), for: "db", now: 20)
        try base.setValue([1], for: "kept", now: 20)
        try base.setValue([2], for: "kept", now: 21)
        var ours = base, theirs = base
        // Ours: a new db under the reused name, then the removed line emptied from the trash.
        try ours.remove("db", now: 30)
        try ours.setValue(Array("fresh".utf8), for: "db", now: 40)
        try ours.emptyTrash()
        try ours.pruneHistory(of: "kept")
        // Theirs: an unrelated change, and a version of its own added to kept.
        try theirs.setValue([9], for: "other", now: 32)
        try theirs.setValue([3], for: "kept", now: 33)
        #expect(try ours.history(of: "db").isEmpty)
        for merged in [try VaultMerge.merge(base: base, ours: ours, theirs: theirs),
                       try VaultMerge.merge(base: base, ours: theirs, theirs: ours)] {
            #expect(merged.vault.entry("db")?.value == Array("fresh".utf8), "\(merged.conflicts)")
            #expect(try merged.vault.history(of: "db").isEmpty, "old1 and old2 were dropped on one side")
            #expect(try !keptValues(merged.vault).contains(Array("old1".utf8)))
            // kept: [1] was pruned on one side; [2], superseded on theirs only, is a version since base.
            #expect(merged.vault.entry("kept")?.value == [3])
            #expect(try merged.vault.history(of: "kept").map(\.entry.value) == [[2]])
        }
        // Without the drop on either side, every version stays.
        let unchanged = try VaultMerge.merge(base: base, ours: base, theirs: theirs)
        #expect(try unchanged.vault.history(of: "db").map(\.entry.value) == [Array("old1".utf8)])
    }
}
