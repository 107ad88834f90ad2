#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - XMLReader: lines, the stream of windows, the checks at its start

extension XMLReader {
    static func newlines(in buffer: [UInt8], _ range: Range<Int>) -> Int {
        guard !range.isEmpty else { return 0 }
        return buffer.withUnsafeBufferPointer { all in
            // From one LF to the next with memchr: most of a KeePass file's lines are long.
            var count = 0
            var from = all.baseAddress! + range.lowerBound
            let end = all.baseAddress! + range.upperBound
            while from < end, let hit = memchr(from, 0x0A, end - from) {
                count += 1
                from = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) + 1
            }
            return count
        }
    }

    mutating func moveLineMark(to offset: Int) {
        let target = min(max(offset, base), base + buffer.count)
        lineAtMark = Self.line(of: target, in: buffer, base: base, mark: lineMark, lineAtMark: lineAtMark)
        lineMark = target
    }

    // MARK: The stream

    /// Reads windows until `count` bytes from the cursor are held, or the document ends.
    mutating func fill(_ count: Int) throws(VaultError) {
        while buffer.count - cursor < count, try readMore() {}
    }

    /// The index in `buffer` of the first `byte` at or after `start`, reading windows until one
    /// holds it; nil when the document ends first.
    mutating func find(_ byte: UInt8, from start: Int) throws(VaultError) -> Int? {
        var distance = start - cursor  // from the cursor, which a new window may move
        while true {
            if let found = Self.index(of: byte, in: buffer, (cursor + distance)..<max(cursor + distance, buffer.count)) { return found }
            distance = max(distance, buffer.count - cursor)
            guard streamed, try readMore() else { return nil }
        }
    }

    /// The index in `buffer` of the first `literal` at or after `start`, reading windows until
    /// one holds it whole; nil when the document ends first.
    mutating func find(_ literal: StaticString, from start: Int) throws(VaultError) -> Int? {
        let count = literal.utf8CodeUnitCount
        let first = literal.utf8Start[0]
        var distance = start - cursor
        while true {
            while let found = Self.index(of: first, in: buffer, (cursor + distance)..<max(cursor + distance, buffer.count)) {
                guard buffer.count - found >= count else {
                    distance = found - cursor  // its rest comes in the next window
                    break
                }
                if (0..<count).allSatisfy({ buffer[found + $0] == literal.utf8Start[$0] }) { return found }
                distance = found + 1 - cursor
            }
            // What is held holds no whole literal from `distance` on, but its last bytes may start one.
            distance = max(distance, buffer.count - cursor - (count - 1))
            guard streamed, try readMore() else { return nil }
        }
    }

    /// Reads windows until the start tag at the cursor is held whole: up to its first '>' outside
    /// a quoted attribute value (as `readStartTag` reads it), or the document's end.
    mutating func findTagEnd() throws(VaultError) -> Int? {
        var distance = 1
        var quote: UInt8 = 0
        while true {
            var index = cursor + distance
            while index < buffer.count {
                let byte = buffer[index]
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: ">") {
                    return index
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                }
                index += 1
            }
            distance = index - cursor
            guard try readMore() else { return nil }
        }
    }

    /// Drops what lies before the event being read (and the pinned text), zeroing it, then reads
    /// the next window from the source and checks it; false when the document has ended.
    mutating func readMore() throws(VaultError) -> Bool {
        guard let source else { return false }
        compact()
        reserve(window)
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: window))
        var failure: VaultError?
        let count = buffer.withUnsafeMutableBufferPointer { all -> Int in
            let room = UnsafeMutableBufferPointer(rebasing: all[old...])
            do throws(VaultError) {
                return min(max(0, try source(room)), room.count)
            } catch {
                failure = error
                SecureMemory.wipe(UnsafeMutableRawBufferPointer(room))
                return 0
            }
        }
        buffer.removeLast(window - count)
        if let failure {
            self.source = nil
            throw failure
        }
        if count == 0 { self.source = nil }
        try checkStart(final: count == 0)
        try checkWindow(final: count == 0)
        return count > 0
    }

    /// Drops the bytes before the cursor (and before the pinned offset), zeroing where they lay.
    private mutating func compact() {
        let keep = pinned.map { min(cursor, $0 - base) } ?? cursor
        guard keep > 0 else { return }
        if lineMark < base + keep { moveLineMark(to: base + keep) }
        buffer.withUnsafeMutableBufferPointer { all in
            let start = all.baseAddress!
            memmove(start, start + keep, all.count - keep)
            SecureMemory.wipe(UnsafeMutableRawBufferPointer(start: start + (all.count - keep), count: keep))
        }
        buffer.removeLast(keep)
        base += keep
        cursor -= keep
        checked -= keep
    }

    /// Room for `extra` more bytes without the array reallocating on its own (which would free the
    /// old bytes unwiped): a larger buffer is made here and the old one zeroed.
    private mutating func reserve(_ extra: Int) {
        guard buffer.capacity - buffer.count < extra else { return }
        var grown: [UInt8] = []
        grown.reserveCapacity(max(buffer.capacity * 2, buffer.count + extra))
        grown.append(contentsOf: buffer)
        SecureMemory.wipe(&buffer)
        buffer = grown
    }

    // MARK: Checks

    /// The start of the document: UTF-16 refused, a UTF-8 byte order mark skipped. Waits for three
    /// bytes unless the document is shorter (`final`).
    mutating func checkStart(final: Bool) throws(VaultError) {
        guard !startChecked, buffer.count >= 3 || final else { return }
        startChecked = true
        if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { cursor = 3 }
        if buffer.starts(with: [0xFF, 0xFE]) || buffer.starts(with: [0xFE, 0xFF]) {
            throw .malformedInput("line 1: the XML is in UTF-16; vaultfile reads XML in UTF-8 (save it as UTF-8)")
        }
    }

    /// Checks the bytes held past `checked` for UTF-8 and for characters XML forbids, but for a
    /// character cut at the end of a window (`final`: there is no more).
    mutating func checkWindow(final: Bool) throws(VaultError) {
        guard startChecked else { return }
        let end = final ? buffer.count : Self.wholeCharacters(buffer, from: checked)
        guard end > checked else { return }
        let range = checked..<end
        // Checked where it lies: a String of it would be one more copy of every secret (a KDBX's
        // decrypted XML too), freed without a wipe.
        guard buffer.withUnsafeBytes({ UTF8Bytes.isValid(UnsafeRawBufferPointer(rebasing: $0[range])) }) else {
            throw .malformedInput("the XML file is not UTF-8")
        }
        if let bad = Self.firstForbidden(buffer, range) {
            throw .malformedInput("line \(line(of: base + bad)): a control character (byte \(buffer[bad])) that XML does not allow")
        }
        checked = end
    }

    /// The index of the first byte in `range` of `bytes` that is a C0 control but tab, LF and CR;
    /// eight bytes at a time where none is below 0x20.
    static func firstForbidden(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        bytes.withUnsafeBytes { held -> Int? in
            var index = range.lowerBound
            while index < range.upperBound {
                // A word with no byte below 0x20 (the bit trick of "has less than": exact for 0x20 ≤ 0x80).
                if range.upperBound - index >= 8 {
                    let word = held.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080 == 0 { index += 8; continue }
                }
                let byte = held[index]
                if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D { return index }
                index += 1
            }
            return nil
        }
    }

    /// The end of the last whole UTF-8 character of `buffer` after `start`: a sequence cut by the
    /// window's end waits for the next one (anything else malformed is left to the check).
    private static func wholeCharacters(_ buffer: [UInt8], from start: Int) -> Int {
        let end = buffer.count
        for back in 1...4 where end - back >= start {
            let byte = buffer[end - back]
            if byte & 0xC0 == 0x80 { continue }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return back < length && byte < 0xF8 ? end - back : end
        }
        return end
    }
}
