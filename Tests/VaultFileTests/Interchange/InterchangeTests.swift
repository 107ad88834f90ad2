import Foundation
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// Library-level checks of the generator's word list and the interchange parsers' edge cases.
@Suite struct InterchangeTests {
    @Test func test_wordList_matchesTheShippedDataFile() throws {
        let text = try String(contentsOf: ProjectPaths.root.appendingPathComponent("data/eff_large_wordlist.txt"), encoding: .utf8)
        #expect(EFFWordList.words == text.split(separator: "\n").map(String.init), "run scripts/wordlist.sh")
        #expect(Set(EFFWordList.words).count == 7_776)
    }

    @Test func test_variable_mapsNamesLikeExecDocuments() {
        #expect(EnvironmentNames.variable(for: "db/password") == "DB_PASSWORD")
        #expect(EnvironmentNames.variable(for: "api-key.v2") == "API_KEY_V2")
        #expect(EnvironmentNames.variable(for: "9lives") == "_9LIVES")
        #expect(EnvironmentNames.variable(for: "ünï") == "_N_")
    }

    @Test func test_timestamps_parseRFC3339() {
        #expect(Timestamps.parse("1970-01-01T00:00:00Z") == 0)
        #expect(Timestamps.parse("2024-02-03T04:05:06.789Z") == 1_706_933_106_789)
        #expect(Timestamps.parse("2000-02-29T12:00:00Z") == 951_825_600_000)
        #expect(Timestamps.parse("not a date") == nil)
    }

