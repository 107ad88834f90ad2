#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The `.members` record (`MemberTrust`): written whole and private, read back as written, bounded,
/// and refused (a problem, never an empty record) when damaged.
@Suite struct MemberTrustRecordTests {
    private func folder(_ directory: TemporaryDirectory) -> MemberTrust {
        MemberTrust(state: StateFolder(path: directory.path("state")))
    }

    // MARK: - update and record

    @Test func test_update_writesARecord0600ThatReadsBackAsWritten() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trust = folder(directory)
        let alice = try TrustMember("alice"), bob = try TrustMember("bob, with spaces\nand a newline", type: 4)
        var copy = TrustCopy([alice, bob], generation: 7)
        copy.tombstones = [Tombstone(removed: randomBytes(16), remover: alice.key.id, generation: 6)]
        #expect(try trust.record(of: TrustCopy.vaultID) == nil)
        #expect(try trust.update(TrustCopy.vaultID) { $0.accept(try! copy.evidence(), path: "/v/a b.vault", recordHeader: true) })
        let name = SeenGenerations.Record.hex(TrustCopy.vaultID) + ".members"
        var info = stat()
        #expect(stat(directory.path("state/" + name), &info) == 0 && info.st_mode & 0o777 == 0o600)
        let record = try #require(try trust.record(of: TrustCopy.vaultID))
        #expect(record.pinned.map(\.label) == ["alice", "bob, with spaces\nand a newline"])
        #expect(record.pinned.map(\.key) == [alice.key, bob.key])
        #expect(record.removed.count == 1 && record.removed[0].generation == 6 && record.removed[0].remover == alice.key.id)
        #expect(record.headers.map(\.generation) == [7] && record.firstSigned == 7 && record.paths == ["/v/a b.vault"])
        #expect(try MemberTrust.Record(parsing: record.encoded()) == record)
        #expect(try trust.update(TrustCopy.vaultID) { _ in } == false, "an unchanged record is not rewritten")
    }

    @Test func test_record_aDamagedRecordIsAProblemAndIsNeverOverwritten() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trust = folder(directory)
        try trust.update(TrustCopy.vaultID) { $0.accept(try! TrustCopy([try! TrustMember("alice")]).evidence(), path: "/v/x", recordHeader: true) }
        let path = directory.path("state/" + MemberTrust.recordName(TrustCopy.vaultID))
        for damaged in ["vaultfile-members 1\nm 0 3 zz -\n", "vaultfile-members 2\n", "not a record\n", "vaultfile-members 1\nsigned 1\nsigned 2\n",
                        "vaultfile-members 1\nsigned -1\n", "vaultfile-members 1"] {
            try Data(damaged.utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: StateFolder.Problem.self, "\(damaged)") { try trust.record(of: TrustCopy.vaultID) }
            #expect(throws: StateFolder.Problem.self) { try trust.update(TrustCopy.vaultID) { $0.firstSigned = 1 } }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == damaged, "a damaged record is left for the user")
        }
        do {
            _ = try trust.record(of: TrustCopy.vaultID)
        } catch {
            #expect(error.description.contains("remove it to trust this vault on first use again"))
        }
    }

    @Test func test_record_aRecordLongerThanTheLimitIsAProblem() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trust = folder(directory)
        try trust.state.update(MemberTrust.recordName(TrustCopy.vaultID), limit: MemberTrust.maxLength + 10) { _ in
            Array(("vaultfile-members 1\n" + String(repeating: "h 1 00000000000000000000000000000000\n", count: 2000)).utf8)
        }
        #expect(throws: StateFolder.Problem.self) { try trust.record(of: TrustCopy.vaultID) }
    }

    // MARK: - trim

    @Test func test_trim_keepsTheNewestOfEveryList() throws {
        var record = MemberTrust.Record()
        let member = try TrustMember("m")
        for generation in 0..<600 as Range<UInt64> {
            var copy = TrustCopy([member], generation: generation)
            copy.tombstones = [Tombstone(removed: randomBytes(16), remover: member.key.id, generation: generation)]
            record.accept(try copy.evidence(), path: "/v", recordHeader: true)
            record.retired.append(MemberTrust.LeftMember(id: randomBytes(16), remover: nil, generation: generation))
        }
        record.trim()
        #expect(record.removed.count == MemberTrust.Caps.removed && record.removed.first?.generation == 344)
        #expect(record.headers.count == MemberTrust.Caps.headers && record.headers.last?.generation == 599)
        #expect(record.retired.count == MemberTrust.Caps.retired)
        #expect(record.encoded().count < MemberTrust.maxLength)
        #expect(try MemberTrust.Record(parsing: record.encoded()) == record)
    }

    @Test func test_encoded_theLongestRecordStaysUnderTheLimit() throws {
        var record = MemberTrust.Record()
        let label = String(repeating: "é", count: 127)
        record.pinned = (0..<MemberTrust.Caps.pinned).map { MemberTrust.PinnedMember(position: $0, key: MemberKey(type: 6, bytes: randomBytes(51)), label: label) }
        record.removed = (0..<MemberTrust.Caps.removed).map { MemberTrust.LeftMember(id: randomBytes(16), remover: randomBytes(16), generation: .max - UInt64($0)) }
        record.retired = (0..<MemberTrust.Caps.retired).map { _ in MemberTrust.LeftMember(id: randomBytes(16), remover: nil, generation: .max) }
        record.headers = (0..<MemberTrust.Caps.headers).map { SealAncestor(generation: .max - UInt64($0), headerHash: randomBytes(16)) }
        record.firstSigned = .max
        record.paths = (0..<MemberTrust.Caps.paths).map { "/\($0)" + String(repeating: "p", count: MemberTrust.Caps.pathLength - 3) }
        record.trim()
        #expect(record.encoded().count < MemberTrust.maxLength)
        #expect(try MemberTrust.Record(parsing: record.encoded()) == record)
    }

    // MARK: - otherVault

    @Test func test_otherVault_namesAnotherVaultLastSeenAtThePath() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let trust = folder(directory)
        #expect(try trust.otherVault(lastSeenAt: "/v/team.vault", than: TrustCopy.vaultID) == nil, "no folder yet")
        let other = [UInt8](repeating: 0x11, count: 16)
        try trust.update(other) { $0.accept(try! TrustCopy([try! TrustMember("a")]).evidence(), path: "/v/team.vault", recordHeader: false) }
        #expect(try trust.otherVault(lastSeenAt: "/v/team.vault", than: TrustCopy.vaultID) == SeenGenerations.Record.hex(other))
        #expect(try trust.otherVault(lastSeenAt: "/v/team.vault", than: other) == nil, "its own record does not count")
        #expect(try trust.otherVault(lastSeenAt: "/v/elsewhere.vault", than: TrustCopy.vaultID) == nil)
    }
}

