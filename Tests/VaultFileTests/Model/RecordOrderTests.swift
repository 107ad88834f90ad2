import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// Imported records out of name order put in order before the vault's write
/// (`StoredRecords.sortedByName`, `ImportedEntries(records:renamings:)`): the same vault as the
/// bulk put's copy into order made, the entries still in file order, and with `releasing` each
/// block of the file-order buffer given back as it is copied (issue 45's memory rule).
@Suite struct RecordOrderTests {
    /// Records of `names` in that order, each with a value and a field made from its index.
    private static func written(_ names: [String]) -> StoredRecords {
        var writer = ImportRecordWriter(capacity: 64)!
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        for (index, name) in names.enumerated() {
            var fields = [ImportField(name: .string("username"), value: .string("user\(index)"))]
            let added = writer.add(name: .string(name), created: Int64(index), modified: Int64(index + 1),
                                   value: .owned(Array("value \(index) of \(name)".utf8)), fields: &fields, in: none)
            precondition(added, "a valid entry")
        }
        return try! writer.records().inMemory!  // no runs: no `ImportRuns.current`
    }

    /// Distinct names in a random order: runs in name order (a KeePass group's entries, then its
    /// subgroups') or shuffled, so that both the release block by block and the late one are met.
    private static func randomNames(_ generator: inout SplitMix, count: Int) -> [String] {
        var names = Set<String>()
        while names.count < count { names.insert("n\(generator.nextByte() % 8)/e-\(Int(generator.nextByte()) * 256 + Int(generator.nextByte()))") }
        var ordered = names.sorted()
        if generator.nextByte() % 2 == 0 {
            ordered.shuffle(using: &generator)
        } else {
            let cut = Int(generator.nextByte()) % ordered.count
            ordered = Array(ordered[cut...] + ordered[..<cut])
        }
        return ordered
    }

    @Test func test_sortedByName_putsTheRecordsInNameOrderWithTheirPositions() {
        var generator = SplitMix(seed: 45)
        for round in 0..<60 {
            let names = Self.randomNames(&generator, count: 2 + round * 97 % 3_000)
            let plain = Self.written(names)
            let released = Self.written(names)
            let entries = (0..<plain.count).map { plain.entry(at: $0) }
            guard let sorted = plain.sortedByName(releasing: false), let sortedReleasing = released.sortedByName(releasing: true) else {
                #expect(names == names.sorted(), "only records in name order are left as they are")
                continue
            }
            #expect(sorted.records.namesIncrease)
            #expect(sorted.positions == sortedReleasing.positions)
            #expect(sorted.records.records(0..<sorted.records.count).elementsEqual(sortedReleasing.records.records(0..<sortedReleasing.records.count)))
            for index in names.indices {
                let position = Int(sorted.positions[index])
                #expect(String(decoding: sorted.records.name(at: position), as: UTF8.self) == names[index])
                #expect(sorted.records.entry(at: position) == entries[index])
            }
            // The buffer given back block by block reads as zeros: nothing of it is left.
            #expect(released.records(0..<released.count).allSatisfy { $0 == 0 })
        }
    }

    @Test func test_sortedByName_leavesRecordsInOrderOrWithARepeatedName() {
        #expect(Self.written(["a", "b", "c"]).sortedByName(releasing: true) == nil)
        #expect(Self.written(["b", "a", "b"]).sortedByName(releasing: true) == nil)
        #expect(Self.written(["only"]).sortedByName(releasing: true) == nil)
    }

    /// Records out of order make the import its entries make, in file order, and the vault the
    /// bulk put's copy made: into an empty vault, into one holding entries, and with a name twice
    /// (the same error).
    @Test func test_importedRecordsOutOfOrder_importAsTheirEntries() throws {
        var generator = SplitMix(seed: 17)
        var full = Vault()
        try full.put(Entry(value: Array("kept".utf8), created: 1, modified: 1), as: "n3/kept")
        for round in 0..<40 {
            var names = Self.randomNames(&generator, count: 2 + round * 53 % 500)
            if round % 10 == 9 { names.append(names[0]) }
            let records = Self.written(names)
            let entries = (0..<records.count).map { (name: String(decoding: records.name(at: $0), as: UTF8.self), entry: records.entry(at: $0)) }
            let imported = Result { () throws(VaultError) in try ImportedEntries(records: Self.written(names), renamings: []) }
            let reference = Result { () throws(VaultError) in try ImportedEntries(entries.map { ($0.name, $0.entry) }, renamings: []) }
            switch (imported, reference) {
            case (.success(let imported), .success(let reference)):
                #expect(imported.entries.map(\.name) == names)
                #expect(imported.entries.map(\.entry) == reference.entries.map(\.entry))
                #expect(imported.names == names)
                #expect(imported.records?.namesIncrease == true)
                for base in [Vault(), full] {
                    var fromRecords = base, fromEntries = base
                    try fromRecords.put(contentsOf: imported, now: 9)
                    try fromEntries.put(contentsOf: reference, now: 9)
                    #expect(try fromRecords.encodedContent() == fromEntries.encodedContent())
                }
            case (.failure(let error), .failure(let expected)):
                #expect(error.description == expected.description)
            default:
                Issue.record("records and entries disagree: \(imported) against \(reference)")
            }
        }
    }
}
