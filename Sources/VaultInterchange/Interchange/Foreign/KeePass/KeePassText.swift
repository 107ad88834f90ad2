// MARK: - Small texts of KeePass XML

/// The words KeePass XML writes in its elements and attributes, read without making strings.
enum KeePassText {
    /// Whether ASCII `bytes` say True as KeePass writes it (`true`, `True`, spaces around), as
    /// `trimmingASCIISpaces.lowercased() == "true"` decides it; nil when a byte is not ASCII (the
    /// caller then lowercases as Unicode does).
    static func isTrueASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        var start = 0, end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        // `| 0x20` lowercases exactly these four letters (and maps nothing else onto them).
        return end - start == 4 && bytes[start] | 0x20 == UInt8(ascii: "t") && bytes[start + 1] | 0x20 == UInt8(ascii: "r")
            && bytes[start + 2] | 0x20 == UInt8(ascii: "u") && bytes[start + 3] | 0x20 == UInt8(ascii: "e")
    }

    /// `bytes` without ASCII spaces, tabs and line ends at either end (`trimmingASCIISpaces` of their text).
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0, end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether `bytes`, trimmed, are empty or `0` (`["", "0"].contains(text.trimmingASCIISpaces)`).
    static func isEmptyOrZero(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let text = trimmed(bytes)
        return text.isEmpty || (text.count == 1 && text[0] == UInt8(ascii: "0"))
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

extension String {
    /// The text without ASCII spaces, tabs and line ends at either end.
    var trimmingASCIISpaces: String {
        // Most texts have nothing to trim: told from their first and last bytes, no array made.
        guard let head = self.utf8.first, let tail = self.utf8.last else { return "" }
        if !KeePassText.isSpace(head) && !KeePassText.isSpace(tail) { return self }
        let utf8 = Array(self.utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        return first == 0 && last == utf8.count - 1 ? self : String(decoding: utf8[first...last], as: UTF8.self)
    }
}
