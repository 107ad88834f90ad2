import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// `VaultMerge.applyEdit`: an edit begun on one entry, applied to the vault as others left it
/// (`vaultfile edit` without the lock), with merge's per-field three-way rule.
@Suite struct VaultMergeEditTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func entry(_ value: String, _ fields: [String: String] = [:]) -> Entry {
        Entry(value: bytes(value), fields: fields.mapValues { Array($0.utf8) }, created: 1, modified: 1)
    }

    private func vault(_ entries: [(String, Entry)]) throws -> Vault {
        var vault = Vault()
        for (name, entry) in entries { try vault.put(entry, as: name) }
        return vault
    }

    // MARK: - Success

    @Test func test_applyEdit_nobodyElseWroteTakesTheEdit() throws {
        var current = try vault([("db", entry("v0", ["user": "u0"]))])
        let outcome = try VaultMerge.applyEdit(bytes("v1"), part: .value, of: "db", base: entry("v0", ["user": "u0"]), to: &current, now: 9)
        #expect(outcome == .applied)
        #expect(current.entry("db")?.value == bytes("v1") && current.entry("db")?.fields["user"] == bytes("u0"))
        #expect(current.entry("db")?.modified == 9 && current.entry("db")?.created == 1)
    }

    @Test func test_applyEdit_keepsAChangeToAnotherPartMadeMeanwhile() throws {
        var current = try vault([("db", entry("v0", ["user": "u1"]))])
        let outcome = try VaultMerge.applyEdit(bytes("v1"), part: .value, of: "db", base: entry("v0", ["user": "u0"]), to: &current)
        #expect(outcome == .applied)
        #expect(current.entry("db")?.value == bytes("v1") && current.entry("db")?.fields["user"] == bytes("u1"))
        #expect(current.count == 1)
    }

    @Test func test_applyEdit_sameChangeMadeMeanwhileIsUnchanged() throws {
        var current = try vault([("db", entry("v1"))])
        #expect(try VaultMerge.applyEdit(bytes("v1"), part: .value, of: "db", base: entry("v0"), to: &current) == .unchanged)
        #expect(current.count == 1)
    }

    @Test func test_applyEdit_aNewEntryIsCreated() throws {
        var current = try vault([("other", entry("x"))])
        #expect(try VaultMerge.applyEdit(bytes("new"), part: .field("user"), of: "db", base: nil, to: &current) == .applied)
        #expect(current.entry("db")?.fields["user"] == bytes("new") && current.entry("db")?.value == [])
    }

    // MARK: - Failure: conflicts

    @Test func test_applyEdit_aDifferentChangeToThePartParksTheEdit() throws {
        var current = try vault([("db", entry("theirs", ["user": "u0"]))])
        let outcome = try VaultMerge.applyEdit(bytes("mine"), part: .value, of: "db", base: entry("v0", ["user": "u0"]), to: &current)
        #expect(outcome == .conflict(parked: "db.conflict-edit", parts: [.value]))
        #expect(current.entry("db")?.value == bytes("theirs"))
        #expect(current.entry("db.conflict-edit")?.value == bytes("mine") && current.entry("db.conflict-edit")?.fields["user"] == bytes("u0"))
    }

    @Test func test_applyEdit_neverOverwritesAnEarlierParkedEdit() throws {
        var current = try vault([("db", entry("theirs")), ("db.conflict-edit", entry("first")), ("db.conflict-edit-2", entry("second"))])
        let outcome = try VaultMerge.applyEdit(bytes("mine"), part: .value, of: "db", base: entry("v0"), to: &current)
        #expect(outcome == .conflict(parked: "db.conflict-edit-3", parts: [.value]))
        #expect(current.entry("db.conflict-edit")?.value == bytes("first") && current.entry("db.conflict-edit-3")?.value == bytes("mine"))
    }

    @Test func test_applyEdit_aFieldOfANewEntryMeetsAValueSetMeanwhileWithoutConflict() throws {
        var current = try vault([("db", entry("someone's value"))])
        #expect(try VaultMerge.applyEdit(bytes("u"), part: .field("user"), of: "db", base: nil, to: &current) == .applied)
        #expect(current.entry("db")?.value == bytes("someone's value") && current.entry("db")?.fields["user"] == bytes("u"))
    }

    // MARK: - Edge cases

    @Test func test_applyEdit_anEntryRemovedMeanwhileIsRestoredWithTheEdit() throws {
        var current = try vault([("other", entry("x"))])
        #expect(try VaultMerge.applyEdit(bytes("v1"), part: .value, of: "db", base: entry("v0", ["user": "u0"]), to: &current) == .restored)
        #expect(current.entry("db")?.value == bytes("v1") && current.entry("db")?.fields["user"] == bytes("u0"))
    }
}