    /// A day the month does not have is no time (it was rolled over into the next month); every
    /// day a month has reads back as itself, leap days by the Gregorian rule (issue 47).
    @Test func test_timestamps_refuseADayTheMonthDoesNotHave() {
        for text in ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T12:00:00+01:00",
                     "2024-04-31T00:00:00Z", "2024-06-31 10:00:00Z", "2024-09-31T00:00:00Z", "2024-11-31T00:00:00Z", "2024-01-32T00:00:00Z",
                     "2024-01-00T00:00:00Z", "-0001-02-29T00:00:00Z"] {
            #expect(Timestamps.parse(text) == nil, "\(text)")
        }
        for year in [-401, -400, -100, -4, -1, 0, 1, 1900, 1970, 2000, 2023, 2024, 2100, 9999, 10000] as [Int64] {
            var days = 0
            for month in 1...12 {
                for day in 1...31 {
                    let date = "\(UTCTime.year(year))-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
                    guard let time = Timestamps.parse(date + "T12:00:00.000Z") else { continue }
                    days += 1
                    #expect(UTCTime.rfc3339(milliseconds: time) == date + "T12:00:00.000Z", "no roll-over")
                }
            }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            #expect(days == (leap ? 366 : 365), "\(year)")
        }
    }

    /// Every time vaultfile prints (`UTCTime.rfc3339`, negative ones and expanded years included)
    /// reads back as the same milliseconds, so `list --json` output imports as `export` wrote it.
    @Test func test_timestamps_parseEveryTimeVaultfilePrints() {
        var generator = SplitMix(seed: 10)
        var times: [Int64] = [0, -1, -5, -1000, -1001, -86_400_001, -62_167_219_200_001, 253_402_300_800_000, .max, .min]
        for _ in 0..<2_000 {
            let bits = (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(generator.nextByte()) }
            times.append(Int64(bitPattern: bits) >> Int64(generator.nextByte() % 40))
        }
        for time in times { #expect(Timestamps.parse(UTCTime.rfc3339(milliseconds: time)) == time, "\(UTCTime.rfc3339(milliseconds: time))") }
        #expect(Timestamps.parse("-0001-12-31T23:59:59.999Z") == -62_167_219_200_001)
        #expect(Timestamps.parse("+10000-01-01T00:00:00Z") == 253_402_300_800_000)
        // A sign needs four digits at least; a year past nine digits, or a time past Int64, is no time.
        for text in ["-001-01-01T00:00:00Z", "+1234567890-01-01T00:00:00Z", "+292278994-08-17T07:12:55.808Z", "-", "+2024"] {
            #expect(Timestamps.parse(text) == nil, "\(text)")
        }
    }

    @Test func test_csvRecords_handleQuotesNewlinesAndCRLF() throws {
        let records = try CSV.records(Array("a,\"b,c\",\"d\"\"e\"\r\n\"multi\nline\",,x\r\n".utf8))
        #expect(records.map(\.fields) == [["a", "b,c", "d\"e"], ["multi\nline", "", "x"]])
        #expect(records.map(\.line) == [1, 2])
        #expect(throws: VaultError.self) { try CSV.records(Array("\"open\n".utf8)) }
    }

    /// Values whose special bytes Swift folds into one Character with the next (CR LF; a comma or
    /// quote before a combining mark; a space before one at either end) are quoted, and read back whole.
    @Test func test_exportCSV_quotesByBytesAndRoundTrips() throws {
        let values = ["a\r\nb", ",\u{301}", "x\"\u{301}y", " \u{301}", "e\u{301} ", "\r\n", "plain"]
        var vault = Vault()
        for (index, value) in values.enumerated() {
            try vault.put(Entry(value: Array(value.utf8), fields: ["f": Array(value.utf8)], created: 1, modified: 1), as: "k\(index)")
        }
        let csv = try Interchange.export(vault, format: .csv)
        let text = String(decoding: csv, as: UTF8.self)
        #expect(text.contains("\"a\r\nb\"") && text.contains("\",\u{301}\"") && text.contains("\"x\"\"\u{301}y\""), "\(text.debugDescription)")
        #expect(text.contains(",plain,plain\r\n"), "a cell with nothing special stays unquoted")
        let read = try Interchange.parse(csv, format: .csv, now: 1)
        #expect(read.map(\.name) == values.indices.map { "k\($0)" })
        #expect(read.map { String(decoding: $0.entry.value, as: UTF8.self) } == values)
        #expect(read.map { $0.entry.fields["f"].map { String(decoding: $0, as: UTF8.self) } } == values)
    }

    /// A field named by two columns of a CSV header is refused, by both parsers (one value was dropped).
    @Test func test_importCSV_refusesAFieldGivenTwice() throws {
        let csv = Array("name,value,f, f\r\nn,v,1,2\r\n".utf8)
        #expect(throws: VaultError.malformedInput("line 1: the column 'f' is given twice; each field needs one column")) {
            try Interchange.parse(csv, format: .csv, now: 1)
        }
        #expect(throws: VaultError.malformedInput("line 1: the column 'f' is given twice; each field needs one column")) {
            try NativeCSV.parseReference(csv, now: 1)
        }
        #expect(try Interchange.parse(Array("name,value,f,g\r\nn,v,1,2\r\n".utf8), format: .csv, now: 1).first?.entry.fields.count == 2)
    }

    /// A dotenv file that starts with a UTF-8 byte order mark reads as the same file without it (the
    /// first variable's name held the mark and was refused); a mark anywhere else is still refused.
    @Test func test_importDotenv_skipsAByteOrderMarkAtTheStart() throws {
        let plain = Array("A=1\nB=two\n".utf8)
        let read = try Interchange.parse([0xEF, 0xBB, 0xBF] + plain, format: .dotenv, now: 1)
        #expect(read.map(\.name) == ["A", "B"])
        #expect(read.map(\.entry) == (try Interchange.parse(plain, format: .dotenv, now: 1)).map(\.entry))
        #expect(throws: VaultError.self) { try Interchange.parse(Array("A=1\n".utf8) + [0xEF, 0xBB, 0xBF] + Array("B=2\n".utf8), format: .dotenv, now: 1) }
    }

    @Test func test_template_rendersOnlyVfReferences() throws {
        let output = try Template.render(Array("{{vf://a}}-{{ vf://a#f }}-{{ other }}-{{ vf://\n}}".utf8)) { reference in
            Array((reference.field.map { "F:\($0)" } ?? "V:\(reference.name)").utf8)
        }
        #expect(String(decoding: output, as: UTF8.self) == "V:a-F:f-{{ other }}-{{ vf://\n}}")
    }

    /// The JSON export's writer against the plain reference through `JSONEncoder`: every ASCII
    /// byte, line and paragraph separators, emoji, random bytes (some valid UTF-8, some not, in
    /// the value and in fields), negative and large times, one entry and many, none.
    @Test func test_export_jsonWriterMatchesJSONEncoder() throws {
        var generator = SplitMix(seed: 23)
        let everyASCII = (0..<0x80).map { UInt8($0) } + Array("\u{2028}\u{2029}é😀/".utf8)
        var entries: [(name: String, entry: Entry)] = [
            ("a/\"quoted\\name\"", Entry(value: everyASCII, fields: ["Zed": [1], "a10": everyASCII, "a9": [0xFF, 0xFE],
                                                                  "_u": [], "b.c": Array("/".utf8)], created: -5, modified: 1_700_000_000_123)),
            ("b", Entry(value: [0xFF], created: 0, modified: .max)),
            ("c/empty", Entry(value: [], created: .min, modified: 0)),
        ]
        for index in 0..<200 {
            let length = Int(generator.nextByte() % 9)
            var value = (0..<length).map { _ in generator.nextByte() }
            if generator.nextByte() & 1 == 0 { value = value.map { $0 & 0x7F } }
            let fields = generator.nextByte() & 1 == 0 ? [:] : ["f\(index % 3)": value, "g": Array(value.reversed())]
            entries.append(("r/\(index)-é", Entry(value: value, fields: fields, created: Int64(index) - 100, modified: Int64(index) * 7_919)))
        }
        for count in [0, 1, 3, entries.count] {
            let slice = Array(entries.prefix(count))
            let written = try NativeJSON.export(slice), reference = try NativeJSON.exportThroughEncoder(slice)
            #expect(written == reference, "\(count) entries:\n\(String(decoding: written, as: UTF8.self))")
        }
    }

    /// The direct reader of vaultfile JSON against the decoder on the exports of random vaults
    /// (escapes, surrogate pairs, binary values in base64, extreme times), and the documents it
    /// leaves to the decoder.
    @Test func test_nativeJSONReader_readsWhatTheDecoderReadsOrDeclines() throws {
        var generator = SplitMix(seed: 29)
        var entries: [(name: String, entry: Entry)] = []
        for index in 0..<150 {
            var value = (0..<Int(generator.nextByte() % 12)).map { _ in generator.nextByte() }
            if index % 3 == 0 { value = Array("tab\t \"q\" \\ / é 😀 \u{0}\u{1F}".utf8) + value.map { $0 & 0x7F } }
            let fields = index % 2 == 0 ? [:] : ["user": Array("u\(index)\n".utf8), "bin": [0xFF, UInt8(index)]]
            entries.append(("e/\(index)", Entry(value: value, fields: fields, created: index == 0 ? .min : Int64(index), modified: .max)))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var documents = [try NativeJSON.export(entries), try NativeJSON.export([])]
        documents.append(Array(#"{"entries":[{"name":"\ud83d\ude00\u00e9\/","value":"x","created":-0}],"vaultfile_export":1}"#.utf8))
        for bytes in documents {
            let read = try #require(NativeJSONReader.document(bytes))
            let decoded = try JSONDocument.decode(NativeJSON.Document.self, from: bytes, what: "a test")
            #expect(try encoder.encode(read) == encoder.encode(decoded))
        }
        for declined in [#"{"vaultfile_export":1,"entries":[{"name":"a","value":null}]}"#,
                         #"{"vaultfile_export":1,"entries":[{"name":"a","other":1}]}"#,
                         #"{"vaultfile_export":1.0,"entries":[]}"#,
                         #"{"vaultfile_export":1,"entries":[{"name":"a","created":1e3}]}"#,
                         "\u{FEFF}{\"vaultfile_export\":1,\"entries\":[]}",
                         #"{"vaultfile_export":1,"entries":[{"name":"a","name":"b"}]}"#,
                         #"{"vaultfile_export":1,"entries":[{"name":"a","fields":{"f":"1","f":"2"}}]}"#,
                         #"{"vaultfile_export":1,"entries":[{"name":"\ud800"}]}"#,
                         #"{"vaultfile_export":1,"entries":[]} x"#,
                         #"{"vaultfile_export":99999999999999999999,"entries":[]}"#] {
            #expect(NativeJSONReader.document(Array(declined.utf8)) == nil, "\(declined)")
        }
    }
}