/// What a copy accepted teaches of keys that left before this machine saw them (the attack review).
@Suite struct MemberTrustRetiredAdderTests {
    @Test func test_accept_retiresAnAdderNoSlotHoldsThoughNeverPinnedHere() throws {
        // mallory re-salted (K0 → K1, K1 attested by K0) before this machine first opened the vault.
        let alice = try TrustMember("alice"), k0 = try TrustMember("mallory", type: 4)
        let k1 = try k0.resalted()
        var copy = TrustCopy([alice, k1])
        copy.slots[1].adder = k0
        var record = MemberTrust.Record()
        record.accept(try copy.evidence(), path: "/v", recordHeader: true)
        #expect(record.retired.map(\.id) == [k0.key.id], "K0 left the vault: whoever knew it must not sign again here")
        // Her old copy, where alice attested K0 and K0 signs, is then refused, though alice's attestation traces it.
        var planted = TrustCopy([alice, k0], signer: k0, generation: 9)
        planted.slots[1].adder = alice
        let judgement = MemberTrust.judge(try planted.copy(), record: record, otherVaultAtPath: nil, comparesGenerations: false)
        #expect(judgement.findings.contains(.retiredSigner(fingerprint: k0.key.fingerprint)), "\(judgement.findings)")
        #expect(judgement.findings.contains(.retiredKeyInside(slot: 1, fingerprint: k0.key.fingerprint)), "\(judgement.findings)")
    }
}
