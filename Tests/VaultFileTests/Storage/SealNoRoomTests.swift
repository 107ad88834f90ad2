import Foundation
import Glibc
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// A seal that finds no room (ENOSPC) while an import's records wait in runs on disk beside the
/// vault (att-runs F1): the runs are brought into memory, their file closed, and the vault sealed
/// once more; a second failure says so, and leaves the vault as it was. Injected through the
/// storage layer's system calls (`SystemCalls`); `ImportRunsCLITests` runs it on a real small tmpfs.
@Suite struct SealNoRoomTests {
    /// The records of `count` entries in name order, in memory.
    private static func records(_ count: Int) -> StoredRecords {
        var writer = ImportRecordWriter(capacity: 64)!
        var none: [ImportField] = []
        for index in 0..<count {
            _ = writer.add(name: .string("entry-\(100_000 + index)"), created: 1, modified: 1, value: .owned(Array("value \(index)".utf8)),
                           fields: &none, in: UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try! writer.records().inMemory!  // no `ImportRuns.current`: in memory
    }

    /// An empty vault in `directory`, and runs of `records` (two of them) in the same folder.
    private static func vaultAndRuns(_ directory: TemporaryDirectory, _ records: StoredRecords) throws -> (path: String, runs: RecordRuns) {
        let path = directory.path("v.vault")
        try VaultStore(path: path).create(Vault(), password: password("pw"), kdf: testKDF)
        let runs = try RecordRuns(directory: directory.url.path)
        let half = records.count / 2
        try runs.append(half, record: { records.records($0..<$0 + 1) }, inputIndex: { $0 })
        try runs.append(records.count - half, record: { records.records(half + $0..<half + $0 + 1) }, inputIndex: { half + $0 })
        return (path, runs)
    }

    /// The third write fails for want of room, later ones land: the seal from memory succeeds.
    @Test func test_update_sealsFromMemoryWhenTheFolderHasNoRoomBesideTheRuns() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let records = Self.records(3_000)
        let (path, runs) = try Self.vaultAndRuns(directory, records)
        var system = SystemCalls.live
        let calls = Counter()
        system.write = { fd, buffer, count in calls.next() == 2 ? failing(ENOSPC) : Glibc.write(fd, buffer, count) }
        try VaultStore(path: path, system: system).update(password: password("pw"), limits: testLimits) { unlocked in
            let put = try unlocked.vault.put(incoming: runs)
            #expect(put)
        }
        #expect(runs.descriptor == -1, "the runs were not brought into memory")
        let reopened = try VaultStore(path: path).open(password: password("pw"), limits: testLimits)
        var reference = Vault()
        try reference.put(contentsOf: ImportedEntries(written: .memory(records), renamings: []), now: 0)
        let content = try reopened.vault.encodedContent()
        #expect(content == (try reference.encodedContent()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["v.vault", "v.vault.lock"])
    }

    /// No room even for the vault alone: the error says the records were in memory already, and the
    /// vault and its folder are as they were.
    @Test func test_update_saysSoWhenTheVaultAloneHasNoRoom() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let (path, runs) = try Self.vaultAndRuns(directory, Self.records(3_000))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var system = SystemCalls.live
        let calls = Counter()
        system.write = { fd, buffer, count in calls.next() >= 2 ? failing(ENOSPC) : Glibc.write(fd, buffer, count) }
        do {
            try VaultStore(path: path, system: system).update(password: password("pw"), limits: testLimits) { unlocked in
                _ = try unlocked.vault.put(incoming: runs)
            }
            Issue.record("a seal with no room succeeded")
        } catch let error as VaultError {
            guard case .io(let operation, let folder, let code) = error else { Issue.record("unexpected \(error)"); return }
            #expect(code == ENOSPC && folder == directory.url.path && operation.contains("already brought into memory"), "\(error)")
            #expect(error.isOutOfSpace)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == ["v.vault", "v.vault.lock"])
    }
}
