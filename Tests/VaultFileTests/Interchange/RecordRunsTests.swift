import Foundation
import Glibc
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// `RecordRuns` and the record writer's runs (issue 44's memory rule): an import past one buffer
/// writes its records as sorted, encrypted runs to a nameless file, and the seal merges them.
@Suite struct RecordRunsTests {
    /// The records of `names` (value and field from the index) written by a writer whose buffer
    /// holds `buffer` bytes, in a fresh folder; the folder, for the tests that look into it.
    /// `room`: the bytes the runs' file may take before a write fails as on a full disk.
    private static func written(_ names: [String], buffer: Int, in folder: TemporaryDirectory, room: Int = .max) -> WrittenRecords? {
        var runs = ImportRuns(directory: folder.url.path, bufferLimit: buffer)
        runs.room = room
        return ImportRuns.$current.withValue(runs) {
            guard var writer = ImportRecordWriter(capacity: 64) else { return nil }
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            for (index, name) in names.enumerated() {
                var fields = [ImportField(name: .string("username"), value: .string("user\(index)"))]
                guard writer.add(name: .string(name), created: Int64(index), modified: 7, value: .owned(Array("value \(index)".utf8)),
                                 fields: &fields, in: none) else { return nil }
            }
            return try? writer.records()
        }
    }

    /// The same records kept in memory (no `ImportRuns`).
    private static func inMemory(_ names: [String]) -> StoredRecords {
        var writer = ImportRecordWriter(capacity: 64)!
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        for (index, name) in names.enumerated() {
            var fields = [ImportField(name: .string("username"), value: .string("user\(index)"))]
            _ = writer.add(name: .string(name), created: Int64(index), modified: 7, value: .owned(Array("value \(index)".utf8)), fields: &fields, in: none)
        }
        return try! writer.records().inMemory!  // no `ImportRuns.current`: in memory
    }

    private static func runs(_ written: WrittenRecords?) -> RecordRuns? {
        guard case .runs(let runs, _)? = written else { return nil }
        return runs
    }

    /// Names in a random order, distinct, some sharing long prefixes.
    private static func randomNames(_ generator: inout SplitMix, count: Int) -> [String] {
        var names = Set<String>()
        while names.count < count { names.insert("f\(generator.nextByte() % 5)/entry-\(Int(generator.nextByte()) * 256 + Int(generator.nextByte()))") }
        return Array(names).shuffled(using: &generator)
    }

