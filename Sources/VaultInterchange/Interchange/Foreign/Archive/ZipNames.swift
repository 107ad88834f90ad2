// MARK: - What a ZIP's central directory names, for a guess

/// The names a ZIP archive's central directory lists, looked at for `FormatSniffer` only: whether
/// one is `export.data` (a 1pux) or one of Dashlane's CSVs. The end record and the directory are
/// found and walked by `ZipDirectory`, as `ZipArchive` walks them to read a 1pux, with the same
/// bounds and limits, so a hostile archive costs a bounded read and is never trusted past a
/// guess. Names are compared where they lie: no copy is made. Nil when the directory is not one
/// `ZipArchive` would read (a ZIP64 archive, a cut file, a count that is not the directory's) or
/// it starts before the bytes given: the caller then looks at the head.
struct ZipNames {
    /// An entry is named exactly `export.data`.
    private(set) var exportData = false
    /// An entry's name ends in `credentials.csv`, `securenotes.csv` or `personalInfo.csv`.
    private(set) var dashlane = false

    /// The names of the archive whose last bytes are `all`, which start at the file's offset
    /// `base` (0: the whole file): a central directory that starts before them is not read (nil).
    init?(_ all: UnsafeBufferPointer<UInt8>, base: Int = 0) {
        guard base >= 0 else { return nil }
        let bytes = UnsafeRawBufferPointer(all)
        // The end record lies in the last `ZipDirectory.tailLength` bytes.
        let tailStart = max(0, bytes.count - ZipDirectory.tailLength)
        guard let directory = try? ZipDirectory(tail: UnsafeRawBufferPointer(rebasing: bytes[tailStart...]), at: base + tailStart),
              directory.offset >= base else { return nil }
        var walk = directory.walk(UnsafeRawBufferPointer(rebasing: bytes[(directory.offset - base)..<(directory.end - base)]))
        do throws(ZipDirectory.Damage) {
            while let record = try walk.next() {
                if Self.equals(record.name, "export.data") { exportData = true }
                if Self.ends(record.name, "credentials.csv") || Self.ends(record.name, "securenotes.csv") || Self.ends(record.name, "personalInfo.csv") {
                    dashlane = true
                }
            }
        } catch {
            return nil
        }
    }

    private static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        bytes.count == literal.utf8CodeUnitCount && ends(bytes, literal)
    }

    private static func ends(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let start = bytes.count - count
        for index in 0..<count where bytes[start + index] != literal.utf8Start[index] { return false }
        return true
    }
}
