import VaultModel

// MARK: - Text helpers of the interchange parsers

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    ///
    /// ASCII text is trimmed by its bytes: there every character is one byte, and a space or a tab
    /// is a character of its own. Other text goes through `trimmedByCharacters`, the plain
    /// reference (a space there may begin or end a larger character); the KeePassXC import called
    /// this for every title, and the reversed views took more than half its instructions.
    /// `InterchangeTests.test_trimmed_agreesWithTheCharacterReference` ties the two.
    var trimmed: String {
        var text = String(self)
        let range: Range<Int>? = text.withUTF8 { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            guard high < 0x80 else { return nil }
            var start = 0, end = bytes.count
            while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
            while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
            return start..<end
        }
        guard let range else { return trimmedByCharacters }
        if range.count == text.utf8.count { return text }
        return text.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Without leading and trailing spaces and tabs, character by character.
    var trimmedByCharacters: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// Whether two strings hold the same bytes (`==` on strings is canonical equivalence).
func sameUTF8(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && compareUTF8(a, b) == 0
}

/// The order of two strings' bytes (`compareBytes`'): negative when `a`'s come first.
func compareUTF8(_ a: String, _ b: String) -> Int {
    // In place (no copy of either string, a retain each) when both are contiguous, as native strings are.
    if let order = a.utf8.withContiguousStorageIfAvailable({ a in
        b.utf8.withContiguousStorageIfAvailable { b in compareBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
    }), let order {
        return order
    }
    var a = a, b = b
    return a.withUTF8 { a in b.withUTF8 { b in compareBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) } }
}
