// MARK: - A ZIP's end record and central directory, walked through bounds

/// The end record of a ZIP archive and the walk of its central directory, for both readers of
/// ZIP files: `ZipArchive` (a 1pux import, which reads the files) and `ZipNames` (the format
/// sniffer's guess, which looks at the names only). Every offset and length is checked against
/// the bytes given before one is read; a walk takes at most the end record's count of records
/// (below 65,535), each at least 46 bytes on, and must end exactly where the end record says the
/// directory ends. ZIP64 (its markers, 65,535 and 0xFFFFFFFF) and archives over several disks
/// are not read (APPNOTE 6.3).
struct ZipDirectory {
    /// How many bytes from the file's end hold the end record wherever it lies (22 and a comment
    /// of at most 65,535) and the 20-byte ZIP64 locator that would stand before it.
    static let tailLength = 22 + 0xFFFF + 20

    /// Why an archive's directory is not read.
    enum Damage: Error, Equatable {
        case tooShort, noEndRecord, severalDisks, zip64Archive, zip64MarkersWithoutRecord, outsideFile, damagedDirectory, zip64Entry
        /// The end record's count of files (which is said) is not the number the directory holds.
        case countDiffers(Int)

        /// The reason, as `ZipArchive`'s messages give it.
        var reason: String {
            switch self {
            case .tooShort: return "it is too short"
            case .noEndRecord: return "no end-of-central-directory record"
            case .severalDisks: return "it spans several disks"
            case .zip64Archive: return "a ZIP64 archive"
            case .zip64MarkersWithoutRecord:
                return "its end record says 65,535 entries or 4 GiB, the values that point to a ZIP64 record, and there is none: "
                    + "its central directory does not hold together"
            case .outsideFile: return "its central directory lies outside the file"
            case .damagedDirectory: return "a damaged central directory"
            case .zip64Entry: return "a ZIP64 entry"
            case .countDiffers(let count):
                return "its end record says \(count == 1 ? "1 file" : "\(count) files") and its central directory holds another number"
            }
        }
    }

    /// Where the end record starts in the file.
    let end: Int
    /// How many files the end record says the directory holds.
    let count: Int
    /// Where the directory starts in the file, and its length: it lies before `end`.
    let offset: Int, size: Int

    /// The end record found in `tail`, the file's last bytes (they start at the file's offset
    /// `tailStart`; `tailLength` of them find it wherever it lies), and checked: one disk, no
    /// ZIP64 marker, a directory inside the file before it. The record searched for is the last
    /// one whose comment reaches the file's end exactly (a signature that lies in a comment or in
    /// data is not taken for it), else the last signature at all (an archive with bytes appended).
    init(tail: UnsafeRawBufferPointer, at tailStart: Int) throws(Damage) {
        guard tail.count >= 22 else { throw .tooShort }
        let lowest = max(0, tail.count - 22 - 0xFFFF)
        var found: Int?, last: Int?
        var at = tail.count - 22
        while at >= lowest {
            if Self.u32(tail, at) == 0x0605_4B50 {
                if last == nil { last = at }
                if at + 22 + Self.u16(tail, at + 20) == tail.count {
                    found = at
                    break
                }
            }
            at -= 1
        }
        guard let record = found ?? last else { throw .noEndRecord }
        guard Self.u16(tail, record + 4) == 0, Self.u16(tail, record + 6) == 0 else { throw .severalDisks }
        let count = Self.u16(tail, record + 10), size = Int(Self.u32(tail, record + 12)), offset = Int(Self.u32(tail, record + 16))
        guard count != 0xFFFF, size != 0xFFFF_FFFF, offset != 0xFFFF_FFFF else {
            // Those values say "in the ZIP64 record", whose locator a ZIP64 archive puts just before
            // the end record; without it the end record is only damaged (att62 F8).
            throw record >= 20 && Self.u32(tail, record - 20) == 0x0706_4B50 ? .zip64Archive : .zip64MarkersWithoutRecord
        }
        let end = tailStart + record
        guard offset <= end, size <= end - offset else { throw .outsideFile }
        (self.end, self.count, self.offset, self.size) = (end, count, offset, size)
    }

    // MARK: - The walk

    /// One record of the central directory; `name` lies in the bytes walked.
    struct Record {
        let flags: Int, method: Int
        let crc: UInt32
        let compressedSize: Int, size: Int
        /// Where the file's local header starts in the file.
        let localHeader: Int
        let name: UnsafeRawBufferPointer
    }

    /// The records of `directory`, the file's bytes from `offset` to `end`, one `next()` each.
    func walk(_ directory: UnsafeRawBufferPointer) -> Walk {
        Walk(directory: directory, count: count, left: count, size: size)
    }

    /// The records of a central directory, in order.
    struct Walk {
        fileprivate let directory: UnsafeRawBufferPointer
        /// The end record's count, and how many records are left of it.
        fileprivate let count: Int
        fileprivate var left: Int
        fileprivate let size: Int
        fileprivate var position = 0

        /// The next record; nil after the last, once the directory has ended where the end record
        /// says. A record of ZIP64 sizes or offset is refused (`zip64Entry`).
        mutating func next() throws(Damage) -> Record? {
            guard left > 0 else {
                // The end record's count must be the directory's: a lowered count hid the last
                // files from vaultfile while unzip lists them (att58 F8).
                guard position == size else { throw .countDiffers(count) }
                return nil
            }
            let end = directory.count
            guard end - position >= 46, ZipDirectory.u32(directory, position) == 0x0201_4B50 else { throw .damagedDirectory }
            let nameLength = ZipDirectory.u16(directory, position + 28), extra = ZipDirectory.u16(directory, position + 30)
            let comment = ZipDirectory.u16(directory, position + 32)
            guard end - position - 46 >= nameLength + extra + comment else { throw .damagedDirectory }
            let record = Record(flags: ZipDirectory.u16(directory, position + 8), method: ZipDirectory.u16(directory, position + 10),
                                crc: ZipDirectory.u32(directory, position + 16),
                                compressedSize: Int(ZipDirectory.u32(directory, position + 20)), size: Int(ZipDirectory.u32(directory, position + 24)),
                                localHeader: Int(ZipDirectory.u32(directory, position + 42)),
                                name: UnsafeRawBufferPointer(rebasing: directory[position + 46..<position + 46 + nameLength]))
            guard record.compressedSize != 0xFFFF_FFFF, record.size != 0xFFFF_FFFF, record.localHeader != 0xFFFF_FFFF else { throw .zip64Entry }
            position += 46 + nameLength + extra + comment
            left -= 1
            return record
        }
    }

    static func u16(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    static func u32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}
