#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - Where a CSV reader's bytes come from

/// The bytes a CSV reader scans: the whole input in one buffer (`[UInt8]`), or a file read a
/// window at a time (`ImportWindows`), so that the input is never whole in memory (issue 44's
/// memory rule: the records an import writes are held, the text they come from need not be).
protocol CSVSource {
    /// Calls `body` with each window of the input in turn, from its start; a window is valid
    /// during the call only.
    func forEachWindow(_ body: (UnsafeBufferPointer<UInt8>) throws(VaultError) -> Void) throws(VaultError)
    /// How many records the input holds at most when that is known without reading it again
    /// (its line ends, and one more), else 0: the readers reserve their items once with it.
    var expectedRows: Int { get }
    /// The input's size in bytes (room for its records is reserved from it).
    var byteCount: Int { get }
}

extension Array: CSVSource where Element == UInt8 {
    var byteCount: Int { count }

    func forEachWindow(_ body: (UnsafeBufferPointer<UInt8>) throws(VaultError) -> Void) throws(VaultError) {
        try withUnsafeBufferPointer { (buffer) throws(VaultError) in try body(buffer) }
    }

    var expectedRows: Int {
        withUnsafeBufferPointer { buffer in
            guard var next = buffer.baseAddress else { return 0 }
            let end = next + buffer.count
            var lines = 1
            while next < end, let found = memchr(next, 0x0A, end - next) {
                lines += 1
                next = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) + 1
            }
            return lines
        }
    }
}

// MARK: - The scan, a window at a time

/// The CSV scan over windows of any size, runs of bytes without a meaning copied whole: the same
/// records, lines and errors as the byte-by-byte walk over the whole buffer after its UTF-8 check
/// (`CSV.scan(_:runs: false)`), whatever the cuts (`CSVWindowTests` compares the two over random
/// inputs and windows of 1 byte up).
///
/// What a cut can split is carried to the next window: the bytes of a multi-byte UTF-8
/// sequence (checked once whole), a quote inside quotes (a doubled quote, or the end of the
/// quotes), a CR (CR LF is one line end), and the first three bytes (a byte order mark). The
/// record being read is copied out of the windows as the whole-buffer scan copies it (`cells`,
/// wiped as it grows and at the end), so a window is never needed after its call.
///
/// The order of errors is the whole-buffer scan's: a file that is not UTF-8 anywhere is refused
/// as such first (`body` may have had the records of the windows before the one that shows it:
/// every reader throws away what it made with the error); then the first problem of the CSV
/// itself (the scan stops there, the windows after it are still checked as UTF-8); then the first
/// error of `body`, which is not called after it.
struct CSVScanner {
    private let cells = WipedBuffer()
    private var ends: [Int] = []
    private var inQuotes = false, quotedField = false
    private var line = 1, recordLine = 1
    /// The first error of `body`, thrown at the end; the first problem of the CSV, which ends the scan.
    private var failure: VaultError?, problem: VaultError?
    private var notUTF8 = false
    /// The line feeds of the windows checked so far, and the line of the first byte that is not
    /// UTF-8 (`notUTF8Message`), once found.
    private var lineFeeds = 0, notUTF8Line = 0
    /// The start of a UTF-8 sequence that the last window cut (at most 3 bytes, and the 3 that
    /// complete it: room for all, so that no growth leaves a copy behind).
    private var carry: [UInt8] = Self.smallBuffer()
    /// The first bytes, until there are three (a byte order mark is skipped), then nil.
    private var head: [UInt8]? = Self.smallBuffer()

