import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// `Vault.forEachEntryBytes` and the exports written from it, each against its plain reference
/// through `sortedEntries`: random vaults (non-ASCII names, binary and empty values, fields,
/// extreme times) decrypted and then edited without being sealed, with and without a prefix.
@Suite struct EntryBytesTests {
    // MARK: - Random vaults

    /// Text with every character the writers escape or quote, non-ASCII, and bytes that are not UTF-8.
    private static let pieces: [[UInt8]] = [
        Array("a".utf8), Array("Z9".utf8), Array(" ".utf8), Array(",".utf8), Array("\"".utf8), Array("\\".utf8),
        Array("$".utf8), Array("\n".utf8), Array("\r".utf8), Array("\r\n".utf8), Array("\t".utf8), Array("=".utf8),
        Array("#".utf8), Array("/".utf8), Array("é".utf8), Array("e\u{301}".utf8), Array("😀".utf8), Array("\u{2028}".utf8),
        Array("user99".utf8), [0x00], [0x01], [0x08], [0x0C], [0x1F], [0x7F], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
    ]

    private static let fieldNames = ["user", "url", "Zed", "a10", "a9", "_u", "b.c", "notes-1", "totp"]

    private static func text(_ generator: inout SplitMix, binary: Bool, maxPieces: Int = 6) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int(generator.nextByte()) % (maxPieces + 1) {
            let piece = pieces[Int(generator.nextByte()) % pieces.count]
            if !binary, String(validating: piece, as: UTF8.self) == nil || piece.contains(0) { continue }
            bytes += piece
        }
        return bytes
    }

    private static func name(_ generator: inout SplitMix, _ index: Int) -> String {
        let prefixes = ["app/", "app", "ap", "b/c/", "é/", "😀", "z", "A", "a-b", "a_b", "9lives", "x y ", " lead", "q\"uote", "c,omma"]
        let prefix = prefixes[Int(generator.nextByte()) % prefixes.count]
        let tails = ["", "entry", "ü", "e\u{301}", "db/password", "-1", ".v2", "ключ"]
        return prefix + tails[Int(generator.nextByte()) % tails.count] + (generator.nextByte() % 3 == 0 ? "" : "\(index)")
    }

    private static func time(_ generator: inout SplitMix) -> Int64 {
        switch generator.nextByte() % 5 {
        case 0: return .min
        case 1: return .max
        case 2: return -1
        default: return Int64(generator.nextByte()) * 1_000_003_771
        }
    }

    /// A vault of `count` random entries, sealed and decrypted (stored records), then given pending
    /// edits: values and fields set, fields and entries removed, entries added. With `binary` false,
    /// every value is UTF-8 text without NUL (what dotenv and CSV can carry).
    static func randomVault(seed: UInt64, count: Int, binary: Bool, stored: Bool = true) throws -> Vault {
        var generator = SplitMix(seed: seed)
        var model = Vault()
        func fill(_ vault: inout Vault, _ index: Int) throws {
            let name = Self.name(&generator, index)
            guard (try? EntryName.validate(name)) != nil else { return }
            let now = time(&generator)
            try vault.setValue(text(&generator, binary: binary), for: name, now: now)
            for _ in 0..<Int(generator.nextByte()) % 4 {
                let field = fieldNames[Int(generator.nextByte()) % fieldNames.count]
                try vault.setField(field, value: text(&generator, binary: binary), for: name, now: time(&generator))
            }
        }
        for index in 0..<count { try fill(&model, index) }
        guard stored else { return model }
        var vault = try EntryCodec.decode(EntryCodec.encode(model))
        let names = vault.names
        for (index, name) in names.enumerated() where generator.nextByte() % 4 == 0 {
            switch generator.nextByte() % 5 {
            case 0: try vault.setValue(text(&generator, binary: binary), for: name, now: time(&generator))
            case 1: try vault.setField(fieldNames[index % fieldNames.count], value: text(&generator, binary: binary), for: name, now: 7)
            case 2: if let field = vault.entry(name)?.fields.keys.sorted().first { try vault.removeField(field, of: name, now: 8) }
            case 3: try vault.remove(name)
            default: try fill(&vault, count + index)
            }
        }
        return vault
    }

    private static let prefixes = ["", "app", "app/", "é", "a", "none-such"]

    // MARK: - The visitor

    @Test func test_forEachEntryBytes_matchesSortedEntriesWithPendingEdits() throws {
        for seed in 0..<24 as Range<UInt64> {
            let vault = try Self.randomVault(seed: seed, count: 60, binary: true, stored: seed % 6 != 0)
            for prefix in Self.prefixes {
                var seen: [(name: String, entry: Entry)] = []
                vault.forEachEntryBytes(withPrefix: prefix) { entry in
                    var fields: [String: [UInt8]] = [:]
                    var fieldOrder: [String] = []
                    for field in entry.fields {
                        fields[String(decoding: field.name, as: UTF8.self)] = Array(field.value)
                        fieldOrder.append(String(decoding: field.name, as: UTF8.self))
                    }
                    #expect(fieldOrder == fieldOrder.sorted(), "fields in name order")
                    seen.append((String(decoding: entry.name, as: UTF8.self),
                                 Entry(value: Array(entry.value), fields: fields, created: entry.created, modified: entry.modified)))
                }
                let reference = vault.sortedEntries.filter { $0.name.utf8.starts(with: prefix.utf8) }
                #expect(seen.map(\.name) == reference.map(\.name), "seed \(seed) prefix '\(prefix)'")
                #expect(seen.map(\.entry) == reference.map(\.entry), "seed \(seed) prefix '\(prefix)'")
            }
        }
    }

    @Test func test_forEachEntryBytes_passesTheBodysErrorOnFromAnEditedEntry() throws {
        struct Stop: Error {}
        var vault = try EntryCodec.decode(EntryCodec.encode(Self.randomVault(seed: 3, count: 5, binary: false, stored: false)))
        try vault.setValue([1], for: "zzz/edited", now: 1)
        var visited = 0
        #expect(throws: Stop.self) {
            try vault.forEachEntryBytes { (entry) throws(Stop) in
                visited += 1
                if entry.name.elementsEqual("zzz/edited".utf8) { throw Stop() }
            }
        }
        #expect(visited == vault.names.firstIndex(of: "zzz/edited")! + 1, "stopped at the edited entry")
    }

    // MARK: - Exports

    /// Every export format from the bytes against the reference through `sortedEntries`: the same
    /// bytes and the same entries left out (dotenv's binary values), or the same error (binary data
    /// in CSV; two names of one variable in dotenv).
    @Test func test_export_fromBytesMatchesEntries() throws {
        func outcome(_ body: (inout [String]) throws(VaultError) -> [UInt8]) -> Result<[UInt8], VaultError> {
            var skipped: [String] = []
            do { return .success(try body(&skipped) + Array("\0skipped: \(skipped)".utf8)) } catch { return .failure(error) }
        }
        var successes = [InterchangeFormat: Int]()
        for seed in 0..<30 as Range<UInt64> {
            let vault = try Self.randomVault(seed: 100 + seed, count: seed % 10 == 0 ? 0 : 40, binary: seed % 3 == 0, stored: seed % 5 != 0)
            for format in [InterchangeFormat.json, .dotenv, .csv] {
                for prefix in Self.prefixes {
                    let written = outcome { (skipped) throws(VaultError) in try Interchange.export(vault, format: format, prefix: prefix, skipped: &skipped) }
                    let reference = outcome { (skipped) throws(VaultError) in
                        try Interchange.exportThroughEntries(vault, format: format, prefix: prefix, skipped: &skipped)
                    }
                    #expect(written == reference, "seed \(seed) \(format) prefix '\(prefix)'")
                    if case .success = written { successes[format, default: 0] += 1 }
                }
            }
        }
        // The random vaults reach the writers' whole path, not only their errors.
        #expect(successes.values.allSatisfy { $0 > 10 }, "\(successes)")
    }

    /// Every byte the JSON writer escapes, and non-ASCII text, at every offset of values up to
    /// 40 bytes long (the writer checks eight bytes at a time), and entries of 64 fields, against
    /// the reference.
    @Test func test_export_jsonEscapesAtEveryOffset() throws {
        var vault = Vault()
        let specials: [[UInt8]] = (0..<0x20).map { [UInt8($0)] } + [[0x22], [0x5C], [0x7F], [0x2F], Array("é".utf8), Array("😀".utf8), [0xFF]]
        for (number, special) in specials.enumerated() {
            for length in [7, 8, 9, 16, 23, 40] {
                for offset in 0..<length {
                    var value = Array(repeating: UInt8(ascii: "a"), count: length)
                    value.replaceSubrange(offset..<offset + 1, with: special)
                    try vault.setValue(value, for: "s\(number)/\(length)/\(offset)", now: Int64(offset) - 20)
                }
            }
        }
        // The most fields an entry may have, text and binary (the writer keeps a 64-bit mask of them).
        for field in 0..<VaultLimits.maxFieldsPerEntry {
            try vault.setField("f\(field)", value: field % 3 == 0 ? [0xFF, UInt8(field)] : Array("v\(field)".utf8), for: "many", now: 1)
            try vault.setField("t\(field)", value: Array("text".utf8), for: "many-text", now: 1)
        }
        let stored = try EntryCodec.decode(EntryCodec.encode(vault))
        #expect(try Interchange.export(stored, format: .json) == Interchange.exportThroughEntries(stored, format: .json))
    }

    @Test func test_export_dotenvReportsTheReferencesErrorForAClashBeforeABinaryValue() throws {
        var vault = Vault()
        try vault.setValue([0xFF], for: "a/binary", now: 1)
        try vault.setValue(Array("x".utf8), for: "b-c", now: 1)
        try vault.setValue(Array("y".utf8), for: "b_c", now: 1)
        let stored = try EntryCodec.decode(EntryCodec.encode(vault))
        #expect(throws: VaultError.environmentVariableClash("b-c", "b_c", variable: "B_C")) {
            try Interchange.export(stored, format: .dotenv)
        }
        // Without the clash, the binary value is left out and named (issue 47), by both writers.
        var alone = stored
        _ = try alone.remove("b_c", now: 2)
        var skipped: [String] = [], referenceSkipped: [String] = []
        let written = try Interchange.export(alone, format: .dotenv, skipped: &skipped)
        #expect(written == Array("B_C=\"x\"\n".utf8) && skipped == ["a/binary"])
        #expect(try Interchange.exportThroughEntries(alone, format: .dotenv, skipped: &referenceSkipped) == written && referenceSkipped == skipped)
        #expect(throws: VaultError.malformedInput("'a/binary' holds binary data, which CSV cannot carry; export json instead")) {
            try Interchange.export(stored, format: .csv)
        }
    }

    @Test func test_exportBuffer_growsAndKeepsEveryByte() {
        var out = ExportBuffer(capacity: 1)
        var expected: [UInt8] = []
        for number in Array(repeating: [Int64.min, .min + 1, -100, -99, -1, 0, 9, 10, 99, 100, 101, 12_345, 1_700_000_000_123, .max], count: 8).joined() {
            out.appendDecimal(number)
            expected += Array(String(number).utf8)
            out.append(UInt8(ascii: ","))
            expected.append(UInt8(ascii: ","))
        }
        out.append("tail")
        expected += Array("tail".utf8)
        #expect(out.take() == expected)
    }

    // MARK: - UTF-8

    /// `UTF8Bytes.isValid` against `String(validating:)`: every sequence of one and two bytes,
    /// every lead byte with two and three random continuations, and random runs.
    @Test func test_isValid_agreesWithStringValidating() {
        func check(_ bytes: [UInt8]) {
            let fast = bytes.withUnsafeBytes(UTF8Bytes.isValid)
            if fast != (String(validating: bytes, as: UTF8.self) != nil) { Issue.record("\(bytes)") }
        }
        for first in 0...255 {
            check([UInt8(first)])
            for second in 0...255 { check([UInt8(first), UInt8(second)]) }
        }
        var generator = SplitMix(seed: 41)
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
                              0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        for lead in 0xC0...0xFF {
            for _ in 0..<400 {
                check([UInt8(lead)] + (0..<2).map { _ in edges[Int(generator.nextByte()) % edges.count] })
                check([UInt8(lead)] + (0..<3).map { _ in edges[Int(generator.nextByte()) % edges.count] })
            }
        }
        for _ in 0..<5_000 {
            let ascii = (0..<Int(generator.nextByte() % 20)).map { _ in generator.nextByte() & 0x7F }
            let tail = (0..<Int(generator.nextByte() % 4)).map { _ in edges[Int(generator.nextByte()) % edges.count] }
            check(ascii + tail + ascii)
            check(Array("é😀ключ".utf8) + ascii + tail)
        }
    }
}
