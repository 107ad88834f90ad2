import Foundation
import TestSupport
import Testing
@testable import VaultFile

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

    @Test func test_csvRecords_handleQuotesNewlinesAndCRLF() throws {
        let records = try CSV.records(Array("a,\"b,c\",\"d\"\"e\"\r\n\"multi\nline\",,x\r\n".utf8))
        #expect(records.map(\.fields) == [["a", "b,c", "d\"e"], ["multi\nline", "", "x"]])
        #expect(records.map(\.line) == [1, 2])
        #expect(throws: VaultError.self) { try CSV.records(Array("\"open\n".utf8)) }
    }

    @Test func test_template_rendersOnlyVfReferences() throws {
        let output = try Template.render(Array("{{vf://a}}-{{ vf://a#f }}-{{ other }}-{{ vf://\n}}".utf8)) { reference in
            Array((reference.field.map { "F:\($0)" } ?? "V:\(reference.name)").utf8)
        }
        #expect(String(decoding: output, as: UTF8.self) == "V:a-F:f-{{ other }}-{{ vf://\n}}")
    }
}
