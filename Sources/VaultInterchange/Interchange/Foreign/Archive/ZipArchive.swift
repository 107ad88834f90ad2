import SecureMemory
import VaultModel

// MARK: - ZIP, read with limits

/// The files of a ZIP archive, held in memory or read from the import's file a part at a time
/// (`ZipBytes`), as 1Password's `.1pux` export is one (APPNOTE 6.3: stored and deflated entries,
/// one disk, no encryption, no ZIP64).
///
/// A ZIP bomb is refused before anything is inflated: the central directory is read through
/// bounds, the entries' data must lie inside the file without overlapping (an overlapped archive
/// inflates one compressed run many times over), every declared size counts against
/// `maxTotalBytes`, and an entry above `ratioFloor` bytes may declare at most `maxRatio` times its
/// compressed size. The inflater (the system zlib) then never writes past the declared size, and
/// the CRC-32 (zlib's) and the size are checked after it. Two files of one name are refused.
struct ZipArchive {
    /// The most entries read from a central directory.
    static let maxEntries = 1_000_000
    /// The most bytes all entries together may declare.
    static let maxTotalBytes = VaultLimits.maxContentLength
    /// The highest ratio of declared to compressed size for an entry larger than `ratioFloor`.
    static let maxRatio = 250
    static let ratioFloor = 1 << 20

    /// One file of the archive, as the central directory describes it.
    struct Entry {
        let name: String
        /// The length of its name in the central directory, in bytes.
        let nameLength: Int
        let method: Int
        let flags: Int
        let crc: UInt32
        let compressedSize: Int
        let size: Int
        let localHeader: Int
        /// Where its stored or compressed bytes start (after its local header).
        fileprivate(set) var dataStart = 0
    }

    /// The archive's bytes.
    let source: ZipBytes
    /// The entries in central-directory order.
    let entries: [Entry]
    /// What messages call the archive ("the 1pux file").
    let what: String

    /// Reads the central directory of `bytes` and checks it against the limits above.
    init(_ bytes: [UInt8], what: String) throws(VaultError) {
        try self.init(ZipBytes(bytes), what: what)
    }

    /// Reads the central directory of `source` and checks it against the limits above. Read from
    /// a file, only its end (the end record and the central directory) and each entry's local
    /// header are read here.
    init(_ source: ZipBytes, what: String) throws(VaultError) {
        self.source = source
        self.what = what
        func bad(_ why: String) -> VaultError { .malformedInput("\(what) is not a ZIP archive vaultfile reads (\(why))") }
        // The end record and the central directory, walked through bounds (`ZipDirectory`, which the sniffer's `ZipNames` walks too).
        let tailStart = max(0, source.count - ZipDirectory.tailLength)
        let directory = try source.withBytes(tailStart..<source.count) { (tail) throws(VaultError) -> ZipDirectory in
            do throws(ZipDirectory.Damage) { return try ZipDirectory(tail: tail, at: tailStart) } catch { throw bad(error.reason) }
        }
        let cdOffset = directory.offset
        var entries = try source.withBytes(cdOffset..<directory.end) { (bytes) throws(VaultError) -> [Entry] in
            var walk = directory.walk(bytes)
            func next() throws(VaultError) -> ZipDirectory.Record? {
                do throws(ZipDirectory.Damage) { return try walk.next() } catch { throw bad(error.reason) }
            }
            var entries: [Entry] = []
            var names: Set<String> = []
            var total = 0
            while let record = try next() {
                let name = String(decoding: record.name, as: UTF8.self)
                let (compressed, size) = (record.compressedSize, record.size)
                guard entries.count < Self.maxEntries else { throw .limitExceeded("\(what) has more than \(Self.maxEntries) files") }
                // Two files of one name: which one a tool reads differs (the first, the last), so
                // what vaultfile imports could differ from what the user checked with unzip.
                guard names.insert(name).inserted else {
                    throw .malformedInput("\(what) holds two files named '\(ExpansionBudget.shown(name))'; an archive is refused when one name could mean either")
                }
                total += size
                guard total <= Self.maxTotalBytes else {
                    throw .limitExceeded("\(what) declares more than \(Self.maxTotalBytes >> 20) MiB of uncompressed files; refused before inflating")
                }
                if size > Self.ratioFloor && size / max(compressed, 1) > Self.maxRatio {
                    throw .limitExceeded("\(what): '\(name.prefix(80))' would inflate \(size / max(compressed, 1)) times over (a ZIP bomb?); "
                                         + "refused before inflating (the limit is \(Self.maxRatio) times)")
                }
                entries.append(Entry(name: name, nameLength: record.name.count, method: record.method, flags: record.flags, crc: record.crc,
                                     compressedSize: compressed, size: size, localHeader: record.localHeader))
            }
            return entries
        }
        // Every entry's local header and data inside the file, before the central directory, and
        // no two overlapping.
        var spans: [Range<Int>] = []
        spans.reserveCapacity(entries.count)
        for index in entries.indices {
            let start = entries[index].localHeader
            guard start <= cdOffset, cdOffset - start >= 30 else { throw bad("a damaged local header") }
            // The header and the name it should hold, in one read: as long as the central
            // directory's name, or as much as lies before the directory when that is less.
            let expected = entries[index].nameLength
            let read = min(expected, cdOffset - start - 30)
            let (signature, sameName, names) = try source.withBytes(start..<start + 30 + read) { (header) throws(VaultError) -> (UInt32, Bool, Int) in
                let nameLength = ZipDirectory.u16(header, 26)
                let sameName = nameLength == expected && read == expected
                    && String(decoding: UnsafeRawBufferPointer(rebasing: header[30..<30 + read]), as: UTF8.self) == entries[index].name
                return (ZipDirectory.u32(header, 0), sameName, nameLength + ZipDirectory.u16(header, 28))
            }
            guard signature == 0x0403_4B50 else { throw bad("a damaged local header") }
            // The local header names the file as the central directory does, as unzip and Python
            // check: a file whose two names differ is read differently by different tools (att58 F8).
            guard sameName else { throw bad("a local header names its file otherwise than the central directory") }
            let dataStart = start + 30 + names
            guard dataStart <= cdOffset, entries[index].compressedSize <= cdOffset - dataStart else { throw bad("an entry's data lies outside the file") }
            entries[index].dataStart = dataStart
            spans.append(start..<dataStart + entries[index].compressedSize)
        }
        spans.sort { $0.lowerBound < $1.lowerBound }
        for (first, second) in zip(spans, spans.dropFirst()) where first.upperBound > second.lowerBound {
            throw .limitExceeded("\(what) has entries whose data overlap (a ZIP bomb?); refused before inflating")
        }
        self.entries = entries
    }

