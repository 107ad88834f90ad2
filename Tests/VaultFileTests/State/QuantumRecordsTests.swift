import Foundation
import TestSupport
import Testing
@testable import VaultFile
import VaultFormat

/// The per-vault post-quantum records of the state folder (`QuantumRecords`, issue 41): what is
/// written is read back, anything else is no record, a record never goes back to an older
/// generation, and a post-quantum vault is found by the path it was last seen at.
@Suite struct QuantumRecordsTests {
    private static func record(_ status: PostQuantumStatus, generation: UInt64 = 5, path: String = "/v/t.vault") -> QuantumRecords.Record {
        QuantumRecords.Record(status: status, generation: generation, seen: 1_700_000_000, path: path)
    }

    // MARK: - Parsing

    @Test(arguments: [PostQuantumStatus.postQuantum, .againstOutsiders, .classical])
    func test_recordParsing_readsWhatItWrites(status: PostQuantumStatus) {
        for path in ["/v/t.vault", "/a\nb", "/\r\n/v", "/tmp/x y/ä.vault"] {
            let record = Self.record(status, generation: UInt64.max, path: path)
            #expect(QuantumRecords.Record(parsing: record.encoded) == record, "\(path)")
        }
    }

    @Test func test_recordParsing_refusesWhatItDidNotWrite() {
        let text = String(decoding: Self.record(.postQuantum).encoded, as: UTF8.self)
        let cases = [
            text.replacingOccurrences(of: "vaultfile-quantum 1", with: "vaultfile-quantum 2"),
            text.replacingOccurrences(of: "status post-quantum", with: "status quantum"),
            text.replacingOccurrences(of: "status post-quantum", with: "status  post-quantum"),
            text.replacingOccurrences(of: "generation 5", with: "generation -5"),
            text.replacingOccurrences(of: "seen 1700000000", with: "seen 253402300800"),
            text.replacingOccurrences(of: "path /v/t.vault", with: "path v/t.vault"),
            String(text.dropLast()),
            "",
        ]
        for bad in cases {
            #expect(QuantumRecords.Record(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(QuantumRecords.Record(parsing: Array(repeating: 0x0A, count: StateFolder.maxRecordLength + 1)) == nil)
    }

    // MARK: - Writing and finding

    @Test func test_write_neverGoesBackToAnOlderGenerationAndFindsThePathOfAPostQuantumVault() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let records = QuantumRecords(state: StateFolder(path: directory.path("state")))
        let vault = [UInt8](repeating: 1, count: 16), other = [UInt8](repeating: 2, count: 16)
        #expect(try records.record(of: vault) == nil)
        try records.write(Self.record(.postQuantum, generation: 9), vault: vault)
        try records.write(Self.record(.classical, generation: 8), vault: vault)
        #expect(try records.record(of: vault)?.status == .postQuantum)
        try records.write(Self.record(.classical, generation: 9), vault: vault)
        #expect(try records.record(of: vault)?.status == .classical)
        // Only a post-quantum record names its path for another vault found there.
        #expect(records.otherPostQuantumVault(lastSeenAt: "/v/t.vault", than: other) == nil)
        try records.write(Self.record(.againstOutsiders, generation: 10), vault: vault)
        let found = records.otherPostQuantumVault(lastSeenAt: "/v/t.vault", than: other)
        #expect(found?.id == String(repeating: "01", count: 16) && found?.record.status == .againstOutsiders)
        #expect(records.otherPostQuantumVault(lastSeenAt: "/v/t.vault", than: vault) == nil)
        #expect(records.otherPostQuantumVault(lastSeenAt: "/v/other.vault", than: other) == nil)
        // A damaged record is no record: the next status seen replaces it.
        try Data("vaultfile-quantum 1\nstatus ???\n".utf8).write(to: URL(fileURLWithPath: directory.path("state/" + String(repeating: "01", count: 16) + ".quantum")))
        #expect(try records.record(of: vault) == nil)
    }

    @Test func test_canonical_namesOneFileOnePathHoweverItIsSpelled() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path("real/sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.path("link"), withDestinationPath: directory.path("real"))
        let real = SeenGenerations.canonical(directory.path("real/t.vault"))
        for spelling in ["real/sub/../t.vault", "real//./t.vault", "link/t.vault", "link/sub/../t.vault"] {
            #expect(SeenGenerations.canonical(directory.path(spelling)) == real, "\(spelling)")
        }
        // A folder that does not exist is normalised lexically.
        #expect(SeenGenerations.canonical("/nowhere//a/./b/../t.vault") == "/nowhere/a/t.vault")
    }

    @Test func test_write_keepsEveryPathAVaultWasTakenAt() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let records = QuantumRecords(state: StateFolder(path: directory.path("state")))
        let vault = [UInt8](repeating: 1, count: 16), other = [UInt8](repeating: 2, count: 16)
        try records.write(Self.record(.postQuantum, generation: 3, path: "/a/t.vault"), vault: vault)
        try records.write(Self.record(.postQuantum, generation: 4, path: "/b/t.vault"), vault: vault)
        #expect(records.otherPostQuantumVault(lastSeenAt: "/a/t.vault", than: other)?.id == String(repeating: "01", count: 16))
        #expect(records.otherPostQuantumVault(lastSeenAt: "/b/t.vault", than: other)?.id == String(repeating: "01", count: 16))
        #expect(records.vaultTaken(at: "/c/t.vault") == nil)
    }
}
