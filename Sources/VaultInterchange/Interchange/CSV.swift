#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - CSV (RFC 4180)

/// Reads and writes RFC 4180 records; quoted fields may hold commas, quotes and newlines.
enum CSV {
    /// Calls `body` with each record in turn, without keeping them: the
    /// importers read a row's cells as bytes and make strings only of those they use.
    ///
    /// The input is scanned a window at a time as its source gives it (`CSVScanner`: a file is
    /// never whole in memory); the file is read to its end whatever `body` throws (unless `stop`,
    /// below), and a problem of the CSV itself (anywhere) is thrown before the first error of
    /// `body`, as when every record was read first, and a file that is not UTF-8 is refused as
    /// such before either.
    ///
    /// `stop`, asked after each window, ends the read there when true (no more window is read or
    /// scanned, nothing is thrown): for a caller whose reader will throw away whatever the rest
    /// holds, errors included (`ForeignCSV.forEachRow` once its sink declined the stream).
    static func forEachRecord(_ input: some CSVSource, until stop: () -> Bool = { false },
                              _ body: (CSVRecord) throws(VaultError) -> Void) throws(VaultError) {
        // Checked in place, window by window: `String(validating:)` made a copy of the whole
        // file, secrets and all, freed without a wipe.
        var scanner = CSVScanner()
        var stopped = false
        do throws(VaultError) {
            try input.forEachWindow { (window) throws(VaultError) in
                scanner.feed(window, body)
                guard stop() else { return }
                stopped = true
                throw .malformedInput("the read was stopped")  // caught below: no window after this one
            }
        } catch {
            guard stopped else { throw error }
            return
        }
        try scanner.finish(body)
    }

    /// The byte-by-byte walk over one buffer, not checked as UTF-8 (`runs` false: the plain
    /// reference of `CSVScanner`, `CSVWindowTests`), or the scan `forEachRecord` makes, whose runs
    /// of bytes without a meaning (inside a field, inside quotes) are found by a tight scan and
    /// copied in one piece, over the buffer as one window (`runs` true; it refuses a buffer that is
    /// not UTF-8). `body` gets each record (`InterchangeTests.test_csvRecords_runsMatchTheByteWalk`
    /// ties the two walks).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, runs: Bool, _ body: (CSVRecord) throws(VaultError) -> Void) throws(VaultError) {
        if runs {
            var scanner = CSVScanner()
            scanner.feed(bytes, body)
            return try scanner.finish(body)
        }
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(0x0D), lf = UInt8(0x0A)
        // The record being read: its cells' bytes back to back (secrets: a buffer wiped as it
        // grows and when the scan ends, `WipedBuffer`), and where each cell ends.
        let cells = WipedBuffer()
        var ends: [Int] = [], inQuotes = false, quotedField = false
        var line = 1, recordLine = 1
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var failure: VaultError?
        func endField() { ends.append(cells.count) }
        func endRecord() {
            CSVRecord.handOver(cells, &ends, line: recordLine, quoted: quotedField, failure: &failure, to: body)
            quotedField = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == quote {
                    if index < bytes.count && bytes[index] == quote { cells.append(quote); index += 1 } else { inQuotes = false }
                } else {
                    if byte == lf { line += 1 }
                    cells.append(byte)
                }
                continue
            }
            switch byte {
            case quote:
                guard cells.count == (ends.last ?? 0) else { throw .malformedInput("line \(line): a quote inside an unquoted field") }
                inQuotes = true; quotedField = true
            case comma:
                endField()
            case cr:
                if index < bytes.count && bytes[index] == lf { continue }
                endRecord(); line += 1; recordLine = line
            case lf:
                endRecord(); line += 1; recordLine = line
            default:
                cells.append(byte)
            }
        }
        if inQuotes { throw .malformedInput("line \(recordLine): unterminated quoted field") }
        if cells.count > (ends.last ?? 0) || !ends.isEmpty || quotedField { endRecord() }
        if let failure { throw failure }
    }

    /// One CSV field, quoted when it holds a comma, a quote, CR or LF, or a space at either end;
    /// each quote inside doubled.
    ///
    /// By bytes, as `records` reads them: by characters, "\r\n" is one Character (neither "\r"
    /// nor "\n") and a comma or quote followed by a combining mark is another Character, so such
    /// values were written unquoted and split the row or opened a quote on reading.
    static func quote(_ text: String) -> String {
        let bytes = text.utf8
        let special = bytes.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard special || bytes.first == UInt8(ascii: " ") || bytes.last == UInt8(ascii: " ") else { return text }
        var quoted: [UInt8] = [UInt8(ascii: "\"")]
        quoted.reserveCapacity(bytes.count + 2)
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { quoted.append(byte) }
            quoted.append(byte)
        }
        quoted.append(UInt8(ascii: "\""))
        return String(decoding: quoted, as: UTF8.self)
    }

    /// Throws unless a record of `columns` on `line` has as many columns as the header's `header`.
    static func checkWidth(line: Int, columns: Int, header: Int) throws(VaultError) {
        guard columns == header else {
            throw .malformedInput("line \(line): \(columns) columns, the header has \(header)")
        }
    }

    /// Maps a header row to column indexes by lower-cased name.
    static func columns(_ header: [String]) -> [String: Int] {
        var map: [String: Int] = [:]
        for (index, name) in header.enumerated() { map[name.lowercased().trimmed] = map[name.lowercased().trimmed] ?? index }
        return map
    }
}

