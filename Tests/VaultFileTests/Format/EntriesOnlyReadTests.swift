import CSodium
import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFile
@testable import VaultFormat
@testable import VaultModel

/// Reading a vault with history for its entries only (`get`; `VaultStore.readsEntriesOnly`,
/// `HistorySkim`): the same entries and the same errors as a full read, every chunk still
/// authenticated, the history chunks not kept.
@Suite struct EntriesOnlyReadTests {
    static let t: Int64 = 1_764_000_000_000

    /// A vault of a few entries whose history fills several 64 KiB chunks after them.
    static func historyVault() throws -> Vault {
        var vault = Vault(history: HistoryPolicy(versions: 20, byteBudget: 1 << 22, trashLimit: 10))
        var generator = SplitMix(seed: 3)
        for round in 0..<8 {
            try vault.setValue((0..<40_000).map { _ in generator.nextByte() }, for: "big", now: t + Int64(round))
        }
        try vault.setValue(Array("hello".utf8), for: "a/small", now: t)
        try vault.setField("user", value: Array("me".utf8), for: "a/small", now: t + 1)
        return vault
    }

    private func store(_ directory: TemporaryDirectory, _ bytes: [UInt8], entriesOnly: Bool) throws -> VaultStore {
        let path = directory.path("v.vault")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var store = VaultStore(path: path)
        store.readsEntriesOnly = entriesOnly
        return store
    }

    // MARK: - open (entries only)

    @Test func test_open_entriesOnlyReadsTheSameEntriesAndKeepsNoHistory() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let vault = try Self.historyVault()
        let sealed = try VaultCodec.create(vault, password: password("pw"), kdf: testKDF).seal()
        #expect(sealed.count > 4 * 65_536, "the history spans chunks after the entries'")
        let full = try store(directory, sealed, entriesOnly: false).open(password: password("pw"), limits: testLimits)
        let skimmed = try store(directory, sealed, entriesOnly: true).open(password: password("pw"), limits: testLimits)
        #expect(skimmed.vault.names == full.vault.names)
        for name in full.vault.names { #expect(skimmed.vault.entry(name) == full.vault.entry(name), "\(name)") }
        #expect(skimmed.vault.historyState?.isUnread == true && full.vault.historyState?.isUnread == false)
        #expect(try skimmed.vault.withValue(of: "a/small", part: .field("user")) { Array($0) } == Array("me".utf8))
        // A vault without history, or of one chunk, is read whole either way.
        let plain = try VaultCodec.create(try Self.historyVault().withoutHistoryForTest(), password: password("pw"), kdf: testKDF).seal()
        #expect(try store(directory, plain, entriesOnly: true).open(password: password("pw"), limits: testLimits).vault.historyState == nil)
    }

