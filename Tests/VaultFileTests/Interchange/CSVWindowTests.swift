import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The CSV scan a window at a time (`CSVScanner`, `ImportWindows`) against the one-buffer scan
/// (`CSV.scan`, after the whole file's UTF-8 check): the same records, lines and errors whatever
/// the cuts, a field, a quote, a CR LF, a byte order mark or a multi-byte UTF-8 sequence split
/// across a window's edge included (issue 44's memory rule: the input is never whole in memory).
@Suite struct CSVWindowTests {
    /// An input cut where `cuts` say (offsets, increasing), handed over window by window.
    private struct CutInput: CSVSource {
        let bytes: [UInt8]
        let cuts: [Int]

        func forEachWindow(_ body: (UnsafeBufferPointer<UInt8>) throws(VaultError) -> Void) throws(VaultError) {
            try bytes.withUnsafeBufferPointer { (all) throws(VaultError) in
                var start = 0
                for end in cuts + [bytes.count] where end >= start {
                    try body(UnsafeBufferPointer(rebasing: all[start..<end]))
                    start = end
                }
            }
        }

        var expectedRows: Int { 0 }
        var byteCount: Int { bytes.count }
    }

    /// What a scan gave: each record as `line:cells`, then the error thrown; `body` throws on a
    /// record whose first cell is `stop` (the scan reads on, and throws it last).
    private static func described(_ scan: ((CSVRecord) throws(VaultError) -> Void) throws(VaultError) -> Void) -> [String] {
        var seen: [String] = []
        do {
            try scan { (record) throws(VaultError) in
                seen.append("\(record.line):\(record.strings)")
                if record.count > 0 && record.string(0) == "stop" { throw .malformedInput("stopped at line \(record.line)") }
            }
            seen.append("ok")
        } catch {
            seen.append("error: \(error.description)")
        }
        return seen
    }

    /// The one-buffer reference: the whole file checked as UTF-8, then walked byte by byte (`runs`
    /// false), or scanned as one window (`runs` true).
    private static func reference(_ bytes: [UInt8], runs: Bool) -> [String] {
        described { (body) throws(VaultError) in
            try bytes.withUnsafeBufferPointer { (buffer) throws(VaultError) in
                guard JSONString.isUTF8(buffer) else {
                    // The line of the first byte that is not UTF-8: one more than the line feeds before it.
                    let bad = CSVScanner.firstNotUTF8(buffer)
                    throw .malformedInput(CSVScanner.notUTF8Message(line: buffer[..<bad].filter { $0 == 0x0A }.count + 1))
                }
                try CSV.scan(buffer, runs: runs, body)
            }
        }
    }

    /// The windowed scan: what `described` gives, except that for a file that is not UTF-8 only
    /// the error is kept (the windows before the one that shows it were scanned already, and their
    /// records handed over: an import throws them all away with the error).
    private static func windowed(_ bytes: [UInt8], cuts: [Int]) -> [String] {
        let seen = described { (body) throws(VaultError) in try CSV.forEachRecord(CutInput(bytes: bytes, cuts: cuts), body) }
        return seen.last.map(isNotUTF8) == true ? [seen.last!] : seen
    }

    private static func isNotUTF8(_ line: String) -> Bool { line.hasPrefix("error: line ") && line.hasSuffix(": the CSV file is not UTF-8 text") }

    /// The pieces random inputs are made of: every byte with a meaning, multi-byte sequences, a
    /// byte order mark, and bytes that are not UTF-8 (a stray continuation, a lone lead, 0xFF).
    private static let pieces: [[UInt8]] = [
        Array("a".utf8), Array("bc".utf8), Array("stop".utf8), [0x2C], [0x2C], [0x22], [0x22, 0x22], [0x0D], [0x0A], [0x0D, 0x0A],
        Array("é".utf8), Array("€".utf8), Array("😀".utf8), Array("e\u{301}".utf8), [0xEF, 0xBB, 0xBF], [0x00],
        [0x80], [0xE2, 0x82], [0xFF], [0xC0, 0xAF],
    ]

    /// A random input: mostly valid pieces (the invalid ones rare, so most inputs are UTF-8), a byte
    /// order mark at the start now and then.
    private static func randomInput(_ generator: inout SplitMix) -> [UInt8] {
        var bytes: [UInt8] = generator.nextByte() % 6 == 0 ? [0xEF, 0xBB, 0xBF] : []
        for _ in 0..<Int(generator.nextByte() % 40) {
            let valid = pieces.count - 4
            let index = generator.nextByte() % 50 == 0 ? valid + Int(generator.nextByte()) % 4 : Int(generator.nextByte()) % valid
            bytes += pieces[index]
        }
        return bytes
    }

