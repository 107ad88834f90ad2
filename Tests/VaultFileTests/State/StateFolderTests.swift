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

/// The state folder: where it is, how it is created, and records that several writers never lose.
@Suite struct StateFolderTests {
    // MARK: - resolve

    @Test func test_resolve_prefersTheVariableThenXDGThenHome() {
        #expect(StateFolder.resolve(stateDirectory: "/s", xdgStateHome: "/x", home: "/h")?.path == "/s")
        #expect(StateFolder.resolve(stateDirectory: nil, xdgStateHome: "/x", home: "/h")?.path == "/x/vaultfile")
        #expect(StateFolder.resolve(stateDirectory: nil, xdgStateHome: "relative", home: "/h")?.path == "/h/.local/state/vaultfile",
                "a relative XDG_STATE_HOME is ignored, as the XDG specification says")
        #expect(StateFolder.resolve(stateDirectory: nil, xdgStateHome: nil, home: nil) == nil)
    }

    // MARK: - update

    @Test func test_update_createsMissingFolders0700AndRecords0600() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let state = StateFolder(path: directory.path("a/b/state"))
        #expect(try state.read("r") == nil, "reading creates nothing")
        #expect(!FileManager.default.fileExists(atPath: state.path))
        #expect(try state.update("r") { _ in Array("one\n".utf8) })
        #expect(try state.read("r") == Array("one\n".utf8))
        for folder in ["a", "a/b", "a/b/state"] { #expect(try mode(directory.path(folder)) == 0o700, "\(folder)") }
        #expect(try mode(state.path + "/r") == 0o600)
        #expect(try state.update("r") { current in current == Array("one\n".utf8) ? nil : [] } == false, "nil leaves the record")
        #expect(try state.read("r") == Array("one\n".utf8))
    }

    @Test func test_update_aFolderThatCannotBeMadeIsAProblemNamingIt() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        // A file where a folder should be fails even for root, which permission bits do not stop.
        _ = FileManager.default.createFile(atPath: directory.path("file"), contents: Data())
        let state = StateFolder(path: directory.path("file/state"))
        #expect(throws: StateFolder.Problem.self) { try state.update("r") { _ in [1] } }
        do {
            try state.update("r") { _ in [1] }
        } catch {
            #expect(error.folder == state.path)
            #expect(error.description.contains("Not a directory"), "\(error)")
        }
        #expect(try state.read("r") == nil, "a folder that is not there holds no record")
    }

    // MARK: - SeenGenerations

    @Test func test_note_onlyEverRaisesTheRecord() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let seen = SeenGenerations(state: StateFolder(path: directory.path("state")))
        let header = try sealedHeader(generation: 5)
        #expect(try seen.note(header, path: "/v/a.vault", now: 100))
        #expect(try seen.note(try sealedHeader(generation: 3, id: header.vaultID), path: "/v/old.vault", now: 200) == false)
        #expect(try seen.note(try sealedHeader(generation: 5, id: header.vaultID), path: "/v/fork.vault", now: 300) == false,
                "an equal generation keeps the first header seen")
        let record = try #require(try seen.record(for: header.vaultID))
        #expect(record == SeenGenerations.Record(generation: 5, headerHash: SeenGenerations.headerHash(header), seen: 100, path: "/v/a.vault"))
        #expect(try seen.note(try sealedHeader(generation: 6, id: header.vaultID), path: "/v/a.vault", now: 400))
        #expect(try seen.record(for: header.vaultID)?.generation == 6)
    }

    @Test func test_compare_tellsEveryCaseApart() throws {
        let header = try sealedHeader(generation: 5)
        let record = SeenGenerations.Record(generation: 5, headerHash: SeenGenerations.headerHash(header), seen: 1, path: "/v")
        #expect(SeenGenerations.compare(header, with: nil) == .unseen)
        #expect(SeenGenerations.compare(header, with: record) == .same(record))
        var lower = record; lower.generation = 4
        #expect(SeenGenerations.compare(header, with: lower) == .newer(lower))
        var higher = record; higher.generation = 6
        #expect(SeenGenerations.compare(header, with: higher) == .older(higher))
        let fork = try sealedHeader(generation: 5, id: header.vaultID)
        #expect(SeenGenerations.compare(fork, with: record) == .diverged(record), "another seal of one generation has another hash")
    }

    @Test func test_record_roundTripsAPathWithANewlineAndRefusesMalformedFiles() throws {
        let record = SeenGenerations.Record(generation: 9, headerHash: [UInt8](repeating: 0xAB, count: 32), seen: 1_700_000_000, path: "/odd\nname.vault")
        #expect(SeenGenerations.Record(parsing: record.encoded) == record)
        let good = String(decoding: record.encoded, as: UTF8.self)
        for bad in ["", "junk\n", good.replacingOccurrences(of: "vaultfile-seen 1", with: "vaultfile-seen 2"), good.replacingOccurrences(of: "generation 9", with: "generation -1"),
                    good.replacingOccurrences(of: "seen 1700000000", with: "seen 99999999999999"), String(good.dropLast())] {
            #expect(SeenGenerations.Record(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    /// Sixteen threads record generations 1…16 of one vault and one generation each of sixteen
    /// vaults at once: every vault is recorded, and the shared record ends at the highest.
    @Test func test_note_concurrentWritersLoseNoRecord() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let seen = SeenGenerations(state: StateFolder(path: directory.path("state")))
        let shared = try sealedHeader(generation: 1)
        var headers: [VaultHeader] = []
        for generation in 1...16 {
            headers.append(try sealedHeader(generation: UInt64(generation), id: shared.vaultID))
            headers.append(try sealedHeader(generation: UInt64(generation)))
        }
        // Threads, not tasks: each write blocks on the folder's lock, and the cooperative pool has a thread per core.
        let failures = Failures()
        let group = DispatchGroup()
        for header in headers.shuffled() {
            group.enter()
            Thread {
                do { try seen.note(header, path: "/v/x.vault") } catch { failures.add(error) }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(failures.errors.isEmpty, "\(failures.errors)")
        #expect(try seen.record(for: shared.vaultID)?.generation == 16)
        for header in headers where header.vaultID != shared.vaultID {
            #expect(try seen.record(for: header.vaultID)?.generation == header.generation)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path("state"))
        #expect(names.filter { $0.hasSuffix(".generation") }.count == 17)
        #expect(!names.contains { $0.contains("vaultfile-tmp") }, "no temporary file left: \(names)")
    }

    // MARK: - claimNotice

    @Test func test_claimNotice_isDueOnceAnInterval() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let state = StateFolder(path: directory.path("state"))
        let id = [UInt8](repeating: 1, count: 16)
        #expect(try state.claimNotice("weak-kdf", vault: id, every: 86_400, now: 1_000_000))
        #expect(try state.claimNotice("weak-kdf", vault: id, every: 86_400, now: 1_000_001) == false)
        #expect(try state.claimNotice("weak-kdf", vault: [UInt8](repeating: 2, count: 16), every: 86_400, now: 1_000_001), "per vault")
        #expect(try state.claimNotice("weak-kdf", vault: id, every: 86_400, now: 1_086_399) == false)
        #expect(try state.claimNotice("weak-kdf", vault: id, every: 86_400, now: 1_086_400))
        #expect(try state.claimNotice("weak-kdf", vault: id, every: 86_400, now: 5), "a clock set back makes it due")
    }

    // MARK: - Helpers

    private func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }
}

/// Errors collected from threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [any Error] = []
    func add(_ error: any Error) { lock.withLock { collected.append(error) } }
    var errors: [any Error] { lock.withLock { collected } }
}

/// A header of a fresh seal (so of its own hash), at `generation`, of vault `id` when given, else of a new vault.
func sealedHeader(generation: UInt64, id: [UInt8]? = nil) throws -> VaultHeader {
    let unlocked = try VaultCodec.create(Vault(), password: password("pw"), kdf: testKDF)
    _ = try unlocked.seal()
    var header = unlocked.header
    header.generation = generation
    if let id { header.vaultID = id }
    return header
}