    /// Random vaults whose entries end anywhere around a chunk boundary (one of them exactly on
    /// it): the entries-only read gives the full read's entries, and skims whenever it can.
    @Test func test_open_entriesOnlyAgreesWithTheFullReadWhereverTheEntriesEnd() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        var generator = SplitMix(seed: 21)
        var skimmed = 0
        // The content before the entry's value: the length prefix (8), the content header (12),
        // the name length (2), the name "e" (1), two times (16) and the value length (4); after
        // it, the field count (1). The value's length puts the entries' end at `boundary + shift`.
        for shift in [-70, -1, 0, 1, 2, 17, 300, 40_000] {
            let boundary = 65_536
            let valueLength = boundary + shift - (8 + 12 + 2 + 1 + 16 + 4) - 1
            var vault = Vault(history: .standard)
            try vault.setValue((0..<200_000).map { _ in generator.nextByte() }, for: "e", now: Self.t)
            try vault.setValue((0..<valueLength).map { _ in generator.nextByte() }, for: "e", now: Self.t + 1)
            let sealed = try VaultCodec.create(vault, password: password("pw"), kdf: testKDF).seal()
            let full = try store(directory, sealed, entriesOnly: false).open(password: password("pw"), limits: testLimits)
            let partial = try store(directory, sealed, entriesOnly: true).open(password: password("pw"), limits: testLimits)
            #expect(partial.vault.entry("e") == full.vault.entry("e"), "entries end at the boundary \(shift >= 0 ? "+" : "")\(shift)")
            if partial.vault.historyState?.isUnread == true { skimmed += 1 }
        }
        #expect(skimmed >= 6, "the chunks after the entries were skimmed in most of the cases")
    }

    @Test func test_open_entriesOnlyStillAuthenticatesEveryChunk() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let sealed = try VaultCodec.create(try Self.historyVault(), password: password("pw"), kdf: testKDF).seal()
        // One bit flipped in the last chunk, in a middle one, and the last chunk cut off.
        var lastFlipped = sealed
        lastFlipped[sealed.count - 3] ^= 1
        var middleFlipped = sealed
        middleFlipped[sealed.count - 2 * 65_536] ^= 0x40
        let truncated = Array(sealed.dropLast(sealed.count % (65_536 + 17) + 1))
        for (what, bytes) in [("last chunk", lastFlipped), ("middle chunk", middleFlipped), ("truncated", truncated)] {
            #expect(throws: VaultError.self, "\(what)") {
                try store(directory, bytes, entriesOnly: true).open(password: password("pw"), limits: testLimits)
            }
            do {
                _ = try store(directory, bytes, entriesOnly: true).open(password: password("pw"), limits: testLimits)
            } catch let error as VaultError {
                guard case .payloadDamaged = error else { Issue.record("\(what): \(error)"); continue }
            }
        }
    }

    @Test func test_open_entriesOnlyChecksThePaddingOfTheChunksItDoesNotKeep() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let forge = try Forge()
        // The canary's content with a long history, then padding whose last byte is not zero.
        var vault = Vault(history: .standard)
        try vault.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: DamagedCorpusTests.canaryName, now: Self.t)
        var generator = SplitMix(seed: 5)
        try vault.setValue((0..<200_000).map { _ in generator.nextByte() }, for: "zz/large", now: Self.t)
        try vault.setValue([1], for: "zz/large", now: Self.t + 1)
        let content = try EntryCodec.encode(vault)
        let total = Payload.paddedLength(8 + content.count)
        #expect(total > 8 + content.count && total > 3 * 65_536)
        var raw = UInt64(content.count).littleEndianBytes8 + content + [UInt8](repeating: 0, count: total - 8 - content.count)
        raw[raw.count - 1] = 1
        let keepsHistory: (inout VaultHeader) -> Void = { $0.minorVersion = 2; $0.flags |= VaultHeader.historyFlag }
        let bytes = try forge.payload(rawPlaintext: raw, editHeader: keepsHistory)
        for entriesOnly in [false, true] {
            #expect(throws: VaultError.contentsDamaged("non-zero padding"), "entries only: \(entriesOnly)") {
                try store(directory, bytes, entriesOnly: entriesOnly).open(password: password(DamagedCorpusTests.password), limits: testLimits)
            }
        }
    }

    /// A history of about 4 MiB: the chunks after the entries are authenticated on two threads
    /// (`Payload.parallelRunLength`). Damage anywhere — either half, both, a REKEY tag in the first
    /// half that would throw the second half's state off — is reported as the full read reports it.
    @Test func test_open_entriesOnlyOnTwoThreadsReportsTheFirstDamageAsTheFullReadDoes() throws {
        let directory = try TemporaryDirectory(); defer { directory.remove() }
        let forge = try Forge()
        var generator = SplitMix(seed: 31)
        var vault = Vault(history: HistoryPolicy(versions: 80, byteBudget: 1 << 23, trashLimit: 10))
        try vault.setValue(Array(DamagedCorpusTests.canaryValue.utf8), for: DamagedCorpusTests.canaryName, now: Self.t)
        for round in 0..<78 {
            try vault.setValue((0..<60_000).map { _ in generator.nextByte() }, for: "zz/rotating", now: Self.t + Int64(round))
        }
        let content = try EntryCodec.encode(vault)
        let total = Payload.paddedLength(8 + content.count)
        let raw = UInt64(content.count).littleEndianBytes8 + content + [UInt8](repeating: 0, count: total - 8 - content.count)
        let chunks = stride(from: 0, to: raw.count, by: 65_536).map { Array(raw[$0..<min($0 + 65_536, raw.count)]) }
        #expect(chunks.count > 2 * Payload.parallelRunLength + 2)
        let keepsHistory: (inout VaultHeader) -> Void = { $0.minorVersion = 2; $0.flags |= VaultHeader.historyFlag }
        let message = crypto_secretstream_xchacha20poly1305_tag_message(), final = crypto_secretstream_xchacha20poly1305_tag_final()
        func sealed(tags: (Int) -> UInt8) throws -> [UInt8] {
            try forge.stream(chunks.enumerated().map { ($1, tags($0)) }, editHeader: keepsHistory)
        }
        let intact = try sealed { $0 == chunks.count - 1 ? final : message }
        let header = try VaultHeader.parse(intact, path: "v").length
        func flipped(_ chunk: Int) -> [UInt8] {
            var bytes = intact
            bytes[header + chunk * (65_536 + 17) + 1_000] ^= 4
            return bytes
        }
        let middle = chunks.count / 2
        var bothHalves = flipped(middle + 3)
        bothHalves[header + 5 * (65_536 + 17) + 9] ^= 1
        let cases: [(String, [UInt8])] = [
            ("intact", intact), ("first half", flipped(5)), ("second half", flipped(middle + 3)), ("both halves", bothHalves),
            ("a REKEY tag in the first half", try sealed { $0 == 6 ? crypto_secretstream_xchacha20poly1305_tag_rekey() : $0 == chunks.count - 1 ? final : message }),
            ("FINAL in the second half", try sealed { $0 == middle + 2 || $0 == chunks.count - 1 ? final : message }),
        ]
        let pw = password(DamagedCorpusTests.password)
        for (what, bytes) in cases {
            var outcomes: [String] = []
            for entriesOnly in [false, true] {
                do {
                    let opened = try store(directory, bytes, entriesOnly: entriesOnly).open(password: pw, limits: testLimits)
                    outcomes.append("opened \(opened.vault.entry(DamagedCorpusTests.canaryName)?.value.count ?? -1)")
                    #expect(opened.vault.historyState?.isUnread == entriesOnly, "\(what)")
                } catch {
                    outcomes.append("\(error)")
                }
            }
            #expect(outcomes[0] == outcomes[1], "\(what): full read \(outcomes[0]); entries only \(outcomes[1])")
            #expect(what == "intact" ? outcomes[0].hasPrefix("opened") : outcomes[0].contains("damaged at chunk"), "\(what): \(outcomes[0].prefix(200))")
        }
    }

    // MARK: - PlaintextBuffer.written

    @Test func test_plaintextBuffer_writtenBoundsTheWipe() throws {
        let buffer = try PlaintextBuffer(uninitializedCount: 3 * 4096)
        #expect(buffer.written == buffer.count)
        buffer.written = 4096
        #expect(buffer.written == 4096 && buffer.count == 3 * 4096)
    }
}

extension Vault {
    /// The same entries with no history (a format 1.0 vault).
    func withoutHistoryForTest() throws -> Vault {
        var plain = Vault()
        for name in names { try plain.put(entry(name)!, as: name, now: 0) }
        return plain
    }
}