    @Test func test_windowedScan_matchesTheOneBufferScanOverRandomInputsAndCuts() {
        var generator = SplitMix(seed: 2_026)
        var notUTF8 = 0, problems = 0, stopped = 0
        for _ in 0..<3_000 {
            let bytes = Self.randomInput(&generator)
            let expected = Self.reference(bytes, runs: false)
            #expect(expected == Self.reference(bytes, runs: true), "the buffer as one window")
            // Windows of one size, then random cuts.
            let size = 1 + Int(generator.nextByte()) % 9
            let even = Array(stride(from: size, to: bytes.count, by: size))
            var random: [Int] = []
            var position = 0
            while true {
                position += Int(generator.nextByte()) % 12  // 0: an empty window
                guard position < bytes.count else { break }
                random.append(position)
            }
            for cuts in [even, random] {
                #expect(Self.windowed(bytes, cuts: cuts) == expected, "\(bytes) cut at \(cuts)")
            }
            let last = expected.last ?? ""
            if last.contains("not UTF-8") { notUTF8 += 1 } else if last.contains("stopped") { stopped += 1 } else if last.hasPrefix("error") { problems += 1 }
        }
        #expect(notUTF8 > 50 && problems > 200 && stopped > 50, "\(notUTF8) not UTF-8, \(problems) CSV problems, \(stopped) stopped by the body")
    }

    /// Each edge the brief names, at every cut of the input into two windows and into windows of one byte.
    @Test(arguments: [
        "name,value\r\nalpha,\"a, \"\"quoted\"\" value\"\r\n",  // a field, a doubled quote, CR LF
        "\u{FEFF}name,value\nx,caf\u{E9}\u{20AC}\u{1F600}\n",  // a byte order mark, 2-, 3- and 4-byte sequences
        "a,\"line\nbreak\"\rb,c\r",  // CR alone, a line end inside quotes, a CR at the very end
        "a,b\"c\nd,e\n",  // a quote inside an unquoted field: the scan's own error
        "a,\"never closed\n",  // an unterminated quote
        "a,\"x\"\"",  // a doubled quote at the end, still inside the quotes
    ])
    func test_windowedScan_matchesAtEveryCut(_ text: String) {
        let bytes = Array(text.utf8)
        let expected = Self.reference(bytes, runs: false)
        for cut in 0...bytes.count {
            #expect(Self.windowed(bytes, cuts: [cut]) == expected, "cut at \(cut)")
        }
        #expect(Self.windowed(bytes, cuts: Array(0..<bytes.count)) == expected, "windows of one byte")
        // A multi-byte sequence cut and never finished, or finished wrongly.
        for bad in [[0xE2, 0x82] as [UInt8], [0xF0, 0x9F, 0x98], [0xE2, 0x41, 0x41]] {
            let input = bytes + bad
            let expected = Self.reference(input, runs: false)
            for cut in [bytes.count, bytes.count + 1, bytes.count + 2] {
                #expect(Self.windowed(input, cuts: [cut]) == expected, "\(bad) cut at \(cut)")
            }
        }
    }

    // MARK: - A file read a window at a time

    private static func windows(_ bytes: [UInt8], length: Int) -> ImportWindows { ImportWindows.over(bytes, windowLength: length) }

    @Test func test_importWindows_readTheFileWholeAndByHead() throws {
        var generator = SplitMix(seed: 44)
        let bytes = (0..<10_000).map { _ in generator.nextByte() }
        for length in [1, 7, 4_096, 1 << 16] {
            let windows = Self.windows(bytes, length: length)
            var seen: [UInt8] = []
            try windows.forEachWindow { seen += $0 }
            #expect(seen == bytes)
            #expect(try windows.readAll() == bytes)
            #expect(try windows.head(100) == Array(bytes.prefix(100)))
            #expect(try windows.head(20_000) == bytes)
        }
    }

    @Test func test_importWindows_keepTheErrorOfTheRead() {
        struct Failed: Error {}
        let windows = ImportWindows(byteCount: 10, windowLength: 4) { offset, _ in
            guard offset == 0 else { throw Failed() }
            return 4
        }
        #expect(throws: VaultError.self) { try CSV.forEachRecord(windows) { _ in } }
        #expect(windows.readError is Failed)
    }