    /// The entry named `name`, if any.
    func entry(named name: String) -> Entry? { entries.first { $0.name == name } }

    /// The bytes of `entry`, inflated and checked.
    func contents(of entry: Entry) throws(VaultError) -> [UInt8] {
        let label = "\(what): '\(entry.name.prefix(80))'"
        guard entry.flags & 1 == 0 else { throw .malformedInput("\(label) is encrypted; export it without a ZIP password") }
        var output: [UInt8]
        switch entry.method {
        case 0:
            guard entry.size == entry.compressedSize else { throw .malformedInput("\(label): a stored entry whose two sizes differ") }
            output = [UInt8](repeating: 0, count: entry.size)
            do throws(VaultError) {
                try output.withUnsafeMutableBufferPointer { (buffer) throws(VaultError) in
                    try source.read(at: entry.dataStart, into: UnsafeMutableRawBufferPointer(buffer))
                }
            } catch {
                wipe(&output)
                throw error
            }
        case 8:
            var data = try source.slice(entry.dataStart..<entry.dataStart + entry.compressedSize)
            defer { if source.isFile { data.withUnsafeMutableBytes { wipe($0) } } }
            output = try Inflate.inflate(data, size: entry.size, wrapper: .raw, what: label).output
        default:
            throw .malformedInput("\(label) is compressed with method \(entry.method); vaultfile reads stored and deflated entries")
        }
        guard output.count == entry.size else { throw .malformedInput("\(label) is not as long as its header says") }
        guard CRC32.checksum(output) == entry.crc else {
            wipe(&output)
            throw .malformedInput("\(label) is damaged (its CRC-32 does not match)")
        }
        return output
    }
}

// MARK: - For the fuzz target

/// The archive readers run on any bytes, for `make fuzz` (Fuzz/VaultFileFuzz): never a crash.
package enum ForeignArchiveFuzzing {
    /// Inflates, gunzips and reads as a ZIP archive `bytes`, ignoring every error, with small limits.
    package static func exercise(_ bytes: [UInt8]) {
        _ = try? Inflate.inflate(bytes[...], size: min(bytes.count * 4, 1 << 20), wrapper: .raw, what: "fuzz")
        _ = try? Gzip.decompress(bytes, limit: 1 << 20, what: "fuzz")
        if let archive = try? ZipArchive(bytes, what: "fuzz") {
            for entry in archive.entries.prefix(8) where entry.size <= 1 << 20 { _ = try? archive.contents(of: entry) }
        }
    }
}
