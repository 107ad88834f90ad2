#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - dotenv read a window at a time

extension DotEnv {
    /// `records(_:now:)` of a file read a window at a time (`ImportWindows`): the file is never
    /// whole in memory, only the lines not yet parsed (issue 44's memory rule: a record is 1.4×
    /// its line, and the file read whole beside them made the peak 2.2× the input). Same records,
    /// same nil and same error as the whole-buffer read, whatever the cuts
    /// (`DotEnvWindowTests` compares the two over random files and windows of 1 byte up).
    ///
    /// The parser only sees whole lines: the bytes up to the last line end read (all of them at
    /// the end of the file). A variable that goes on past them (a double-quoted value over more
    /// lines) is read again from its start once more lines are in; the buffer doubles when one
    /// variable fills it, so a long value costs a few passes at most. Lines are cut at LF, which
    /// is never part of a multi-byte UTF-8 sequence, so checking each part as UTF-8 checks the
    /// file. As the whole-buffer read does, a file that is not UTF-8 anywhere is refused as such
    /// before its first syntax error: after one, the rest is still read and checked.
    static func records(_ windows: ImportWindows, now: Int64) throws(VaultError) -> WrittenRecords? {
        // Room for twice the input, as `records(_:now:)`: mapped but not touched until written.
        guard var writer = ImportRecordWriter(capacity: windows.byteCount * 2) else { return nil }
        var text = DotEnvText(windows)
        var declined = false
        var problem: VaultError?
        var linesBefore = 0
        while try text.fill() {
            let lines = text.lines
            guard text.isUTF8(upTo: lines) else { throw notUTF8 }
            guard problem == nil else {
                text.consume(lines)  // read on for the UTF-8 check only
                continue
            }
            var parser = Parser(bytes: text.bytes(upTo: lines), complete: text.atEnd, linesBefore: linesBefore, atStart: text.atStart)
            var consumed = 0
            do throws(VaultError) {
                while try readRecord(&parser, now: now, into: &writer, declined: &declined) == .read {
                    consumed = parser.nextStart
                    linesBefore = parser.linesRead
                }
            } catch {
                problem = error
                consumed = lines
            }
            text.consume(consumed)
        }
        if let problem { throw problem }
        // A run that could not be written (a full disk): read the plain way, in memory.
        guard !declined, writer.failure == nil else { return nil }
        return try? writer.records()
    }
}

// MARK: - The lines not yet parsed

/// A dotenv file's bytes from the first line not yet parsed to as far as it has been read, in
/// one buffer (wiped as its parsed bytes go, when it grows and at the end).
private struct DotEnvText {
    private let windows: ImportWindows
    private let store: Store
    /// Bytes held, from the buffer's start.
    private var count = 0
    /// Of them, those up to the last line end.
    private var lineEnd = 0
    /// Of them, those checked as UTF-8.
    private var checked = 0
    /// The file offset of the buffer's first byte.
    private var offset = 0
    /// Whether the file's last byte has been read.
    private(set) var atEnd = false
    /// The last pass parsed nothing: more than a window is needed.
    private var stalled = false

    /// The buffer, freed (wiped) with the last copy of the text.
    private final class Store {
        var bytes: UnsafeMutableRawBufferPointer

        init(_ count: Int) { bytes = .allocate(byteCount: count, alignment: 16) }

        deinit {
            SecureMemory.wipe(bytes)
            bytes.deallocate()
        }
    }

    init(_ windows: ImportWindows) {
        self.windows = windows
        store = Store(max(windows.windowLength * 2, 16))
    }

    /// Whether the buffer holds the start of the file.
    var atStart: Bool { offset == 0 }

    /// The bytes that end at a line end (`lines`): all of them at the end of the file.
    var lines: Int { atEnd ? count : lineEnd }

    /// Reads until a window brings a line end (or the file ends); after a pass that parsed
    /// nothing (a variable longer than what was read), until the bytes held have doubled too, so
    /// that a long variable is parsed again a few times at most. False after the pass that
    /// parsed the file's end.
    mutating func fill() throws(VaultError) -> Bool {
        guard !atEnd else { return false }
        let target = stalled ? max(count * 2, store.bytes.count) : 0
        var sawLineEnd = false
        while true {
            if count == store.bytes.count { grow() }
            let room = UnsafeMutableRawBufferPointer(rebasing: store.bytes[count..<min(count + windows.windowLength, store.bytes.count)])
            let got = try windows.next(at: offset + count, into: room)
            guard got > 0 else {
                atEnd = true
                return true
            }
            // The last line end of the fresh bytes, looked for from their end.
            var back = got
            while back > 0 && room[back - 1] != 0x0A { back -= 1 }
            if back > 0 {
                sawLineEnd = true
                lineEnd = count + back
            }
            count += got
            if sawLineEnd && count >= target { return true }
        }
    }

    /// Whether the bytes up to `end` not yet checked are UTF-8.
    mutating func isUTF8(upTo end: Int) -> Bool {
        guard end > checked else { return true }
        let bytes = UnsafeRawBufferPointer(rebasing: store.bytes[checked..<end])
        checked = end
        return UTF8Bytes.isValid(bytes)
    }

    /// The first `end` bytes, valid until the text next changes.
    func bytes(upTo end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeRawBufferPointer(rebasing: store.bytes[..<end]).assumingMemoryBound(to: UInt8.self)
    }

    /// Drops the first `parsed` bytes (wiped), moving the rest to the buffer's start; none parsed
    /// means the next `fill` reads more than a window.
    mutating func consume(_ parsed: Int) {
        stalled = parsed == 0
        guard parsed > 0 else { return }
        let base = store.bytes.baseAddress!
        let kept = count - parsed
        if kept > 0 { memmove(base, base + parsed, kept) }
        SecureMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: store.bytes[kept..<count]))
        offset += parsed
        count = kept
        lineEnd = max(lineEnd - parsed, 0)
        checked = max(checked - parsed, 0)
    }

    /// Doubles the buffer, the old one wiped.
    private func grow() {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: store.bytes.count * 2, alignment: 16)
        larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: store.bytes[..<count]))
        SecureMemory.wipe(store.bytes)
        store.bytes.deallocate()
        store.bytes = larger
    }
}