    /// vaultfile's CSV and every other manager's CSV export, read in windows of a few bytes, import
    /// what the one-buffer read imports (the records path and, when the stream is declined, the
    /// file read again whole).
    @Test func test_readWindows_importsWhatTheOneBufferReadImports() throws {
        var generator = SplitMix(seed: 45)
        let inputs: [(InterchangeFormat, String)] = [
            (.csv, "name,value,username\r\nb,1,u\r\na,\"2,\"\"x\"\"\",\r\nc/d,caf\u{E9},\r\n"),
            (.csv, "name,value\na,1\na,2\n"),  // a name twice: the error, by the reference's words
            (.csv, "name,value\ncaf\u{E9},1\n"),  // not ASCII: the record writer declines, read again whole
            (.chromeCSV, "name,url,username,password,note\nmail,https://mail.example,alice,pw1,a note\nmail,https://mail.example,bob,pw2,\n"),
            (.keepassxcCSV, "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\"\n\"Root/Web\",\"site\",\"u\",\"p\",\"https://x.example\",\"n\"\n"),
            (.firefoxCSV, "url,username,password,httpRealm,formActionOrigin,guid,timeCreated,timeLastUsed,timePasswordChanged\n"
                + "https://a.example,u,p,,,{1},1700000000000,1700000000000,1700000000000\n"),
            (.lastPassCSV, "url,username,password,totp,extra,name,grouping,fav\nhttps://a.example,u,p,,notes,site,Work\\Mail,1\n"),
            // dotenv: read a window at a time (`DotEnv.records(_:now:)` of `ImportWindows`).
            (.dotenv, "\u{FEFF}B=1\nexport A='2 # x'\n# c\n\nC=\"a\\nb\nc\" # d\r\nD = e # f\n"),
            (.dotenv, "A=1\nA=2\n"),  // a name twice: the error, by the reference's words
            (.dotenv, "CAF\u{C9}=1\n"),  // not ASCII: the record writer declines, read again whole
            (.dotenv, "A=1\nB=\"open\n"),  // an error after an entry
            (.dotenv, ""),
            // Chrome titles out of name order, one repeated after others: numbered by the reference.
            (.chromeCSV, "name,url,username,password\nz,,u1,p\nm,,u,p\nz,,u0,q\n"),
        ]
        for (format, text) in inputs {
            let bytes = Array(text.utf8)
            for prefix in [[], ["in"]] as [[String]] {
                let options = ForeignBuildOptions(keepsHistory: false, prefix: prefix)
                let reference = Self.summary { () throws(VaultError) in try Interchange.read(bytes, format: format, now: 7, options: options) }
                for length in [1, 2, 3, 5, 1 + Int(generator.nextByte()) % 40, 1 << 16] {
                    let windowed = Self.summary { () throws(VaultError) in
                        try Interchange.read(windows: Self.windows(bytes, length: length), format: format, now: 7, options: options)
                    }
                    #expect(windowed == reference, "\(format) in windows of \(length)")
                }
            }
        }
    }

    /// A dotenv file of many 64 KiB windows (values across their edges, a quoted value over several
    /// lines and windows, comments, blank lines) read a window at a time imports what the
    /// one-buffer read imports; so does one that grew after it was opened, and one with an error
    /// in its last window.
    @Test func test_readWindows_dotenvImportsWhatTheOneBufferReadImports() throws {
        var generator = SplitMix(seed: 46)
        var text = ""
        for index in 0..<3_000 {
            let value = String(repeating: "v", count: Int(generator.nextByte()))
            switch index % 7 {
            case 3: text += "# a comment \(value)\n\n"
            case 5: text += "QUOTED_\(index)=\"\(value)\\n\(value)\n\(String(repeating: "w", count: 70_000 * (index % 2)))\"\n"
            default: text += "export VAR_\(index)='\(value)'\r\n"
            }
        }
        for (input, grown) in [(text, false), (text, true), (text + "BROKEN\n", false)] {
            let bytes = Array(input.utf8)
            let reference = Self.summary { () throws(VaultError) in try Interchange.read(bytes, format: .dotenv, now: 7, options: ForeignBuildOptions()) }
            // A file that grew since it was opened: its first size too small.
            let windows = ImportWindows.over(bytes, windowLength: 1 << 16, openedAt: grown ? bytes.count - 10 : bytes.count)
            let windowed = Self.summary { () throws(VaultError) in
                try Interchange.read(windows: windows, format: .dotenv, now: 7, options: ForeignBuildOptions())
            }
            #expect(windowed == reference, "grown: \(grown)")
            #expect(reference.hasPrefix("error") == input.hasSuffix("BROKEN\n"))
        }
    }

