import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The fast paths of the foreign readers against their plain references (issue 44's speed work):
/// a site from an ASCII URL by its bytes against the Character steps.
@Suite struct ForeignFastPathTests {
    // MARK: - site(of:)

    @Test func test_site_asciiBytesAgreeWithTheCharacterSteps() throws {
        let chosen = ["https://news.ycombinator.com/", "https://x.example/a/b/", "ftp://user@host.example/path?q=1#f",
                      "http://a@b@c.example", "http://a@b/c@d", "HTTPS://Upper.Example//", "a+b-c.d://site", "1http://x",
                      "://nohost", "https://", "https:///path", "https://?q", "ht tp://x", "https://  spaced  /", "https://a/\t",
                      "mailto:x@y", "x://@", "x:///", "s://h#frag/x", "s://h?q/x@y", "https://host.example:8443/login"]
        for url in chosen {
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url)")
        }
        // Random ASCII from the characters the steps look at, with a fixed seed (the same in every run).
        var generator = SplitMix(seed: 44)
        let alphabet = Array("ab1+-.:/@?# \t")
        for _ in 0..<3_000 {
            let url = String((0..<Int(generator.next() % 24)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url.debugDescription)")
        }
    }

    @Test func test_site_nonASCIITakesTheCharacterSteps() throws {
        // A combining mark after '/' makes one Character that is not "/": the Character steps decide.
        for url in ["https://bücher.example/", "https://x.example/\u{301}a", "https://ü@x.example"] {
            #expect(ForeignNaming.site(of: url) == ForeignNaming.siteByCharacters(of: url), "\(url)")
        }
        #expect(ForeignNaming.site(of: "https://bücher.example/") == "bücher.example")
    }

    @Test func test_site_noSchemeIsNil() throws {
        #expect(ForeignNaming.site(of: nil) == nil)
        #expect(ForeignNaming.site(of: "example.com") == nil)
        #expect(ForeignNaming.site(of: "https://") == nil)
    }

    // MARK: - CSV cells read by their bytes

    /// Each cell of `line` (one CSV record) as a `ForeignCSVRow`, to `body`.
    private func withRow(_ line: String, _ body: (ForeignCSVRow) -> Void) throws {
        try CSV.forEachRecord(Array(line.utf8)) { record in body(ForeignCSVRow(line: record.line, record: record)) }
    }

    @Test func test_csvTime_digitBytesAgreeWithTheText() throws {
        let cells = ["1700000000000", "0", "000123", "999999999999999999", "9999999999999999999", "99999999999999999999", " 17 ",
                     "+5", "-5", "2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123Z", "x1", "1x", "١٢٣", "\"\""]
        try withRow(cells.joined(separator: ",") + ",") { row in
            for index in 0...cells.count {
                #expect(ForeignCSV.time(row, index) == ForeignCSV.time(row[index]), "\(index < cells.count ? cells[index] : "past the end")")
            }
            #expect(ForeignCSV.time(row, nil) == nil)
            #expect(ForeignCSV.time(row, cells.count + 5) == nil)
        }
    }

    @Test func test_csvIsYes_bytesAgreeWithTheText() throws {
        let cells = ["", "0", "1", "false", "true", "TRUE", " yes ", "y", "Y", "no", "00", "falsey", "\t1"]
        try withRow(cells.map { "\"\($0)\"" }.joined(separator: ",")) { row in
            for index in 0..<cells.count {
                #expect(row.isYes(index) == ForeignCSV.isYes(row[index]), "\(cells[index].debugDescription)")
            }
            #expect(row.isYes(0) == false && row.isYes(2) == true && row.isYes(nil) == false && row.isYes(cells.count) == false)
        }
    }

    @Test func test_csvRow_raggedCellsReadAsEmpty() throws {
        try withRow("a,,c") { row in
            #expect(row.count == 3)
            #expect(row[0] == "a" && row[1] == nil && row[3] == nil && row[nil] == nil)
            #expect(row.bytes(2) == Array("c".utf8) && row.bytes(1).isEmpty && row.bytes(7).isEmpty)
            #expect(row.has(0) && !row.has(1) && !row.has(9) && !row.has(nil))
        }
    }

    @Test func test_expectedRows_boundsTheRecords() throws {
        for text in ["", "a", "a\n", "a\r\nb\r\n", "h\n\"x\ny\"\nz", "\n\n\n"] {
            var records = 0
            try CSV.forEachRecord(Array(text.utf8)) { _ in records += 1 }
            #expect(ForeignCSV.expectedRows(Array(text.utf8)) >= records, "\(text.debugDescription)")
        }
    }
}