    private static func smallBuffer() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8)
        return bytes
    }
    /// A quote inside quotes, or a CR outside them, ended the last window.
    private var quoteEndedWindow = false, crEndedWindow = false

    private static let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(0x0D), lf = UInt8(0x0A)

    /// The high bit of each byte of `word` (eight bytes of the input, the first in the lowest
    /// bits once loaded as little-endian) that is a quote, a comma, a CR or an LF, at least of the
    /// first such byte: its place is `trailingZeroBitCount / 8`, 0 when none is one. (A zero byte's
    /// test, `(v - 0x01…) & ~v & 0x80…`, is exact up to the first zero byte; past it a borrow may
    /// mark another, which the first mark comes before.)
    @inline(__always)
    static func meaningful(_ loaded: UInt64) -> UInt64 {
        let word = UInt64(littleEndian: loaded)
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeroes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
        // `"`, `,`, CR, LF in every byte.
        return zeroes(word ^ 0x2222_2222_2222_2222) | zeroes(word ^ 0x2C2C_2C2C_2C2C_2C2C)
            | zeroes(word ^ 0x0D0D_0D0D_0D0D_0D0D) | zeroes(word ^ 0x0A0A_0A0A_0A0A_0A0A)
    }

    /// Checks and scans the next window, calling `body` with each record it completes.
    mutating func feed(_ window: UnsafeBufferPointer<UInt8>, _ body: (CSVRecord) throws(VaultError) -> Void) {
        guard !notUTF8 else { return }
        guard checkUTF8(window) else {
            notUTF8 = true
            return
        }
        var rest = window
        if var first = head {
            head = nil  // `first` alone holds the bytes: appended in place
            let taken = min(3 - first.count, window.count)
            first.append(contentsOf: window.prefix(taken))
            rest = UnsafeBufferPointer(rebasing: window[taken...])
            guard first.count == 3 else {
                head = first
                return
            }
            head = nil
            scanHead(first, body)
            wipe(&first)
        }
        scan(rest, body)
    }

    /// Ends the scan: the record left open, then the error to throw, in the whole-buffer scan's order.
    mutating func finish(_ body: (CSVRecord) throws(VaultError) -> Void) throws(VaultError) {
        if var first = head {
            head = nil
            scanHead(first, body)
            wipe(&first)
        }
        if !carry.isEmpty {
            if !notUTF8 { notUTF8Line = lineFeeds + 1 }
            notUTF8 = true  // a sequence the input ends inside
            wipe(&carry)
        }
        if notUTF8 { throw .malformedInput(Self.notUTF8Message(line: notUTF8Line)) }
        if let problem { throw problem }
        if quoteEndedWindow { quoteEndedWindow = false; inQuotes = false }
        if crEndedWindow {
            crEndedWindow = false
            endRecord(body); line += 1; recordLine = line
        }
        if inQuotes { throw .malformedInput("line \(recordLine): unterminated quoted field") }
        if cells.count > (ends.last ?? 0) || !ends.isEmpty || quotedField { endRecord(body) }
        if let failure { throw failure }
    }

    /// The first three bytes, without a byte order mark.
    private mutating func scanHead(_ first: [UInt8], _ body: (CSVRecord) throws(VaultError) -> Void) {
        let skipped = first.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        first.withUnsafeBufferPointer { scan(UnsafeBufferPointer(rebasing: $0[skipped...]), body) }
    }

    // MARK: UTF-8 across cuts

    /// Whether `window` continues valid UTF-8; a sequence it ends inside is carried to the next.
    private mutating func checkUTF8(_ window: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        if let lead = carry.first {
            // The carried sequence, completed from this window, checked on its own.
            let needed = Self.sequenceLength(lead) - carry.count
            let taken = min(needed, window.count)
            carry.append(contentsOf: window.prefix(taken))
            start = taken
            guard taken == needed else { return true }
            let valid = carry.withUnsafeBufferPointer(JSONString.isUTF8)
            wipe(&carry)
            carry.removeAll(keepingCapacity: true)
            guard valid else {
                notUTF8Line = lineFeeds + 1
                return false
            }
        }
        let rest = UnsafeBufferPointer(rebasing: window[start...])
        let cut = Self.openSequence(rest)
        let checked = UnsafeBufferPointer(rebasing: rest[..<(rest.count - cut)])
        guard JSONString.isUTF8(checked) else {
            let bad = Self.firstNotUTF8(checked)
            notUTF8Line = lineFeeds + Self.lineFeeds(UnsafeBufferPointer(rebasing: checked[..<bad])) + 1
            return false
        }
        // Counted once checked (a carried sequence holds no line feed, or is not UTF-8).
        lineFeeds += Self.lineFeeds(checked)
        carry.append(contentsOf: rest.suffix(cut))
        return true
    }

    /// The error of a file that is not UTF-8, its first such byte on `line` (1 + the line feeds before it).
    static func notUTF8Message(line: Int) -> String {
        "line \(line): the CSV file is not UTF-8 text"
    }

    /// The number of line feeds in `bytes`.
    static func lineFeeds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var count = 0, at = 0
        while at < bytes.count, let found = memchr(base + at, 0x0A, bytes.count - at) {
            count += 1
            at = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
        }
        return count
    }

    /// Where the first sequence of `bytes` that is not UTF-8 starts (`bytes.count` when none).
    static func firstNotUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var at = 0
        while at < bytes.count {
            let length = bytes[at] < 0x80 ? 1 : sequenceLength(bytes[at])
            guard at + length <= bytes.count, JSONString.isUTF8(UnsafeBufferPointer(rebasing: bytes[at..<at + length])) else { return at }
            at += length
        }
        return at
    }

    /// The length a sequence starting with `lead` claims (a byte that starts none: 1, which the
    /// check then refuses).
    private static func sequenceLength(_ lead: UInt8) -> Int {
        lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    }

    /// How many bytes at the end of `bytes` start a sequence longer than what is left of them.
    static func openSequence(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var back = 1
        while back <= min(3, bytes.count) {
            let byte = bytes[bytes.count - back]
            if byte & 0xC0 == 0x80 { back += 1; continue }  // a continuation byte: look further back
            return byte >= 0xC0 && sequenceLength(byte) > back ? back : 0
        }
        return 0
    }

    // MARK: Records

    private mutating func endRecord(_ body: (CSVRecord) throws(VaultError) -> Void) {
        CSVRecord.handOver(cells, &ends, line: recordLine, quoted: quotedField, failure: &failure, to: body)
        quotedField = false
    }

    /// The walk with runs copied whole, bounded by the window, with what the next byte decides
    /// carried over.
    private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (CSVRecord) throws(VaultError) -> Void) {
        guard problem == nil, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let (quote, comma, cr, lf) = (Self.quote, Self.comma, Self.cr, Self.lf)
        var index = 0
        if quoteEndedWindow {
            quoteEndedWindow = false
            if bytes[0] == quote { cells.append(quote); index = 1 } else { inQuotes = false }
        } else if crEndedWindow {
            crEndedWindow = false
            // CR LF: the LF ends the record below.
            if bytes[0] != lf { endRecord(body); line += 1; recordLine = line }
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inQuotes {
                if byte == quote {
                    if index == bytes.count {
                        quoteEndedWindow = true
                    } else if bytes[index] == quote {
                        cells.append(quote); index += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    // Up to the next quote, counting line ends (memchr for both).
                    var end = bytes.count
                    if let found = memchr(base + index, Int32(quote), bytes.count - index) {
                        end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    }
                    var scan = index - 1
                    while let found = memchr(base + scan, Int32(lf), end - scan) {
                        line += 1
                        scan = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                    }
                    cells.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index - 1..<end]))
                    index = end
                }
                continue
            }
            switch byte {
            case quote:
                guard cells.count == (ends.last ?? 0) else {
                    problem = .malformedInput("line \(line): a quote inside an unquoted field")
                    return
                }
                inQuotes = true; quotedField = true
            case comma:
                ends.append(cells.count)
            case cr:
                if index == bytes.count { crEndedWindow = true; continue }
                if bytes[index] == lf { continue }
                endRecord(body); line += 1; recordLine = line
            case lf:
                endRecord(body); line += 1; recordLine = line
            default:
                // Up to the next byte with a meaning: eight bytes at a time, then the last few one at a time.
                var end = index, found = false
                while end + 8 <= bytes.count {
                    let marks = Self.meaningful(UnsafeRawPointer(base + end).loadUnaligned(as: UInt64.self))
                    if marks != 0 {
                        end += marks.trailingZeroBitCount >> 3
                        found = true
                        break
                    }
                    end += 8
                }
                while !found && end < bytes.count {
                    let next = bytes[end]
                    if next == quote || next == comma || next == cr || next == lf { break }
                    end += 1
                }
                cells.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index - 1..<end]))
                index = end
            }
        }
    }
}
