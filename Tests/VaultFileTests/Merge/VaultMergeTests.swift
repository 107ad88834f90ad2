import KDF
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultModel

/// The three-way merge of contents, per entry and per field.
@Suite struct VaultMergeTests {
    private func vault(_ entries: [String: (String, [String: String])]) throws -> Vault {
        var vault = Vault()
        for (name, (value, fields)) in entries {
            try vault.put(Entry(value: Array(value.utf8), fields: fields.mapValues { Array($0.utf8) }, created: 1, modified: 1), as: name)
        }
        return vault
    }

    @Test func test_merge_takesOneSidedChangesPerField() throws {
        let base = try vault(["e": ("v", ["user": "u", "url": "x"])])
        let ours = try vault(["e": ("v", ["user": "u2", "url": "x"])])
        let theirs = try vault(["e": ("v2", ["user": "u", "url": "x", "notes": "n"])])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(conflicts.isEmpty)
        let entry = try #require(merged.entry("e"))
        #expect(entry.value == Array("v2".utf8))
        #expect(entry.fields == ["user": Array("u2".utf8), "url": Array("x".utf8), "notes": Array("n".utf8)])
    }

    @Test func test_merge_sameChangeTwiceIsNoConflict() throws {
        let base = try vault(["e": ("v", [:])])
        let both = try vault(["e": ("same", [:]), "added": ("a", [:])])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: both, theirs: both)
        #expect(conflicts.isEmpty && merged == both)
    }

    @Test func test_merge_fieldRemovedOnOneSide() throws {
        let base = try vault(["e": ("v", ["old": "o"])])
        let ours = try vault(["e": ("v", [:])])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: base)
        #expect(conflicts.isEmpty && merged.entry("e")?.fields.isEmpty == true)
    }

    @Test func test_merge_conflictsKeepBothSides() throws {
        let base = try vault(["e": ("v", [:]), "gone": ("g", [:])])
        let ours = try vault(["e": ("ours", [:]), "new": ("n1", [:])])
        let theirs = try vault(["e": ("theirs", [:]), "gone": ("g2", [:]), "new": ("n2", [:])])
        let (merged, conflicts) = try VaultMerge.merge(base: base, ours: ours, theirs: theirs)
        #expect(Set(conflicts.map(\.name)) == ["e", "gone", "new"])
        #expect(merged.entry("e")?.value == Array("ours".utf8) && merged.entry("e.conflict-theirs")?.value == Array("theirs".utf8))
        #expect(merged.entry("gone")?.value == Array("g2".utf8), "a deletion never beats a change")
        #expect(merged.entry("new.conflict-theirs")?.value == Array("n2".utf8))
    }
}

/// Merging three files on disk: the keyslots of the side that changed them are kept.
@Suite struct VaultMergeFilesTests {
    @Test func test_mergeFiles_keepsAKDFChangeMadeOnTheirSide() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let base = VaultStore(path: directory.path("base.vault"))
        try base.create(try sampleVault(), password: password("pw"), kdf: testKDF)
        let bytes = try base.read().bytes
        for name in ["ours.vault", "theirs.vault"] { try AtomicFileWriter().write(bytes, to: directory.path(name), finalLink: .follow) }
        let ours = VaultStore(path: directory.path("ours.vault")), theirs = VaultStore(path: directory.path("theirs.vault"))
        try ours.update(password: password("pw"), limits: testLimits) { try $0.vault.setValue([1], for: "ours-only") }
        let stronger = KDFParameters.argon2id(.init(memoryKiB: 16, iterations: 2, parallelism: 1))
        try theirs.changePassword(from: password("pw"), to: password("pw"), kdf: stronger, limits: testLimits)
        let conflicts = try VaultStore.mergeFiles(base: base.path, ours: ours.path, theirs: theirs.path, password: password("pw"), limits: testLimits)
        #expect(conflicts.isEmpty)
        let merged = try ours.open(password: password("pw"), limits: testLimits)
        #expect(merged.passwordKDF == stronger, "their KDF change is kept")
        #expect(merged.vault.entry("ours-only")?.value == [1], "our entry change is kept")
        #expect(merged.header.generation > (try theirs.readHeader().header.generation))
    }

    // MARK: Stored records

    /// The walk over stored records (compared by their bytes, result built on ours) against the
    /// same vaults built in memory (compared by decoded entries), on random three-way edits with
    /// conflicts, deletions against changes and names that collide with parked entries.
    @Test func test_merge_storedVaultsMergeAsVaultsBuiltInMemory() throws {
        var generator = SplitMix(seed: 17)
        var base = Vault()
        for index in 0..<40 { try base.setValue([UInt8(index)], for: "e/\(index)", now: 1) }
        for trial in 0..<30 {
            var sides = [base, base]
            for side in 0..<2 {
                for _ in 0..<12 {
                    let byte = generator.nextByte(), name = "e/\(byte % 48)"
                    switch byte % 4 {
                    case 0: try sides[side].setValue([byte & 3], for: name, now: 2)
                    case 1: try sides[side].setField("f", value: [byte & 1], for: name, now: 2)
                    case 2: _ = try? sides[side].remove(name)
                    default: try sides[side].setValue([byte & 1], for: name + VaultMerge.conflictSuffix, now: 2)
                    }
                }
            }
            let stored = try [base, sides[0], sides[1]].map { try EntryCodec.decode(EntryCodec.encode($0)) }
            let inMemory = try VaultMerge.merge(base: base, ours: sides[0], theirs: sides[1])
            let fromStored = try VaultMerge.merge(base: stored[0], ours: stored[1], theirs: stored[2])
            #expect(fromStored.vault == inMemory.vault, "trial \(trial)")
            #expect(fromStored.conflicts == inMemory.conflicts, "trial \(trial)")
        }
    }
}