// MARK: - One record, as the scan hands it over

/// A record's cells where the scan keeps them; valid during the call that receives it.
struct CSVRecord {
    /// The 1-based line the record starts on.
    let line: Int
    /// The cells' bytes back to back (valid UTF-8 each: cells are cut at ASCII bytes).
    fileprivate let bytes: UnsafeBufferPointer<UInt8>
    /// Where each cell ends in `bytes`.
    fileprivate let ends: UnsafeBufferPointer<Int>

    /// Ends the record being read: hands it to `body` (its cells back to back in `cells`, each ending
    /// where `ends` says, the last end appended here) unless it is an empty line or `body` failed
    /// before, keeping `body`'s first error in `failure` until the scan has found no problem of the
    /// CSV itself; then empties `cells` and `ends` for the next record.
    static func handOver(_ cells: WipedBuffer, _ ends: inout [Int], line: Int, quoted: Bool, failure: inout VaultError?,
                         to body: (CSVRecord) throws(VaultError) -> Void) {
        ends.append(cells.count)
        if !(ends.count == 1 && ends[0] == 0 && !quoted) && failure == nil {
            do {
                try cells.withBytes { (cellBytes) throws(VaultError) in
                    try ends.withUnsafeBufferPointer { (cellEnds) throws(VaultError) in
                        try body(CSVRecord(line: line, bytes: cellBytes, ends: cellEnds))
                    }
                }
            } catch {
                failure = error
            }
        }
        cells.removeAll()
        ends.removeAll(keepingCapacity: true)
    }

    /// The record starting on `line` whose cells are `bytes`, each ending where `ends` says.
    init(line: Int, bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>) {
        self.line = line
        self.bytes = bytes
        self.ends = ends
    }

    /// The number of cells.
    var count: Int { ends.count }

    /// The bytes of cell `index`.
    func cell(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
    }

    /// The cells' bytes back to back, which `range(_:)` indexes.
    var allBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(bytes) }

    /// Where cell `index` lies in `allBytes`.
    func range(_ index: Int) -> Range<Int> { (index == 0 ? 0 : ends[index - 1])..<ends[index] }

    /// Whether cell `index` is empty.
    func isEmpty(_ index: Int) -> Bool { cell(index).isEmpty }

    /// Cell `index` as text.
    func string(_ index: Int) -> String { String(decoding: cell(index), as: UTF8.self) }

    /// Cell `index` as a new array of its bytes.
    func array(_ index: Int) -> [UInt8] { Array(cell(index)) }

    /// Every cell as text.
    var strings: [String] { (0..<count).map(string) }
}
