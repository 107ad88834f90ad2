import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// The merge part by part (value and each field against base) and of names in two Unicode forms.
@Suite struct VaultMergePartsTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    private func entry(_ value: String, _ fields: [String: String] = [:]) -> Entry {
        Entry(value: bytes(value), fields: fields.mapValues { Array($0.utf8) }, created: 1, modified: 1)
    }

    private func vault(_ entries: [(String, Entry)]) throws -> Vault {
        var vault = Vault()
        for (name, entry) in entries { try vault.put(entry, as: name) }
        return vault
    }

    // MARK: - merge: part by part

    @Test func test_merge_valueOnOursAndAFieldOnTheirsMergeWithoutConflict() throws {
        let base = try vault([("db", entry("v0", ["user": "u0"]))])
        let ours = try vault([("db", entry("v1", ["user": "u0"]))])
        let theirs = try vault([("db", entry("v0", ["user": "u1"]))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(conflicts.isEmpty)
        #expect(merged.entry("db") == entry("v1", ["user": "u1"]))
        #expect(merged.count == 1)
    }

    @Test func test_merge_aConflictingPartKeepsTheOneSidedChangesOfTheOthers() throws {
        // Both change the value; ours also changes user, theirs adds url. Before the merge went
        // part by part only when nothing conflicted: NAME was ours whole and theirs' url was
        // only in NAME.conflict-theirs, which 'resolve --ours' drops.
        let base = try vault([("db", entry("v0", ["user": "u0", "notes": "n0"]))])
        let ours = try vault([("db", entry("ours", ["user": "u1", "notes": "n0"]))])
        let theirs = try vault([("db", entry("theirs", ["user": "u0", "notes": "n0", "url": "https://x"]))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(conflicts.map(\.name) == ["db"])
        #expect(conflicts.first?.parts == [.value])
        #expect(conflicts.first?.reason.contains("the value") == true)
        #expect(merged.entry("db") == entry("ours", ["user": "u1", "notes": "n0", "url": "https://x"]))
        #expect(merged.entry("db" + VaultMerge.conflictSuffix) == entry("theirs", ["user": "u1", "notes": "n0", "url": "https://x"]))
    }

    @Test func test_merge_aFieldChangedDifferentlyIsTheOnlyConflict() throws {
        let base = try vault([("db", entry("v0", ["user": "u0"]))])
        let ours = try vault([("db", entry("v1", ["user": "ours"]))])
        let theirs = try vault([("db", entry("v0", ["user": "theirs", "url": "u"]))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(conflicts.first?.parts == [.field("user")])
        #expect(conflicts.first?.reason.contains("field 'user'") == true)
        #expect(merged.entry("db") == entry("v1", ["user": "ours", "url": "u"]))
        #expect(merged.entry("db.conflict-theirs") == entry("v1", ["user": "theirs", "url": "u"]))
    }

    @Test func test_merge_aFieldRemovedAgainstAChangeKeepsBothSides() throws {
        let base = try vault([("db", entry("v", ["user": "u0"]))])
        let ours = try vault([("db", entry("v"))])
        let theirs = try vault([("db", entry("v", ["user": "u1"]))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(conflicts.first?.parts == [.field("user")])
        #expect(merged.entry("db") == entry("v"))
        #expect(merged.entry("db.conflict-theirs") == entry("v", ["user": "u1"]))
    }

    @Test func test_mergeEntry_takesTheEarliestCreatedAndLatestModifiedTime() {
        let ours = Entry(value: bytes("a"), created: 5, modified: 50)
        let theirs = Entry(value: bytes("b"), created: 3, modified: 40)
        let merged = VaultMerge.mergeEntry(base: nil, ours: ours, theirs: theirs)
        #expect(merged.ours.created == 3 && merged.ours.modified == 50 && merged.theirs.modified == 50)
        #expect(merged.conflicts == [.value])
    }

    // MARK: - merge: names in two Unicode forms

    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    @Test func test_merge_twinsAddedOnBothSidesAreAConflictNotOneEntry() throws {
        let base = Vault()
        let ours = try vault([(composed, entry("ours"))])
        let theirs = try vault([(decomposed, entry("theirs"))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(merged.count == 2, "neither entry is lost")
        #expect(merged.entry(forKey: bytes(composed)) == entry("ours"))
        #expect(merged.entry(composed + VaultMerge.conflictSuffix) == entry("theirs"))
        #expect(conflicts.map { bytes($0.name) } == [bytes(composed)])
        #expect(conflicts.first?.reason.contains("$'cafe\\u0301'") == true)
    }

    @Test func test_merge_aNameBroughtInIsStoredInNFC() throws {
        let base = try vault([("a", entry("a"))])
        let theirs = try vault([("a", entry("a")), ("x/" + decomposed, entry("t"))])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: base, theirs: theirs)
        #expect(conflicts.isEmpty)
        #expect(merged.names.map(bytes) == [bytes("a"), bytes("x/" + composed)])
    }

    @Test func test_merge_oldTwinsOnBothSidesStayAsTheyAre() throws {
        let both = try vault([(composed, entry("1")), (decomposed, entry("2"))])
        let (merged, conflicts) = try VaultMerge.merge(base: both, ours: both, theirs: both)
        #expect(conflicts.isEmpty && merged == both)
    }
}