    /// An import's entries, renamings and warnings, or its error, as text.
    static func summary(_ read: () throws(VaultError) -> ImportedEntries) -> String {
        do {
            let imported = try read()
            let entries = imported.entries.map { "\($0.name)=\($0.entry.value):\($0.entry.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })" }
            return "\(entries) \(imported.renamings.map { "\($0.original)>\($0.name)" }) \(imported.warnings.map(\.description))"
        } catch {
            return "error: \(error.description)"
        }
    }

    // MARK: - Memory

    /// A secret in a file read in windows: once the import's records are gone, nothing of it is
    /// left in freed memory (each window is wiped once scanned, the window buffer at the end).
    @Test func test_readWindows_leaveNoCopyOfAPasswordInFreedMemory() throws {
        let secret = ScannedSecret()
        var input = ForeignStreamTests.chromeExport(holding: secret)
        let imported = try Self.importMoved(&input, format: .chromeCSV, windowLength: 16)
        #expect(imported == 2)
        let found = secret.copiesInMemoryDescribed()
        #expect(found == [], "copies of the password left in memory: \(found ?? ["(no scan)"])")
    }

    /// Imports `input` as a file of `format` read in windows of `windowLength` bytes, its bytes
    /// moved first where no array copies them (`input` wiped), that memory wiped and freed after;
    /// the number of entries imported (the entries themselves gone on return).
    private static func importMoved(_ input: inout [UInt8], format: InterchangeFormat, windowLength: Int) throws -> Int {
        let file = UnsafeMutableRawBufferPointer.allocate(byteCount: input.count, alignment: 1)
        input.withUnsafeBytes { file.copyMemory(from: $0) }
        wipe(&input)
        defer {
            wipe(file)
            file.deallocate()
        }
        let windows = ImportWindows(byteCount: file.count, windowLength: windowLength) { offset, buffer in
            let count = min(buffer.count, file.count - offset)
            guard count > 0 else { return 0 }
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: file[offset..<offset + count]))
            return count
        }
        return try Interchange.read(windows: windows, format: format, now: 1, options: ForeignBuildOptions()).count
    }

    /// A dotenv file read a window at a time: once its records are gone, no copy of a value is
    /// left in freed memory (parsed bytes wiped as they go, the buffer when it grows and at the end).
    @Test func test_readWindows_dotenvLeavesNoCopyOfAValueInFreedMemory() throws {
        let secret = ScannedSecret()
        var input: [UInt8] = []
        input.reserveCapacity(secret.count + 200_000)
        input += Array("FIRST=".utf8)
        secret.append(to: &input)
        input += Array("\n".utf8)
        for index in 0..<4_000 { input += Array("VAR_\(index)=filler filler filler\n".utf8) }
        let imported = try Self.importMoved(&input, format: .dotenv, windowLength: 1 << 16)
        #expect(imported == 4_001)
        let found = secret.copiesInMemoryDescribed()
        #expect(found == [], "copies of the value left in memory: \(found ?? ["(no scan)"])")
    }
}

extension ImportWindows {
    /// Windows of `windowLength` bytes over `bytes`, as a file of them would give.
    /// `openedAt`: the size the file had when it was opened, if it grew since (less than its bytes).
    static func over(_ bytes: [UInt8], windowLength: Int, openedAt size: Int? = nil) -> ImportWindows {
        ImportWindows(byteCount: size ?? bytes.count, windowLength: windowLength) { offset, buffer in
            let count = min(buffer.count, bytes.count - offset)
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
            return count
        }
    }

    /// `over(_:windowLength:)` whose every read gives at most `most` bytes, as a read of a
    /// pipe or a slow file may (the 1pux reader's random reads, `ZipBytes`, read on).
    static func short(_ bytes: [UInt8], most: Int) -> ImportWindows {
        ImportWindows(byteCount: bytes.count, windowLength: 1 << 16) { offset, buffer in
            let count = min(buffer.count, most, bytes.count - offset)
            guard count > 0 else { return 0 }
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) }
            return count
        }
    }
}
