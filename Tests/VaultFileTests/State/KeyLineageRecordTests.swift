import Foundation
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// The record of `RetiredKeys` (version 3, reading versions 1 and 2) and the rules of `KeyLineage` on it,
/// without a vault: what is read, what is kept, what a damaged record does.
@Suite struct KeyLineageRecordTests {
    private func id(_ byte: UInt8) -> String { String(repeating: String(format: "%02x", byte), count: 16) }

    /// A view of a copy under file key `key` at `generation`, holding the slot keys `slots`, opened through `opened`.
    private func view(_ key: UInt8, _ generation: UInt64, slots: [UInt8], opened: UInt8? = nil) -> KeyLineage.View {
        KeyLineage.View(vaultID: [UInt8](repeating: 9, count: 16), fileKey: id(key), generation: generation, slotKeys: slots.map(id),
                        opened: opened.map { (0, id($0)) })
    }

    // MARK: - Parsing

    @Test func test_recordParsing_readsAVersion1RecordAsKeysRotatedHere() {
        let text = "vaultfile-retired-keys 1\n\(id(1)) 100\n\(id(2)) 200\n"
        let record = RetiredKeys.Record(parsing: Array(text.utf8))
        #expect(record.retiredFileKeys == [.init(id: id(1), at: 100, superseded: false), .init(id: id(2), at: 200, superseded: false)])
        #expect(record.seenFileKeys.isEmpty && record.minted == nil && record.retiredSlotKeys.isEmpty)
        // Written back as version 3, which reads the same.
        let encoded = String(decoding: record.encoded(), as: UTF8.self)
        #expect(encoded == "vaultfile-retired-keys 3\nk \(id(1)) 100\nk \(id(2)) 200\n")
        #expect(RetiredKeys.Record(parsing: record.encoded()) == record)
    }

