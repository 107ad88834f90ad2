import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The one walk of a ZIP's end record and central directory (`ZipDirectory`) that both the 1pux
/// reader (`ZipArchive`) and the format sniffer (`ZipNames`) use: hostile directories (cut, miscounted,
/// ZIP64 markers, several disks, a signature in the comment) are refused by both alike, with the reason
/// the import gives; a directory before the bytes the sniffer was given is not read.
@Suite struct ZipDirectoryTests {
    private static let text = Array("plain".utf8)

    /// An archive of files `names`, each holding `text`, stored.
    private static func archive(_ names: [String]) -> [UInt8] {
        ForeignArchiveTests.zip(names.map { (name: $0, method: 0, data: text, size: text.count, crc: CRC32.checksum(text)) })
    }

    /// `bytes` with the little-endian `value` of `width` bytes written at `at`.
    private static func patched(_ bytes: [UInt8], at: Int, _ value: Int, width: Int) -> [UInt8] {
        var copy = bytes
        for index in 0..<width { copy[at + index] = UInt8(value >> (8 * index) & 0xFF) }
        return copy
    }

    /// What the walk gives for `bytes`: the names in order, or the damage.
    private static func walked(_ bytes: [UInt8]) -> Result<[String], ZipDirectory.Damage> {
        bytes.withUnsafeBytes { all in
            Result { () throws(ZipDirectory.Damage) -> [String] in
                let directory = try ZipDirectory(tail: all, at: 0)
                var walk = directory.walk(UnsafeRawBufferPointer(rebasing: all[directory.offset..<directory.end]))
                var names: [String] = []
                while let record = try walk.next() { names.append(String(decoding: record.name, as: UTF8.self)) }
                return names
            }
        }
    }

    private static func names(_ bytes: [UInt8], base: Int = 0) -> ZipNames? {
        bytes.withUnsafeBufferPointer { ZipNames($0, base: base) }
    }

    // MARK: - Success

    @Test func test_walk_readsEveryRecordAndBothReadersAgree() throws {
        let two = Self.archive(["a.txt", "export.data"])
        #expect(try Self.walked(two).get() == ["a.txt", "export.data"])
        #expect(try ZipArchive(two, what: "t").entries.map(\.name) == ["a.txt", "export.data"])
        #expect(Self.names(two)?.exportData == true && Self.names(two)?.dashlane == false)
        #expect(Self.names(Self.archive(["x/credentials.csv"]))?.dashlane == true)
        // The sniffer given only the file's last bytes (`base`: where they start) reads a directory inside them.
        let end = two.count - 22, offset = Int(two[end + 16]) | Int(two[end + 17]) << 8
        #expect(Self.names(Array(two[offset...]), base: offset)?.exportData == true)
    }

    /// A comment that holds an end record's signature is not taken for the record (the record whose
    /// comment reaches the file's end is); bytes appended after an archive still leave it readable.
    @Test func test_walk_findsTheEndRecordPastASignatureInTheCommentAndBeforeAppendedBytes() throws {
        let one = Self.archive(["export.data"])
        let comment: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0xEE, count: 30)
        let commented = Self.patched(one, at: one.count - 2, comment.count, width: 2) + comment
        #expect(try Self.walked(commented).get() == ["export.data"])
        #expect(Self.names(commented)?.exportData == true)
        let appended = one + Array("trailing bytes".utf8)
        #expect(try Self.walked(appended).get() == ["export.data"])
        #expect(try ZipArchive(appended, what: "t").entries.map(\.name) == ["export.data"])
    }

    // MARK: - Hostile directories

    /// Each hostile archive is refused by the walk with its reason, by the import with the same
    /// reason, and read by the sniffer as no directory at all.
    @Test func test_walk_refusesHostileDirectoriesForBothReaders() throws {
        let two = Self.archive(["a.txt", "b.txt"])
        let end = two.count - 22
        let offset = Int(two[end + 16]) | Int(two[end + 17]) << 8, size = end - offset
        let locator: [UInt8] = [0x50, 0x4B, 0x06, 0x07] + [UInt8](repeating: 0, count: 16)
        let cases: [(String, [UInt8], ZipDirectory.Damage)] = [
            ("no end record", Array(two.prefix(end)), .noEndRecord),
            ("shorter than an end record", Array(two.suffix(21)), .tooShort),
            ("a directory cut short (its last name gone, the end record moved up)",
             Array(two[..<(end - 3)]) + Self.patched(Array(two[end...]), at: 12, size - 3, width: 4), .damagedDirectory),
            ("a directory said to run past the end record", Self.patched(two, at: end + 12, size + 1, width: 4), .outsideFile),
            ("a directory said to start past the end record", Self.patched(two, at: end + 16, end + 1, width: 4), .outsideFile),
            ("a raised count", Self.patched(two, at: end + 10, 3, width: 2), .damagedDirectory),
            ("a lowered count", Self.patched(two, at: end + 10, 1, width: 2), .countDiffers(1)),
            ("a count of none", Self.patched(two, at: end + 10, 0, width: 2), .countDiffers(0)),
            ("several disks", Self.patched(two, at: end + 4, 1, width: 2), .severalDisks),
            ("ZIP64 markers and no ZIP64 record", Self.patched(two, at: end + 10, 0xFFFF, width: 2), .zip64MarkersWithoutRecord),
            ("ZIP64 markers and a ZIP64 locator", Array(two[..<end]) + locator + Self.patched(Array(two[end...]), at: 12, 0xFFFF_FFFF, width: 4),
             .zip64Archive),
            ("a ZIP64 offset", Self.patched(two, at: end + 16, 0xFFFF_FFFF, width: 4), .zip64MarkersWithoutRecord),
            ("a record of ZIP64 sizes", Self.patched(two, at: offset + 24, 0xFFFF_FFFF, width: 4), .zip64Entry),
            ("a record's name running past the directory", Self.patched(two, at: offset + 46 + 5 + 28, 0x7FFF, width: 2), .damagedDirectory),
            ("a record without its signature", Self.patched(two, at: offset, 0, width: 4), .damagedDirectory),
        ]
        for (what, bytes, damage) in cases {
            #expect(Self.walked(bytes) == .failure(damage), "\(what)")
            #expect(Self.names(bytes) == nil, "\(what): the sniffer read it")
            do {
                _ = try ZipArchive(bytes, what: "t")
                Issue.record("\(what): the import read it")
            } catch {
                #expect(error.description.contains(damage.reason), "\(what): \(error)")
            }
        }
        // A directory that starts before the bytes the sniffer was given is not read.
        #expect(Self.names(Array(two[(offset + 1)...]), base: offset + 1) == nil)
        // Every cut of a good archive: never a crash, and the sniffer reads a directory only where the import does.
        for length in 0..<two.count {
            let cut = Array(two.prefix(length))
            #expect((Self.names(cut) != nil) == ((try? ZipArchive(cut, what: "t")) != nil), "cut at \(length)")
        }
    }
}