    /// The names of a folder, but for the runs' own file, which has none.
    private static func listing(_ folder: TemporaryDirectory) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()) ?? ["unreadable"]
    }

    @Test func test_forEachItem_mergesEveryRunInNameOrder() throws {
        var generator = SplitMix(seed: 44)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        for (count, buffer) in [(1, 1), (7, 1), (300, 200), (2_000, 4_096), (2_000, 1 << 20)] {
            let names = Self.randomNames(&generator, count: count)
            let memory = Self.inMemory(names)
            let written = Self.written(names, buffer: buffer, in: folder)
            guard buffer < 1 << 20 && count > 1 else {
                // Everything fits one buffer (a single record always does): no run, no file.
                #expect(written?.inMemory != nil)
                continue
            }
            let runs = try #require(Self.runs(written), "\(count) records, buffer \(buffer)")
            #expect(runs.count == count && runs.length == memory.records(0..<memory.count).count)
            #expect(runs.runCount > 1)
            // In name order, each record as written, each with its input index.
            var seen: [(name: String, index: Int, record: [UInt8])] = []
            try runs.forEachItem { record, name, index in seen.append((String(decoding: name, as: UTF8.self), index, Array(record))) }
            #expect(seen.map(\.name) == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(seen.allSatisfy { names[$0.index] == $0.name && $0.record == Array(memory.records($0.index..<$0.index + 1)) })
            // Materialized, they are what sorting the records in memory gives.
            let sorted = try #require(memory.sortedByName(releasing: false))
            let materialized = try runs.materialized()
            #expect(Array(materialized.records.records(0..<count)) == Array(sorted.records.records(0..<count)))
            #expect(materialized.positions == sorted.positions)
        }
        #expect(Self.listing(folder).isEmpty)
    }

    /// Runs of many 16 KiB chunks (`RecordRuns.chunkLength`), some records longer than a chunk (each
    /// then a chunk of its own), overlapping so that every run is read at once: merged in name order,
    /// each record as written.
    @Test func test_forEachItem_readsRunsOfManyChunksAndRecordsPastAChunk() throws {
        var generator = SplitMix(seed: 16_384)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let names = Self.randomNames(&generator, count: 3_000)
        let long = RecordRuns.chunkLength + 1_000
        var memory = try #require(ImportRecordWriter(capacity: 64))
        let runs = try #require(ImportRuns.$current.withValue(ImportRuns(directory: folder.url.path, bufferLimit: 96 << 10)) { () -> RecordRuns? in
            guard var writer = ImportRecordWriter(capacity: 64) else { return nil }
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            for (index, name) in names.enumerated() {
                let value = index % 97 == 0 ? [UInt8](repeating: UInt8(index % 251), count: long) : Array("value \(index)".utf8)
                var fields = [ImportField(name: .string("username"), value: .string("user\(index)"))]
                var copied = fields
                guard writer.add(name: .string(name), created: Int64(index), modified: 7, value: .owned(value), fields: &fields, in: none),
                      memory.add(name: .string(name), created: Int64(index), modified: 7, value: .owned(value), fields: &copied, in: none) else { return nil }
            }
            return Self.runs(try? writer.records())
        })
        #expect(runs.runCount > 3 && runs.count == names.count)
        let records = try #require(memory.records().inMemory)
        var seen: [(name: String, index: Int, record: [UInt8])] = []
        try runs.forEachItem { record, name, index in seen.append((String(decoding: name, as: UTF8.self), index, Array(record))) }
        #expect(seen.map(\.name) == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(seen.allSatisfy { names[$0.index] == $0.name && $0.record == Array(records.records($0.index..<$0.index + 1)) })
        #expect(seen.filter { $0.record.count > long }.count == (names.count + 96) / 97)
    }

    /// A buffer whose names almost increase (numbered names: `T (10)` written after `T (9)`) is
    /// sorted by insertion, one far out of order by the merge sort: both give name order, equal
    /// names in input order.
    @Test func test_forEachItem_ordersNamesThatAlmostIncreaseAsAnyOthers() throws {
        var generator = SplitMix(seed: 4_405)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var numbered: [String] = []
        for site in 0..<40 {
            numbered.append("site-\(site)")
            for number in 2...12 { numbered.append("site-\(site) (\(number))") }
        }
        var repeated = numbered
        repeated.insert("site-3 (11)", at: 100)
        var swapped = numbered
        for _ in 0..<30 {
            let a = (Int(generator.nextByte()) * 256 + Int(generator.nextByte())) % swapped.count
            swapped.swapAt(a, (Int(generator.nextByte()) * 256 + Int(generator.nextByte())) % swapped.count)
        }
        for names in [numbered, repeated, swapped, numbered.reversed()] {
            // Name order (bytes), then input order.
            let expected = names.enumerated().sorted {
                $0.element == $1.element ? $0.offset < $1.offset : Array($0.element.utf8).lexicographicallyPrecedes(Array($1.element.utf8))
            }
            for buffer in [300, 4_096, 16_384] {
                let runs = try #require(Self.runs(Self.written(names, buffer: buffer, in: folder)), "buffer \(buffer)")
                var seen: [(name: String, index: Int)] = []
                try runs.forEachItem { _, name, index in seen.append((String(decoding: name, as: UTF8.self), index)) }
                #expect(seen.map(\.name) == expected.map(\.element), "buffer \(buffer)")
                #expect(seen.map(\.index) == expected.map(\.offset), "buffer \(buffer)")
            }
        }
        #expect(Self.listing(folder).isEmpty)
    }

    @Test func test_firstRepeat_isNameOrdersAcrossAndWithinRuns() throws {
        var generator = SplitMix(seed: 4_404)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var repeats = 0
        for round in 0..<120 {
            var names = Self.randomNames(&generator, count: 20 + Int(generator.nextByte() % 60))
            // Repeats: none, far apart, next to each other, three times, in sorted input over a run's edge.
            switch round % 5 {
            case 0: break
            case 1: names[names.count - 1] = names[Int(generator.nextByte()) % (names.count - 1)]
            case 2: names[names.count / 2] = names[names.count / 2 - 1]
            case 3: names[3] = names[9]; names[17] = names[9]
            default:
                names.sort()
                let at = Int(generator.nextByte()) % (names.count - 1)
                names[at + 1] = names[at]
            }
            let expected = NameOrder(names).firstRepeat
            for buffer in [1, 90, 700] {
                let runs = try #require(Self.runs(Self.written(names, buffer: buffer, in: folder)))
                let found = try runs.firstRepeat()
                #expect(found?.index == expected?.index && found?.first == expected?.first, "round \(round) buffer \(buffer)")
            }
            if expected != nil { repeats += 1 }
        }
        #expect(repeats >= 90)
    }

    @Test func test_forEachItem_refusesATamperedOrTruncatedRun() throws {
        var generator = SplitMix(seed: 9)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let names = Self.randomNames(&generator, count: 400)
        for damage in 0..<6 {
            let runs = try #require(Self.runs(Self.written(names, buffer: 2_048, in: folder)))
            var info = stat()
            #expect(fstat(runs.descriptor, &info) == 0)
            let size = Int(info.st_size)
            switch damage {
            case 0, 1, 2:  // one bit of a header, a middle or the last byte flipped
                let offset = [0, size / 2, size - 1][damage]
                var byte: UInt8 = 0
                #expect(pread(runs.descriptor, &byte, 1, off_t(offset)) == 1)
                byte ^= 0x01
                #expect(pwrite(runs.descriptor, &byte, 1, off_t(offset)) == 1)
            case 3: #expect(ftruncate(runs.descriptor, off_t(size - 1)) == 0)  // the last chunk cut
            case 4: #expect(ftruncate(runs.descriptor, off_t(size / 3)) == 0)
            default: #expect(ftruncate(runs.descriptor, 0) == 0)
            }
            #expect(throws: VaultError.self) { try runs.forEachItem { _, _, _ in } }
            // The seal of a vault they went into fails the same way, so nothing is written.
            var vault = Vault()
            let put = try vault.put(incoming: runs)
            #expect(put)
            let message = Result { () throws(VaultError) in try vault.encodedContent() }
            guard case .failure(let error) = message else {
                Issue.record("damage \(damage) sealed")
                continue
            }
            // Its own error (its own hint in the CLI), a damaged file's exit status (4).
            guard case .importRunsDamaged(let inFolder, let part) = error else {
                Issue.record("damage \(damage): \(error)")
                continue
            }
            #expect(inFolder == folder.url.path && part.contains("run"), "\(part)")
            #expect(error.category == .damaged)
            #expect(error.description.hasPrefix("the import's temporary file in \(folder.url.path) is damaged or was modified: "))
        }
        // Swapped runs: each run is read with its own stream header.
        let runs = try #require(Self.runs(Self.written(names, buffer: 2_048, in: folder)))
        var info = stat()
        _ = fstat(runs.descriptor, &info)
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        _ = pread(runs.descriptor, &bytes, bytes.count, 0)
        let half = bytes.count / 2
        let reversed = Array(bytes[half...] + bytes[..<half])
        _ = pwrite(runs.descriptor, reversed, reversed.count, 0)
        #expect(throws: VaultError.self) { try runs.forEachItem { _, _, _ in } }
    }

    @Test func test_recordRuns_leaveNoFileAfterSuccessOrFailure() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let names = (0..<3_000).map { "entry-\($0)" }
        do {
            let runs = try #require(Self.runs(Self.written(names, buffer: 4_096, in: folder)))
            #expect(runs.runCount > 10)
            // While they exist, the folder shows no file: O_TMPFILE, or created and unlinked at once.
            #expect(Self.listing(folder).isEmpty)
            var vault = Vault()
            let put = try vault.put(incoming: runs)
            #expect(put)
            let content = try vault.encodedContent()
            var reference = Vault()
            try reference.put(contentsOf: ImportedEntries(written: .memory(Self.inMemory(names)), renamings: []), now: 0)
            #expect(content == (try reference.encodedContent()))
        }
        // A repeated name refused after the runs were written: no file either.
        let repeated = names + ["entry-17"]
        let written = try #require(Self.written(repeated, buffer: 4_096, in: folder))
        #expect(throws: VaultError.self) { try ImportedEntries(written: written, renamings: []) }
        #expect(Self.listing(folder).isEmpty)
        // A folder where no file can be made: the writer declines (the import reads in memory).
        #expect(Self.written(names, buffer: 4_096, in: TemporaryDirectory.nonexistent) == nil)
    }

    /// The runs' file has no name and can never be given one (O_TMPFILE with O_EXCL): a process
    /// of the same user cannot keep it past the import through /proc/PID/fd (att-runs F4).
    @Test func test_recordRuns_fileCannotBeGivenAName() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let runs = try RecordRuns(directory: folder.url.path)
        let linked = linkat(AT_FDCWD, "/proc/self/fd/\(runs.descriptor)", AT_FDCWD, folder.url.appendingPathComponent("named").path, AT_SYMLINK_FOLLOW)
        #expect(linked != 0, "the runs' file was given a name")
        #expect(Self.listing(folder).isEmpty)
    }

    /// Records past the content limit stop the import as the runs are written, with the seal's
    /// message, before the rest reach the disk (att-runs F7: 4.4 GB of runs before the refusal).
    @Test func test_append_refusesRecordsPastTheContentLimitAsTheyAreWritten() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let records = Self.inMemory((0..<40).map { "entry-\($0)" })
        let runs = try RecordRuns(directory: folder.url.path)
        let one = records.records(0..<1).count
        runs.contentLimit = one * 10
        try runs.append(10, record: { records.records($0..<$0 + 1) }, inputIndex: { $0 })
        #expect(runs.count == 10)
        do {
            try runs.append(30, record: { records.records(10 + $0..<11 + $0) }, inputIndex: { 10 + $0 })
            Issue.record("records past the limit were written")
        } catch {
            #expect(error == .limitExceeded("the vault contents exceed \(VaultLimits.maxContentLength) bytes (1 GiB)"))
        }
        #expect(runs.count == 10, "no run of the refused records was kept")
    }

    /// A disk with no room for the next run (ENOSPC): the runs written so far come back into
    /// memory and the writer goes on there, giving the records of an import without runs, in
    /// input order; whether the room ends at the first run, a middle one or the last.
    @Test func test_records_comeBackIntoMemoryWhenTheDiskIsFull() throws {
        var generator = SplitMix(seed: 45)
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let names = Self.randomNames(&generator, count: 600)
        let memory = Self.inMemory(names)
        let full = try #require(Self.runs(Self.written(names, buffer: 4_096, in: folder)))
        var size = stat()
        #expect(fstat(full.descriptor, &size) == 0)
        for room in [0, 5_000, Int(size.st_size) / 2, Int(size.st_size) - 1] {
            let written = try #require(Self.written(names, buffer: 4_096, in: folder, room: room), "room \(room)")
            let records = try #require(written.inMemory, "room \(room): still in runs")
            #expect(records.count == names.count)
            #expect(Array(records.records(0..<records.count)) == Array(memory.records(0..<memory.count)), "room \(room)")
        }
        #expect(Self.listing(folder).isEmpty)
    }

    /// Runs moved into memory (a seal with no room for the new vault beside them) seal the same
    /// contents, and their file is closed; a second move has nothing to move.
    @Test func test_moveIntoMemory_sealsTheSameContentsAndFreesTheFile() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let names = (0..<2_000).map { "entry-\(($0 * 7_919) % 2_000)" }
        let runs = try #require(Self.runs(Self.written(names, buffer: 4_096, in: folder)))
        var vault = Vault()
        let put = try vault.put(incoming: runs)
        #expect(put)
        let onDisk = try vault.encodedContent()
        let moved = try vault.moveIncomingIntoMemory()
        #expect(moved && runs.descriptor == -1)
        let inMemory = try vault.encodedContent()
        #expect(inMemory == onDisk)
        let again = try vault.moveIncomingIntoMemory()
        #expect(!again)
        var seen: [Int] = []
        try runs.forEachItem { _, _, index in seen.append(index) }
        #expect(seen.map { names[$0] } == names.sorted())
    }

    @Test func test_isNew_saysTheSameWithRunsOnDisk() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let many = (0..<3_000).map { "name-\(100_000 + $0)" } + ["name-100017", "name-099999", "name-104999", "name-050000", "b", "b"]
        var said: [Bool] = []
        ImportRuns.$current.withValue(ImportRuns(directory: folder.url.path, bufferLimit: 512)) {
            guard var writer = ImportRecordWriter(capacity: 64) else { return }
            var check = StreamedNameCheck()
            var none: [ImportField] = []
            for name in many {
                let new = check.isNew(name, among: writer)
                if new { _ = writer.add(name: .string(name), created: 1, modified: 1, value: .literal("v"), fields: &none, in: UnsafeRawBufferPointer(start: nil, count: 0)) }
                said.append(new)
            }
        }
        #expect(said.prefix(3_000).allSatisfy { $0 })
        #expect(Array(said.suffix(6)) == [false, true, true, true, true, false])
    }
}

extension TemporaryDirectory {
    /// A folder that does not exist (its parent is a fresh folder removed at once).
    static var nonexistent: TemporaryDirectory {
        let folder = try! TemporaryDirectory()
        folder.remove()
        return folder
    }
}
