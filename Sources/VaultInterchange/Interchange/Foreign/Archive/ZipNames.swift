// MARK: - What a ZIP's central directory names, for a guess

/// The names a ZIP archive's central directory lists, looked at for `FormatSniffer` only: whether
/// one is `export.data` (a 1pux) or one of Dashlane's CSVs. The directory is found from the end
/// record in the file's last 65,557 bytes (22, and a comment of at most 65,535); every offset
/// and length is checked against the file before a byte is read, at most the record's count of
/// entries (65,535) is walked and each step moves on by at least 46 bytes, so a hostile archive
/// costs a bounded read and is never trusted past a guess. Names are compared where they lie: no
/// copy is made. Nil when there is no such record or it does not hold together (a ZIP64
/// archive's, whose offsets are 0xFFFFFFFF; a cut file; a directory before the bytes given): the
/// caller then looks at the head.
struct ZipNames {
    /// An entry is named exactly `export.data`.
    private(set) var exportData = false
    /// An entry's name ends in `credentials.csv`, `securenotes.csv` or `personalInfo.csv`.
    private(set) var dashlane = false

    /// The names of the archive whose last bytes are `all`, which start at the file's offset
    /// `base` (0: the whole file): a central directory that starts before them is not read (nil).
    init?(_ all: UnsafeBufferPointer<UInt8>, base: Int = 0) {
        let count = all.count
        guard count >= 22, base >= 0 else { return nil }
        func u16(_ at: Int) -> Int { Int(all[at]) | Int(all[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        func signature(_ at: Int, _ kind: UInt8, _ next: UInt8) -> Bool {
            all[at] == 0x50 && all[at + 1] == 0x4B && all[at + 2] == kind && all[at + 3] == next
        }
        // The end record, searched back from where the shortest one would start.
        var end: Int?
        var at = count - 22
        let lowest = max(0, count - 22 - 0xFFFF)
        while at >= lowest {
            // Its comment length must reach the file's end exactly (a stray signature in data does not).
            if signature(at, 0x05, 0x06), at + 22 + u16(at + 20) == count { end = at; break }
            at -= 1
        }
        guard let end else { return nil }
        let entries = u16(end + 10), size = u32(end + 12)
        // The directory's offset in the file, made one in `all`.
        let offset = u32(end + 16) - base
        guard offset >= 0, offset <= end, size <= end - offset else { return nil }
        let limit = offset + size
        var position = offset
        for _ in 0..<entries {
            guard position + 46 <= limit, signature(position, 0x01, 0x02) else { return nil }
            let nameLength = u16(position + 28), extraLength = u16(position + 30), commentLength = u16(position + 32)
            let name = position + 46
            guard nameLength <= limit - name else { return nil }
            let bytes = UnsafeBufferPointer(rebasing: all[name..<(name + nameLength)])
            if Self.equals(bytes, "export.data") { exportData = true }
            if Self.ends(bytes, "credentials.csv") || Self.ends(bytes, "securenotes.csv") || Self.ends(bytes, "personalInfo.csv") { dashlane = true }
            position = name + nameLength + extraLength + commentLength
        }
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && ends(bytes, literal)
    }

    private static func ends(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = bytes.count - count
        for index in 0..<count where bytes[start + index] != literal.utf8Start[index] { return false }
        return true
    }
}
