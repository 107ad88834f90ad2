import KDF
import TestSupport
import Testing
@testable import VaultModel

/// The in-memory model and its encoding.
@Suite struct VaultModelTests {
    // MARK: - EntryName.validate

    @Test(arguments: ["db/password", "a", "prod/eu-west-1/api key", "ünïcødé/名前", String(repeating: "x", count: 1024)])
    func test_validate_acceptsPathLikeNames(name: String) throws {
        #expect(try EntryName.validate(name) == Array(name.utf8))
    }

    @Test(arguments: ["", "/lead", "trail/", "a//b", "a/./b", "../up", "a\nb", "tab\there", "nul\u{0}", "del\u{7F}",
                      String(repeating: "x", count: 1025)])
    func test_validate_rejectsBadNames(name: String) {
        #expect(throws: VaultError.self) { try EntryName.validate(name) }
    }

    @Test func test_validateField_acceptsExactlyLettersDigitsUnderscoreDotDash() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-".utf8)
        for byte in UInt8.min...UInt8.max {
            let accepted = [byte].withUnsafeBytes { EntryName.isValidField($0) }
            #expect(accepted == allowed.contains(byte), "byte \(byte)")
        }
    }

    // MARK: - EntryName.isValid

    /// The decoder's one-pass check must agree with `String(validating:)` plus the full name rules on every input.
    @Test func test_isValid_agreesWithTheFullRules() {
        var generator = SplitMix(seed: 11)
        // Bytes that sit on the edges of UTF-8 and of the name rules.
        let interesting: [UInt8] = [0x00, 0x1F, 0x20, 0x2E, 0x2F, 0x41, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                    0xC3, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF, 0x8F, 0x90]
        var samples: [[UInt8]] = ["a", ".", "..", "a/..", "a/.b", "/", "a//b", "é", "\u{85}", "\u{A0}", "\u{10FFFF}", "名前/x"].map { Array($0.utf8) }
        samples += [[0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
                    [UInt8](repeating: 0x61, count: 1024), [UInt8](repeating: 0x61, count: 1025), []]
        for _ in 0..<300_000 {
            let length = Int(generator.nextByte() % 20)  // past 8 and 16, the lengths checked a word at a time
            samples.append((0..<length).map { _ in
                let pick = generator.nextByte()
                return pick < 128 ? interesting[Int(pick) % interesting.count] : (pick < 192 ? 0x61 : generator.nextByte())
            })
        }
        // One edge byte at every place of an otherwise plain name, for the word-at-a-time path.
        for byte in interesting + [0x21, 0x2D, 0x30, 0x5F, 0x7B] {
            for length in 8...24 {
                for place in 0..<length {
                    var sample = [UInt8](repeating: 0x61, count: length)
                    sample[place] = byte
                    samples.append(sample)
                }
            }
        }
        // Two of '/', '.' and 'é' at every pair of places: empty, '.' and '..' components and
        // multi-byte characters inside a word and in the overlapping last word.
        for length in 8...17 {
            for first in 0..<length {
                for second in first + 1..<length {
                    for (a, b) in [(0x2F, 0x2F), (0x2F, 0x2E), (0x2E, 0x2F), (0xC3, 0xA9)] as [(UInt8, UInt8)] {
                        var sample = [UInt8](repeating: 0x61, count: length)
                        sample[first] = a
                        sample[second] = b
                        samples.append(sample)
                        if a == 0xC3 && second == first + 1 { samples.append(sample.map { $0 == 0x61 ? 0x2F : $0 }) }
                    }
                }
            }
        }
        var disagreements: [[UInt8]] = []
        for sample in samples {
            let fast = sample.withUnsafeBytes { EntryName.isValid(utf8: $0) }
            let full = String(validating: sample, as: UTF8.self) != nil
                && (try? EntryName.validate(utf8: sample, display: "")) != nil
            if fast != full { disagreements.append(sample) }
        }
        #expect(disagreements.isEmpty, "first disagreements: \(disagreements.prefix(5))")
    }

    @Test(arguments: ["", "with space", "slash/", "é", String(repeating: "f", count: 65)])
    func test_validateField_rejectsBadFieldNames(field: String) {
        #expect(throws: VaultError.self) { try EntryName.validateField(field) }
    }

    // MARK: - Vault editing

    @Test func test_setValue_sameValueChangesNothing() throws {
        var vault = Vault()
        try vault.setValue([1, 2], for: "a", now: 10)
        let before = vault
        try vault.setValue([1, 2], for: "a", now: 20)
        #expect(vault == before)
        try vault.setValue([3], for: "a", now: 30)
        #expect(vault.entry("a")?.created == 10 && vault.entry("a")?.modified == 30)
    }

    @Test func test_rename_refusesToClobberUnlessForced() throws {
        var vault = try sampleVault()
        #expect(throws: VaultError.entryExists("empty")) { try vault.rename("db/password", to: "empty") }
        try vault.rename("db/password", to: "empty", overwrite: true)
        #expect(vault.entry("db/password") == nil && vault.entry("empty")?.value == Array("hunter2".utf8))
        #expect(throws: VaultError.entryNotFound("nope")) { try vault.rename("nope", to: "x") }
    }

    @Test func test_remove_missingEntryIsNotFound() throws {
        var vault = try sampleVault()
        try vault.remove("empty")
        #expect(throws: VaultError.entryNotFound("empty")) { try vault.remove("empty") }
        #expect(VaultError.entryNotFound("x").category == .notFound)
    }

    @Test func test_names_areSortedByteWiseAndFilterByPrefix() throws {
        var vault = Vault()
        // put() stores names as given, as a vault written before names were normalised holds them
        // (setValue stores a new name in NFC: NormalizationTests).
        for name in ["b", "a/2", "a/10", "B", "é", "e\u{301}"] { try vault.put(Entry(value: [1], created: 0, modified: 0), as: name) }
        #expect(vault.count == 6, "two spellings of é are two names")
        #expect(vault.names.map { Array($0.utf8) }.suffix(2) == [Array("e\u{301}".utf8), Array("é".utf8)], "byte order")
        #expect(vault.names == ["B", "a/10", "a/2", "b", "e\u{301}", "é"])
        #expect(vault.names(withPrefix: "a/") == ["a/10", "a/2"])
    }

    @Test func test_setValue_refusesValuesOverTheLimit() {
        var vault = Vault()
        #expect(throws: VaultError.self) {
            try vault.setValue([UInt8](repeating: 0, count: VaultLimits.maxValueLength + 1), for: "big")
        }
    }

    // MARK: - EntryCodec.decode

    @Test func test_decode_isTheInverseOfEncode() throws {
        let vault = try sampleVault()
        let encoded = try EntryCodec.encode(vault)
        #expect(try EntryCodec.decode(encoded) == vault)
        #expect(try EntryCodec.encode(EntryCodec.decode(encoded)) == encoded)
    }

    @Test func test_decode_rejectsNonCanonicalContents() throws {
        var one = Vault(), two = Vault()
        try one.setValue([1], for: "b", now: 0)
        try two.setValue([1], for: "a", now: 0)
        try two.setValue([1], for: "b", now: 0)
        let encoded = try EntryCodec.encode(two)
        // Swap the two entries (each is 2 + 1 + 8 + 8 + 4 + 1 + 1 = 25 bytes) to break the order.
        let body = Array(encoded[5...])
        let unsorted = Array(encoded[0..<5]) + Array(body[25...]) + Array(body[0..<25])
        #expect(throws: VaultError.self) { try EntryCodec.decode(unsorted) }
        let duplicated = Array(encoded[0..<5]) + Array(body[25...]) + Array(body[25...])
        #expect(throws: VaultError.self) { try EntryCodec.decode(duplicated) }
        #expect(throws: VaultError.self) { try EntryCodec.decode(encoded + [0]) }
        #expect(throws: VaultError.self) { try EntryCodec.decode(Array(encoded.dropLast())) }
        var hugeCount = encoded
        hugeCount.replaceSubrange(1..<5, with: UInt32.max.littleEndianBytes)
        #expect(throws: VaultError.self) { try EntryCodec.decode(hugeCount) }
        var hugeValue = try EntryCodec.encode(one)
        hugeValue.replaceSubrange(24..<28, with: UInt32.max.littleEndianBytes)
        #expect(throws: VaultError.self) { try EntryCodec.decode(hugeValue) }
        #expect(throws: VaultError.self) { try EntryCodec.decode([2, 0, 0, 0, 0]) }
    }

    /// Every message of the validating decoder, word for word (the damaged corpus and users see
    /// them): a cut at each part of an entry and of its fields, then each rule broken once.
    @Test func test_decode_messagesNameThePartExactly() throws {
        var vault = Vault()
        try vault.setValue([1, 2], for: "a", now: 0)
        try vault.setField("f", value: [3], for: "a", now: 0)
        try vault.setField("g", value: [4], for: "a", now: 0)
        try vault.setValue([5], for: "b", now: 0)
        let encoded = try EntryCodec.encode(vault)
        let damaged = "the decrypted vault contents are malformed: "
        func message(_ content: [UInt8]) -> String {
            do { _ = try EntryCodec.decode(content); return "decoded" } catch { return error.description }
        }
        func patched(_ offset: Int, _ bytes: [UInt8]) -> [UInt8] {
            var copy = encoded
            copy.replaceSubrange(offset..<offset + bytes.count, with: bytes)
            return copy
        }
        // Entry 0 is 2 + 1 + 16 + 4 + 2 + 1 + 2 × (1 + 1 + 4 + 1) = 40 bytes after the 5-byte prefix.
        var cuts: [String] = []
        for length in 0..<45 {
            let text = message(Array(encoded.prefix(length))).replacing(/, only \d+ left/, with: "")
            if cuts.last != text { cuts.append(text) }
        }
        let broken = [
            message(patched(0, [2])),
            message(patched(1, UInt32(1_000_001).littleEndianBytes)),
            message(patched(7, [0x80])),
            message(patched(7, [0x0A])),
            message(patched(7, [0x62])),
            message(patched(24, UInt32.max.littleEndianBytes)),
            message(patched(30, [65])),
            message(patched(32, [0x2F])),
            message(patched(39, [0x66])),
            message(patched(33, UInt32.max.littleEndianBytes)),
            message(encoded + [0]),
        ]
        #expect(cuts == [
            "content version needs 1 bytes at offset 0 of the contents",
            "entry count needs 4 bytes at offset 1 of the contents",
            "entry 0 name length needs 2 bytes at offset 5 of the contents",
            "entry 0 name needs 1 bytes at offset 7 of the contents",
            "entry 0 created needs 8 bytes at offset 8 of the contents",
            "entry 0 modified needs 8 bytes at offset 16 of the contents",
            "entry 0 value length needs 4 bytes at offset 24 of the contents",
            "entry 0 value needs 2 bytes at offset 28 of the contents",
            "entry 0 field count needs 1 bytes at offset 30 of the contents",
            "entry 0 field 0 name length needs 1 bytes at offset 31 of the contents",
            "entry 0 field 0 name needs 1 bytes at offset 32 of the contents",
            "entry 0 field 0 value length needs 4 bytes at offset 33 of the contents",
            "entry 0 field 0 value needs 1 bytes at offset 37 of the contents",
            "entry 0 field 1 name length needs 1 bytes at offset 38 of the contents",
            "entry 0 field 1 name needs 1 bytes at offset 39 of the contents",
            "entry 0 field 1 value length needs 4 bytes at offset 40 of the contents",
            "entry 0 field 1 value needs 1 bytes at offset 44 of the contents",
        ].map { damaged + $0 })
        #expect(broken == [
            "content encoding version 2 is unknown",
            "entry count 1000001 exceeds 1000000",
            "entry 0 name is not UTF-8",
            "entry 0: invalid name: an entry name cannot contain control characters (newline, tab, NUL, …)",
            "entry 1 is out of order or duplicated",
            "entry 0 value is 4294967295 bytes; at most 268435456",
            "entry 0 has 65 fields; at most 64",
            "entry 0: invalid name: field name '/' may hold only letters, digits, '_', '.' and '-'",
            "entry 0 field 1 is out of order or duplicated",
            "entry 0 field 0 value is 4294967295 bytes; at most 268435456",
            "1 bytes after the last entry",
        ].map { damaged + $0 })
    }

    // MARK: - Vault over stored records

    /// A decrypted vault keeps its records where they lie and only the edits beside them: every edit
    /// on it must give the same entries, names, count and encoding as the same edit on a vault built in memory.
    @Test func test_storedVault_editsMatchAVaultBuiltInMemory() throws {
        var generator = SplitMix(seed: 5)
        func name() -> String { "svc/\(generator.nextByte() % 40)" }
        var model = Vault()
        for index in 0..<30 {
            try model.setValue([UInt8(index)], for: "svc/\(index)", now: Int64(index))
            if index % 3 == 0 { try model.setField("user", value: [1, UInt8(index)], for: "svc/\(index)", now: Int64(index)) }
        }
        var stored = try EntryCodec.decode(EntryCodec.encode(model))
        #expect(stored == model && model == stored)
        for step in 0..<400 {
            let now = Int64(1_000 + step)
            let target = name(), other = name(), byte = generator.nextByte()
            switch byte % 6 {
            case 0:
                try model.setValue([byte], for: target, now: now)
                try stored.setValue([byte], for: target, now: now)
            case 1:
                try model.setField("f\(byte % 3)", value: [byte], for: target, now: now)
                try stored.setField("f\(byte % 3)", value: [byte], for: target, now: now)
            case 2:
                #expect((try? model.remove(target)) == (try? stored.remove(target)))
            case 3:
                let renamed = (try? model.rename(target, to: other, overwrite: byte & 8 != 0)) != nil
                #expect(renamed == ((try? stored.rename(target, to: other, overwrite: byte & 8 != 0)) != nil))
            case 4:
                let removed = (try? model.removeField("f\(byte % 3)", of: target, now: now)) != nil
                #expect(removed == ((try? stored.removeField("f\(byte % 3)", of: target, now: now)) != nil))
            default:
                let entry = Entry(value: [byte, byte], fields: ["x": [byte]], created: now, modified: now)
                try model.put(entry, as: target)
                try stored.put(entry, as: target)
            }
            #expect(stored.count == model.count)
            #expect(stored.contains(target) == model.contains(target))
            #expect(stored.entry(target) == model.entry(target))
            if step % 20 == 0 {
                #expect(stored == model)
                #expect(stored.names == model.names)
                #expect(stored.names(withPrefix: "svc/1") == model.names(withPrefix: "svc/1"))
                #expect(try EntryCodec.encode(stored) == EntryCodec.encode(model))
                // Re-decoding the encoding of the edited vault gives the same vault again.
                stored = try EntryCodec.decode(EntryCodec.encode(stored))
            }
        }
        #expect(stored == model)
    }

    @Test func test_equality_copiesOfOneDecryptedVaultCompareTheirEdits() throws {
        let decoded = try EntryCodec.decode(EntryCodec.encode(sampleVault()))
        var edited = decoded
        #expect(edited == decoded)
        try edited.setValue([9], for: "empty", now: 1)
        #expect(edited != decoded)
        try edited.setValue([], for: "empty", now: 1)
        #expect(edited != decoded, "the modified time changed")
        var removed = decoded
        try removed.remove("empty")
        try removed.put(decoded.entry("empty")!, as: "empty")
        #expect(removed == decoded, "removing and putting back the same entry changes nothing")
    }

    @Test func test_forEachSummary_showsStoredAndEditedEntriesAtOrUnderAPrefix() throws {
        var model = Vault()
        try model.setValue([1], for: "prod/db", now: 5)
        try model.setField("user", value: [2], for: "prod/db", now: 6)
        try model.setField("b", value: [3], for: "prod/db", now: 7)
        try model.setValue([4], for: "production", now: 8)
        var stored = try EntryCodec.decode(EntryCodec.encode(model))
        try stored.setValue([9], for: "prod/new", now: 9)
        try stored.setField("x", value: [9], for: "prod/new", now: 10)
        var seen: [EntrySummary] = []
        stored.forEachSummary(atOrUnder: "prod") { seen.append($0) }
        #expect(seen == [EntrySummary(name: "prod/db", fieldNames: ["b", "user"], created: 5, modified: 7),
                         EntrySummary(name: "prod/new", fieldNames: ["x"], created: 9, modified: 10)])
        seen = []
        stored.forEachSummary(atOrUnder: "") { seen.append($0) }
        #expect(seen.map(\.name) == stored.names)
    }
}
