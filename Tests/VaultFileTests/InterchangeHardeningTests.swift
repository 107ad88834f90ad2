import Foundation
import TestSupport
import Testing
@testable import VaultFile

/// What hostile or unusual import files do to the parsers (issue 25, item 15).
@Suite struct InterchangeHardeningTests {
    private func parse(_ text: String, _ format: InterchangeFormat) throws(VaultError) -> [(name: String, entry: Entry)] {
        try Interchange.parse(Array(text.utf8), format: format, now: 0)
    }

    private func value(_ entries: [(name: String, entry: Entry)], _ name: String) -> String? {
        entries.first { $0.name == name }.map { String(decoding: $0.entry.value, as: UTF8.self) }
    }

    /// The message of the error `body` throws, or nil.
    private func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let error as VaultError { return error.description } catch { return "\(error)" }
    }

    // MARK: - dotenv

    @Test func test_parseDotEnv_readsMegabyteLinesInOnePass() throws {
        // 1 MB/s before (grapheme by grapheme): these 24 MB took about 20 s; now a fraction of a second.
        let size = 8 << 20
        let long = String(repeating: "x", count: size)
        let text = "UNQUOTED=\(long) # comment\nDOUBLE=\"\(long)\\n\"\nSINGLE='\(long)'\n"
        let entries = try parse(text, .dotenv)
        #expect(entries.map(\.name) == ["UNQUOTED", "DOUBLE", "SINGLE"])
        #expect(entries.map(\.entry.value.count) == [size, size + 1, size])
        #expect(entries[1].entry.value.last == 0x0A)
    }

    @Test func test_parseDotEnv_splitsLinesThatEndInCRLF() throws {
        // A CRLF file used to be one line: A's value swallowed every line after it.
        let entries = try parse("A=1\r\nB='two'\r\nC=\"three\r\nlines\r\nhere\"\r\n# note\r\n", .dotenv)
        #expect(entries.map(\.name) == ["A", "B", "C"])
        #expect(value(entries, "A") == "1" && value(entries, "B") == "two" && value(entries, "C") == "three\nlines\nhere")
    }

    @Test func test_parseDotEnv_keepsTheDocumentedSyntax() throws {
        let entries = try parse("""
            # comment
            export  KEY=plain value  # trailing comment
            HASH=a#b
            LEADING= #kept
            Q="a \\"b\\" \\$c \\\\ \\x"
            S='no \\n escapes'
            ÜNÏ.CODE-1=é
            """, .dotenv)
        #expect(entries.map(\.name) == ["KEY", "HASH", "LEADING", "Q", "S", "ÜNÏ.CODE-1"])
        #expect(entries.map { String(decoding: $0.entry.value, as: UTF8.self) }
                == ["plain value", "a#b", "#kept", "a \"b\" $c \\ \\x", "no \\n escapes", "é"])
        #expect(message { _ = try parse("A=1\nB=\"open\n", .dotenv) }?.contains("line 2") == true)
        #expect(message { _ = try parse("A='x' y\n", .dotenv) }?.contains("line 1") == true)
        #expect(message { _ = try parse("BAD KEY=1\n", .dotenv) }?.contains("not a variable name") == true)
        #expect(message { _ = try Interchange.parse([0x41, 0x3D, 0xFF], format: .dotenv) }?.contains("not UTF-8") == true)
    }

    @Test func test_exportDotEnv_escapesCarriageReturnsSoValuesComeBackWhole() throws {
        var vault = Vault()
        try vault.setValue(Array("line1\r\nline2\r".utf8), for: "crlf", now: 0)
        try vault.setValue(Array("tab\t\"q\" $x \\".utf8), for: "other", now: 0)
        let exported = try Interchange.export(vault, format: .dotenv)
        #expect(String(decoding: exported, as: UTF8.self) == "CRLF=\"line1\\r\\nline2\\r\"\nOTHER=\"tab\\t\\\"q\\\" \\$x \\\\\"\n")
        let back = try Interchange.parse(exported, format: .dotenv, now: 0)
        #expect(back.map(\.entry.value) == [vault.entry("crlf")!.value, vault.entry("other")!.value])
    }

    @Test func test_exportDotEnv_givesEachEntryItsOwnValue() throws {
        // Two spellings of "café" are two entries; as Swift strings they are equal, and the
        // export used to give both variables the first one's value.
        var vault = Vault()
        try vault.setValue(Array("composed".utf8), for: "caf\u{E9}", now: 0)
        try vault.setValue(Array("decomposed".utf8), for: "cafe\u{301}", now: 0)
        let text = String(decoding: try Interchange.export(vault, format: .dotenv), as: UTF8.self)
        #expect(text.contains("CAFE_=\"decomposed\"") && text.contains("CAF_=\"composed\""), "\(text)")
    }
}