/// `VaultMerge.separateTwins` (non-ASCII names indexed, incoming names from the merge walk) against
/// its plain reference (every name normalized, incoming names looked up in the three sides).
@Suite struct VaultMergeTwinsTests {
    /// Spellings of a few texts in several Unicode forms, ASCII forms among them (KELVIN SIGN and
    /// ANGSTROM SIGN have ASCII or Latin-1 NFC forms), and names a conflict parks entries under.
    private static let names = ["K", "\u{212A}", "é", "e\u{301}", "\u{C5}", "\u{212B}", "A\u{30A}", "a", "b/c", "b/c\u{301}",
                                "K.conflict-theirs", "\u{C5}.conflict-theirs", "é.conflict-theirs", "z", "\u{212A}x", "Kx",
                                // Four spellings of one ASCII text: an ASCII name parked away, then another spelling.
                                "KK", "\u{212A}K", "K\u{212A}", "\u{212A}\u{212A}", "\u{212A}K.conflict-theirs"]


    private static func randomVault(_ generator: inout SplitMix) throws -> Vault {
        var vault = Vault()
        for name in names where Int.random(in: 0..<3, using: &generator) == 0 {
            try vault.put(Entry(value: Array(name.utf8), created: 1, modified: 1), as: name)
        }
        return vault
    }

    @Test func test_separateTwins_agreesWithTheReference() throws {
        var generator = SplitMix(seed: 0x7_71AC)
        var moved = 0, reported = 0
        for _ in 0..<4_000 {
            let (base, ours, theirs) = (try Self.randomVault(&generator), try Self.randomVault(&generator), try Self.randomVault(&generator))
            // A result as the merge walk leaves it: ours, with what theirs added.
            var result = ours
            for (name, entry) in theirs.sortedEntries where !ours.contains(key: Array(name.utf8)) {
                try result.put(entry, as: name)
            }
            let incoming = result.names.filter { name in
                let key = Array(name.utf8)
                return theirs.contains(key: key) && !ours.contains(key: key) && !base.contains(key: key)
            }
            var fast = result, reference = result
            var fastConflicts: [VaultMerge.Conflict] = [], referenceConflicts: [VaultMerge.Conflict] = []
            try VaultMerge.separateTwins(in: &fast, incoming: incoming, ours: ours, conflicts: &fastConflicts)
            try VaultMerge.separateTwinsReference(in: &reference, base: base, ours: ours, theirs: theirs, conflicts: &referenceConflicts)
            #expect(fast.sortedEntries.map(\.name) == reference.sortedEntries.map(\.name), "\(incoming)")
            #expect(fast.sortedEntries.map(\.entry) == reference.sortedEntries.map(\.entry))
            #expect(fastConflicts == referenceConflicts, "\(incoming)")
            if fast.names != result.names { moved += 1 }
            reported += fastConflicts.count
        }
        #expect(moved > 100 && reported > 100, "the cases moved names (\(moved)) and reported twins (\(reported))")
    }

    /// Their side adds an entry under a name not in NFC, with earlier versions: the merge stores it
    /// in NFC and its history goes with it, nothing left behind under the old spelling as a removed
    /// entry (issue 47: the history stayed there, in the trash, and the NFC entry had none).
    @Test func test_merge_movingAnIncomingNameToNFCCarriesItsHistory() throws {
        let decomposed = "db/e\u{301}", composed = "db/\u{E9}"
        var theirs = Vault(history: .standard)
        try theirs.put(Entry(value: [1], created: 1, modified: 1), as: decomposed, now: 1)
        try theirs.put(Entry(value: [2], created: 1, modified: 2), as: decomposed, now: 2)
        try theirs.put(Entry(value: [3], created: 1, modified: 3), as: decomposed, now: 3)
        #expect(try theirs.history(of: decomposed).map(\.entry.value) == [[2], [1]])
        let (merged, conflicts) = try VaultMerge.merge(base: Vault(history: .standard), ours: Vault(history: .standard), theirs: theirs)
        #expect(conflicts.isEmpty)
        #expect(merged.names.map { Array($0.utf8) } == [Array(composed.utf8)], "stored in NFC")
        #expect(merged.entry(forKey: Array(composed.utf8))?.value == [3])
        #expect(try merged.history(of: composed).map(\.entry.value) == [[2], [1]], "the history moved with the entry")
        #expect(try merged.trash().isEmpty, "nothing left under the old spelling")
        // A name already in NFC keeps its history as before.
        var plain = Vault(history: .standard)
        try plain.put(Entry(value: [1], created: 1, modified: 1), as: composed, now: 1)
        try plain.put(Entry(value: [2], created: 1, modified: 2), as: composed, now: 2)
        let (same, _) = try VaultMerge.merge(base: Vault(history: .standard), ours: Vault(history: .standard), theirs: plain)
        #expect(try same.history(of: composed).map(\.entry.value) == [[1]])
    }
}
