import Foundation
import Testing
@testable import VaultFile
@testable import VaultModel

/// The rules of `KeyLineage` that issue 39's re-test added, on a record without a vault: a copy
/// holding any retired slot key, a rotation here superseding every file key seen, the keys of the
/// lineage kept through an accept, a version 2 record's minted key read as one of them, and the
/// slots a rotation out of an old key may keep (the final re-test).
@Suite struct KeyLineageRulesTests {
    private func id(_ byte: UInt8) -> String { String(repeating: String(format: "%02x", byte), count: 16) }

    /// A view of a copy under file key `key` at `generation`, holding the slot keys `slots` (the
    /// secret-derived ones `secret`, all when nil), opened through `opened`.
    private func view(_ key: UInt8, _ generation: UInt64, slots: [UInt8], opened: UInt8? = nil, secret: [UInt8]? = nil) -> KeyLineage.View {
        KeyLineage.View(vaultID: [UInt8](repeating: 9, count: 16), fileKey: id(key), generation: generation, slotKeys: slots.map(id),
                        opened: opened.map { key in (slots.firstIndex(of: key) ?? 0, id(key)) }, secret: secret?.map(id))
    }

    /// The owner's copy (file key 1: his password 10, his recipient 11, alice's password 12), then his
    /// removal of alice with his password (file key 2: password re-salted to 20).
    private func removal() -> RetiredKeys.Record {
        var record = RetiredKeys.Record()
        let opened = view(1, 5, slots: [10, 11, 12], opened: 10, secret: [10, 12])
        KeyLineage.adopt(opened, from: .opened, into: &record, now: 100)
        record.retire(fileKey: id(1), superseded: false, at: 200)
        KeyLineage.adopt(view(2, 6, slots: [20, 11], opened: 20, secret: [20]), from: .wroteHere(replaced: opened), into: &record, now: 200)
        return record
    }

    @Test func test_verdict_aCopyHoldingARetiredSlotKeyIsRefusedWhicheverSlotOpensIt() {
        let record = removal()
        // Opened through the owner's recipient, holding his old password slot (10), retired by the removal.
        #expect(KeyLineage.verdict(view(3, 9, slots: [10, 11, 20], opened: 11), record: record)
                == .refused(.holdsRetiredSlotKey(slots: [0], retired: 200, fingerprints: ["x25519:" + String(id(10).prefix(16))])))
        #expect(KeyLineage.verdict(view(3, 9, slots: [20, 11], opened: 11), record: record) == .taken, "a member's rotation elsewhere")
    }

    @Test func test_adopt_aRotationHereSupersedesEveryOtherFileKeySeen() {
        var record = RetiredKeys.Record()
        let opened = view(1, 5, slots: [10, 11, 12], opened: 10)
        KeyLineage.adopt(opened, from: .opened, into: &record, now: 100)
        // A stick alice rekeyed while a member, read here at a lower generation: seen, not superseded.
        KeyLineage.adopt(view(7, 4, slots: [10, 11, 13], opened: 10), from: .opened, into: &record, now: 110)
        #expect(record.hasSeen(fileKey: id(7)) && record.retired(fileKey: id(7)) == nil)
        record.retire(fileKey: id(1), superseded: false, at: 200)
        KeyLineage.adopt(view(2, 6, slots: [20, 11], opened: 20), from: .wroteHere(replaced: opened), into: &record, now: 200)
        #expect(record.retired(fileKey: id(7)) == .init(id: id(7), at: 200, superseded: true))
        #expect(KeyLineage.verdict(view(7, 12, slots: [10, 11, 13], opened: 11), record: record) == .refused(.supersededFileKey(since: 200)))
    }

    @Test func test_adopt_anAcceptKeepsALineageKeyAndARecipientNeverBecomesOne() {
        var record = removal()
        #expect(record.lineageKeys.map(\.key) == [id(20)])
        // The owner's passwd on his laptop (password 30), accepted here.
        let laptop = view(3, 7, slots: [30, 11], opened: 30, secret: [30])
        #expect(KeyLineage.verdict(laptop, record: record) == .refused(.unknownLineage(rotated: 200, expected: ["x25519:" + String(id(20).prefix(16))])))
        KeyLineage.adopt(laptop, from: .accepted, into: &record, now: 300)
        #expect(record.lineageKeys.map(\.key) == [id(30)], "the laptop's new password key, not the recipient")
        // A copy only the recipient opens, under a file key never seen: refused.
        #expect(KeyLineage.verdict(view(4, 20, slots: [11], opened: 11), record: record)
                == .refused(.unknownLineage(rotated: 300, expected: ["x25519:" + String(id(30).prefix(16))])))
        // A copy with no secret-derived key new to the lineage keeps the old one rather than none.
        KeyLineage.adopt(view(5, 8, slots: [11, 31], opened: 11, secret: []), from: .accepted, into: &record, now: 400)
        #expect(record.lineageKeys.map(\.key) == [id(30)])
    }

    @Test func test_recordParsing_aVersion2MintedKeyIsALineageKey() {
        let text = "vaultfile-retired-keys 2\ns \(id(1)) 3\nc \(id(1))\np \(id(5))\nm \(id(5)) 13\nl \(id(6)) 14 -\n"
        let record = RetiredKeys.Record(parsing: Array(text.utf8))
        #expect(record.lineageKeys == [.init(key: id(5), at: 13, fingerprint: nil)], "an l line is version 3's only")
        #expect(String(decoding: record.encoded(), as: UTF8.self).hasSuffix("l \(id(5)) 13 -\n"))
    }

    @Test func test_unseenKept_namesOnlyTheSlotsOfTheOldCopyThatTheCopyTakenLastLacks() {
        let record = removal()
        // Alice's clone under the retired file key 1, given her keyfile slot 13; the owner's `slot rm alice`
        // with his password re-salts 10 to 40 and adds nothing: her keyfile would keep the new key.
        let clone = view(1, 9, slots: [10, 11, 12, 13], opened: 10)
        let verdict = KeyLineage.verdict(clone, record: record)
        #expect(verdict == .retiredHere(200))
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11, 13], opened: 40), opened: clone, verdict: verdict, record: record) == [id(13)])
        // Dropped in the same rotation, or a slot the command adds (50): nothing to name.
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11], opened: 40), opened: clone, verdict: verdict, record: record).isEmpty)
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11, 50], opened: 40), opened: clone, verdict: verdict, record: record).isEmpty)
        // A copy taken is not a way out of an old key; a record without the slots of the copy taken last compares nothing.
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11, 13], opened: 40), opened: clone, verdict: .taken, record: record).isEmpty)
        var old = record
        old.currentSlotKeys = []
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11, 13], opened: 40), opened: clone, verdict: verdict, record: old).isEmpty)
        // A superseded key's way out is judged the same.
        #expect(KeyLineage.unseenKept(view(4, 10, slots: [40, 11, 13], opened: 40), opened: clone, verdict: .refused(.supersededFileKey(since: 200)),
                                      record: record) == [id(13)])
    }
}
