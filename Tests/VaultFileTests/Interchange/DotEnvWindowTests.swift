import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// dotenv read a window at a time (`DotEnv.records(_:now:)` of `ImportWindows`) against the
/// whole-buffer read: the same entries, the same decline and the same error whatever the cuts — a
/// variable, a double-quoted value over several lines, a CR LF, a byte order mark or a multi-byte
/// UTF-8 sequence split across a window's edge; invalid UTF-8 after a syntax error; NUL bytes; a
/// file without a final line end (issue 44's memory rule: the file is never whole in memory).
@Suite struct DotEnvWindowTests {
    /// Pieces of dotenv files: valid lines, every quoting, comments, line ends, and broken ones.
    private static let pieces: [String] = [
        "A=1\n", "export B='two words' # c\n", "C=\"a\\nb\\t\\\"q\\\" \\$x \\`y\\` \\\\ \\z\"\n",
        "D=\"first\nsecond\r\nthird\" # after\n", "E = spaced value # comment\n", "F=#not a comment\n",
        "# a comment\n", "\n", "\r\n", "   \t\n", "G=caf\u{E9} \u{1F600}\n", "H=\r\n", "I=\n", "export   J=x\n",
        "K=\"unterminated\n", "L='open\n", "no equals here\n", "1X-.Y=ok\n", "M=\"x\" trailing\n", "N='x' # ok\n",
        "CAF\u{C9}=declined\n", "A=again\n", "O=\"\"\n", "P=''\n", "Q=a#b # c\n", "R=\"multi\n\nline\n\"\n",
        "\u{FEFF}S=bom inside\n", "=nokey\n", "T=v\r", "U=\u{0}nul\n", "V=\"\u{0}\"\n",
    ]

    /// Random files of those pieces (and sometimes a byte order mark, a long value, bytes that
    /// are not UTF-8, a missing final line end) read in windows of 1 byte up give what the
    /// whole-buffer read gives.
    @Test func test_dotEnvWindows_importWhatTheWholeBufferReadImports() throws {
        var generator = SplitMix(seed: 4_404)
        for round in 0..<400 {
            let bytes = Self.randomFile(&generator, round: round)
            let reference = CSVWindowTests.summary { () throws(VaultError) in
                try Interchange.read(bytes, format: .dotenv, now: 7, options: ForeignBuildOptions())
            }
            let wholeRecords = Self.recordsSummary { () throws(VaultError) in try DotEnv.records(bytes, now: 7) }
            for length in [1, 2, 3, 7, 1 + generator.next(upTo: 64), 1 << 16] {
                let windows = ImportWindows.over(bytes, windowLength: length)
                let windowed = CSVWindowTests.summary { () throws(VaultError) in
                    try Interchange.read(windows: windows, format: .dotenv, now: 7, options: ForeignBuildOptions())
                }
                #expect(windowed == reference, "round \(round), windows of \(length)")
                let records = Self.recordsSummary { () throws(VaultError) in
                    try DotEnv.records(ImportWindows.over(bytes, windowLength: length), now: 7)
                }
                #expect(records == wholeRecords, "round \(round), windows of \(length): records")
            }
        }
    }

    /// A double-quoted value of many lines across many windows (read again as more lines come,
    /// the buffer doubling) gives the one value, in few passes.
    @Test func test_dotEnvWindows_readALongQuotedValueOverManyWindows() throws {
        var text = "BEFORE=1\nLONG=\""
        for index in 0..<20_000 { text += "line \(index)\n" }
        text += "\"\nAFTER=2"
        let bytes = Array(text.utf8)
        var bytesRead = 0
        let windows = ImportWindows(byteCount: bytes.count, windowLength: 64) { offset, buffer in
            let count = min(buffer.count, bytes.count - offset)
            guard count > 0 else { return 0 }
            bytesRead += count
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
            return count
        }
        let imported = try Interchange.read(windows: windows, format: .dotenv, now: 1, options: ForeignBuildOptions())
        let entries = imported.entries
        #expect(entries.map(\.name) == ["BEFORE", "LONG", "AFTER"])
        let long = entries.first { $0.name == "LONG" }?.entry.value ?? []
        #expect(long.count == text.utf8.count - "BEFORE=1\nLONG=\"".utf8.count - "\"\nAFTER=2".utf8.count)
        // Every byte read once from the file: the value is parsed again from the buffer, never read again.
        #expect(bytesRead == bytes.count)
    }

    /// A random file: pieces, sometimes a byte order mark first, a value longer than a window,
    /// a byte that is not UTF-8 (a lone continuation byte, a cut sequence), no final line end.
    private static func randomFile(_ generator: inout SplitMix, round: Int) -> [UInt8] {
        var bytes: [UInt8] = generator.next(upTo: 8) == 0 ? [0xEF, 0xBB, 0xBF] : []
        for _ in 0..<generator.next(upTo: 12) {
            switch generator.next(upTo: 20) {
            case 0: bytes += Array("LONG=\"\(String(repeating: "w", count: 70 + generator.next(upTo: 200)))\n\(String(repeating: "x", count: generator.next(upTo: 90)))\"\n".utf8)
            case 1 where round % 3 == 0: bytes += [[0x80], [0xC3], [0xE2, 0x82], [0xFF]][generator.next(upTo: 4)]
            default: bytes += Array(pieces[generator.next(upTo: pieces.count)].utf8)
            }
        }
        if generator.next(upTo: 4) == 0, bytes.last == 0x0A { bytes.removeLast() }
        return bytes
    }

    /// What `records` gave: nil, how many bytes of records, or its error.
    private static func recordsSummary(_ read: () throws(VaultError) -> WrittenRecords?) -> String {
        do {
            guard let records = try read() else { return "declined" }
            let imported = try ImportedEntries(written: records, renamings: [])
            return "\(imported.entries.map { "\($0.name)=\($0.entry.value)" })"
        } catch {
            return "error: \(error.description)"
        }
    }
}