    @Test func test_recordParsing_version3RoundTripsEveryList() {
        var record = RetiredKeys.Record()
        record.retire(fileKey: id(1), superseded: false, at: 10)
        record.retire(fileKey: id(2), superseded: true, at: 11)
        record.seenFileKeys = [(id(3), 5), (id(4), UInt64.max)]
        record.currentFileKey = id(4)
        record.currentSlotKeys = [id(5), id(6)]
        record.retire(slotKey: id(7), at: 12)
        record.lineageKeys = [.init(key: id(5), at: 13, fingerprint: "0123456789abcdef"), .init(key: id(6), at: 14, fingerprint: nil)]
        let text = String(decoding: record.encoded(), as: UTF8.self)
        #expect(text == """
            vaultfile-retired-keys 3
            k \(id(1)) 10
            u \(id(2)) 11
            s \(id(3)) 5
            s \(id(4)) 18446744073709551615
            c \(id(4))
            p \(id(5))
            p \(id(6))
            x \(id(7)) 12
            l \(id(5)) 13 0123456789abcdef
            l \(id(6)) 14 -

            """)
        #expect(RetiredKeys.Record(parsing: record.encoded()) == record)
    }

    @Test func test_recordParsing_damagedLinesAndRecordsAreIgnored() {
        let lines = [
            "vaultfile-retired-keys 2", "k \(id(1)) 10", "k \(id(1).uppercased()) 10", "k \(id(2)) -5", "k \(id(2)) 99999999999999",
            "u \(id(3))", "s \(id(4)) 1e3", "s \(id(4)) +3", "x \(id(5)) 12 extra", "m short 13", "z \(id(6)) 1", "",
            "c \(id(7))", "p \(id(8))", "m \(id(9)) 14", "m \(id(10)) 15", "s \(id(1)) 4",
        ]
        let record = RetiredKeys.Record(parsing: Array(lines.joined(separator: "\n").utf8))
        #expect(record.retiredFileKeys == [.init(id: id(1), at: 10, superseded: false)])
        #expect(record.seenFileKeys.isEmpty, "a retired key is never also seen")
        #expect(record.currentFileKey == nil && record.currentSlotKeys.isEmpty, "a last copy never seen is forgotten")
        #expect(record.retiredSlotKeys.isEmpty)
        #expect(record.minted?.key == id(9), "the first minted key counts")
        // Not a record: empty, so it refuses nothing.
        for bytes in [Array("vaultfile-retired-keys 4\nk \(id(1)) 10\n".utf8), [0xFF, 0xFE, 0x0A], [],
                      Array(("vaultfile-retired-keys 2\n" + String(repeating: "k \(id(1)) 10\n", count: 200)).utf8)] {
            #expect(RetiredKeys.Record(parsing: bytes) == RetiredKeys.Record())
        }
        #expect(KeyLineage.verdict(view(1, 5, slots: []), record: RetiredKeys.Record(parsing: [0xFF])) == .taken)
    }

    // MARK: - Caps

    @Test func test_recordCaps_keepTheNewestOfEachListAndStayUnderTheRecordLimit() {
        var record = RetiredKeys.Record()
        for index in 0..<UInt8(100) {
            record.retire(fileKey: id(index), superseded: index % 2 == 0, at: 253_402_300_799)
            record.seenFileKeys.append((id(index &+ 100), UInt64.max))
            record.retire(slotKey: id(index), at: 253_402_300_799)
            record.currentSlotKeys.append(id(index &+ 100))
        }
        record.currentFileKey = id(101)
        for index in 0..<UInt8(10) { record.lineageKeys.append(.init(key: id(index &+ 200), at: 253_402_300_799, fingerprint: "0123456789abcdef")) }
        record.trim()
        #expect(record.lineageKeys.count == RetiredKeys.Caps.lineageKeys && record.lineageKeys.last?.key == id(209))
        #expect(record.retiredFileKeys.count == RetiredKeys.Caps.retiredFileKeys && record.retiredFileKeys.last?.id == id(99))
        #expect(record.seenFileKeys.count == RetiredKeys.Caps.seenFileKeys && record.seenFileKeys.contains { $0.id == id(101) },
                "the last copy's key stays among those seen")
        #expect(record.retiredSlotKeys.count == RetiredKeys.Caps.retiredSlotKeys && record.currentSlotKeys.count == 16)
        #expect(record.encoded().count < StateFolder.maxRecordLength, "\(record.encoded().count) bytes at the longest lines")
        #expect(RetiredKeys.Record(parsing: record.encoded()) == record)
    }

    // MARK: - The rules

    @Test func test_verdict_ordersRetiredSupersededSlotKeyThenLineage() {
        var record = RetiredKeys.Record()
        record.retire(fileKey: id(1), superseded: false, at: 10)
        record.retire(fileKey: id(2), superseded: true, at: 11)
        record.retire(slotKey: id(20), at: 12)
        record.seenFileKeys = [(id(3), 7)]
        record.minted = (id(21), 13)
        #expect(KeyLineage.verdict(view(1, 9, slots: [20], opened: 20), record: record) == .retiredHere(10))
        #expect(KeyLineage.verdict(view(2, 9, slots: [20], opened: 20), record: record) == .refused(.supersededFileKey(since: 11)))
        #expect(KeyLineage.verdict(view(3, 9, slots: [20], opened: 20), record: record) == .refused(.retiredSlotKey(slot: 0, retired: 12, fingerprint: "x25519:" + String(id(20).prefix(16)))))
        #expect(KeyLineage.verdict(view(4, 9, slots: [22]), record: record) == .refused(.unknownLineage(rotated: 13, expected: [])))
        #expect(KeyLineage.verdict(view(4, 9, slots: [22, 21]), record: record) == .taken, "holds the key minted here")
        #expect(KeyLineage.verdict(view(3, 9, slots: [22]), record: record) == .taken, "a file key seen here")
    }

    @Test func test_adopt_anUnseenKeySupersedesKeysSeenLowerAndRetiresTheSlotKeysItDropped() {
        var record = RetiredKeys.Record()
        KeyLineage.adopt(view(1, 5, slots: [10, 11, 12]), from: .opened, into: &record, now: 100)
        #expect(record.currentFileKey == id(1) && record.currentSlotKeys == [id(10), id(11), id(12)])
        // Another member removed slot 12 elsewhere: a new file key at a higher generation.
        KeyLineage.adopt(view(2, 7, slots: [10, 11]), from: .opened, into: &record, now: 200)
        #expect(record.retired(fileKey: id(1)) == .init(id: id(1), at: 200, superseded: true))
        #expect(record.retired(slotKey: id(12)) == 200 && record.currentFileKey == id(2))
        // An older key unseen here (an old commit) supersedes nothing and does not become the last copy.
        KeyLineage.adopt(view(3, 2, slots: [10, 13]), from: .opened, into: &record, now: 300)
        #expect(record.hasSeen(fileKey: id(3)) && record.retired(fileKey: id(2)) == nil && record.currentFileKey == id(2))
        // A copy taken raises its key's generation: a rotation made elsewhere of an older copy then supersedes nothing.
        KeyLineage.adopt(view(2, 40, slots: [10, 11]), from: .opened, into: &record, now: 350)
        KeyLineage.adopt(view(5, 9, slots: [10, 11]), from: .opened, into: &record, now: 360)
        #expect(record.retired(fileKey: id(2)) == nil && record.currentFileKey == id(2) && record.hasSeen(fileKey: id(5)))
        // A generation beyond the plausible records nothing.
        let before = record
        KeyLineage.adopt(view(4, 40 + (1 << 32) + 1, slots: []), from: .opened, into: &record, now: 400)
        KeyLineage.adopt(view(4, (1 << 63) + 1, slots: []), from: .opened, into: &record, now: 400)
        #expect(record == before)
        // A first open applies the ceiling alone.
        var first = RetiredKeys.Record()
        KeyLineage.adopt(view(6, 1 << 40, slots: []), from: .opened, into: &first, now: 500)
        #expect(first.hasSeen(fileKey: id(6)))
    }

    @Test func test_adopt_aRotationHereMintsTheResaltedKeyAndAnIdentityMintsNothing() {
        var record = RetiredKeys.Record()
        let opened = view(1, 5, slots: [10, 11, 12], opened: 10)
        KeyLineage.adopt(opened, from: .opened, into: &record, now: 100)
        KeyLineage.adopt(view(2, 6, slots: [20, 11], opened: 20), from: .wroteHere(replaced: opened), into: &record, now: 200)
        #expect(record.minted?.key == id(20) && record.retired(slotKey: id(10)) == 200 && record.retired(slotKey: id(12)) == 200)
        #expect(record.hasSeen(fileKey: id(2)) && record.currentFileKey == id(2))
        // Opened with an identity (slot 11 keeps its key): nothing minted, the earlier key kept while the copy holds it.
        let second = view(2, 6, slots: [20, 11], opened: 11)
        KeyLineage.adopt(view(3, 7, slots: [20, 11], opened: 11), from: .wroteHere(replaced: second), into: &record, now: 300)
        #expect(record.minted?.key == id(20))
        // A copy accepted that no longer holds it: its own secret-derived keys become the lineage (never none: issue 39,
        // F1), and it takes its own keys off the retired ones.
        KeyLineage.adopt(view(4, 9, slots: [10, 30], opened: 10), from: .accepted, into: &record, now: 400)
        #expect(record.lineageKeys.map(\.key) == [id(10), id(30)] && record.retired(slotKey: id(10)) == nil && record.retired(slotKey: id(20)) == 400)
    }
}
