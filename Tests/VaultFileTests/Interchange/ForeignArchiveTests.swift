import Foundation
import TestSupport
import Testing
@testable import VaultInterchange
@testable import VaultModel

/// The bounded inflater (the system zlib), gzip and ZIP reader under 1pux and KeePass attachments:
/// known streams, ZIP bombs refused before inflating, output held to the declared size, damage
/// never a crash.
@Suite struct ForeignArchiveTests {
    // MARK: - Building test archives

    /// Bits into bytes, least significant first, as DEFLATE packs them.
    struct BitWriter {
        var bytes: [UInt8] = []
        var bit = 0
        mutating func write(_ value: Int, _ count: Int) {
            for index in 0..<count {
                if bit == 0 { bytes.append(0) }
                if value >> index & 1 == 1 { bytes[bytes.count - 1] |= 1 << UInt8(bit) }
                bit = (bit + 1) % 8
            }
        }
        /// A Huffman code: its bits from the top one down.
        mutating func code(_ value: Int, _ count: Int) {
            for index in stride(from: count - 1, through: 0, by: -1) { write(value >> index & 1, 1) }
        }
    }

    /// A fixed-Huffman DEFLATE stream of one zero byte and `matches` copies of 258 bytes: 1 + 258 × matches zeros.
    static func zeros(matches: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.write(1, 1); writer.write(1, 2)           // the last block, fixed codes
        writer.code(0x30, 8)                               // literal 0
        for _ in 0..<matches { writer.code(0xC5, 8); writer.code(0, 5) }  // length 258 (symbol 285), distance 1
        writer.code(0, 7)                                  // end of block
        return writer.bytes
    }

    /// A ZIP archive of `files`: (name, method, data as stored, declared size, CRC-32).
    static func zip(_ files: [(name: String, method: Int, data: [UInt8], size: Int, crc: UInt32)], overlap: Bool = false) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v & 0xFFFF) + u16(v >> 16 & 0xFFFF) }
        var out: [UInt8] = [], central: [UInt8] = [], offsets: [Int] = []
        for file in files {
            offsets.append(overlap && !offsets.isEmpty ? offsets[0] : out.count)
            let name = Array(file.name.utf8)
            let common = u16(20) + u16(0) + u16(file.method) + u16(0) + u16(0) + u32(Int(file.crc)) + u32(file.data.count) + u32(file.size) + u16(name.count) + u16(0)
            out += u32(0x0403_4B50) + common + name + file.data
            central += u32(0x0201_4B50) + u16(20) + common + u16(0) + u16(0) + u16(0) + u32(0) + u32(offsets.last!) + name
        }
        return out + central + u32(0x0605_4B50) + u16(0) + u16(0) + u16(files.count) + u16(files.count) + u32(central.count) + u32(out.count) + u16(0)
    }

    // MARK: - Success

    @Test func test_inflate_readsFixedDynamicAndStoredBlocks() throws {
        let zeros = try Inflate.inflate(Self.zeros(matches: 10)[...], size: 2581, wrapper: .raw, what: "t")
        #expect(zeros.output == [UInt8](repeating: 0, count: 2581))
        // KeePassXC's gzip of "hello attachment\n" (fixed codes), and the 1pux fixture (dynamic codes).
        let gzip = Array(Data(base64Encoded: "H4sIAAAAAAAAA8tIzcnJV0gsKUlMzshNzSvhAgCOHcmKEQAAAA==")!)
        #expect(try Gzip.decompress(gzip, limit: 100, what: "t") == Array("hello attachment\n".utf8))
        let archive = try ZipArchive(try KeePassXMLReaderTests.fixture("1password.1pux"), what: "the 1pux file")
        #expect(archive.entries.map(\.name) == ["export.attributes", "export.data", "files/doc1__codes.txt"])
        let data = try archive.contents(of: try #require(archive.entry(named: "export.data")))
        #expect(data.count == 10165 && data.starts(with: Array("{\n  \"accounts\"".utf8)))
        // A stored block: 5 bytes after the byte boundary.
        let stored: [UInt8] = [0x01, 0x05, 0x00, 0xFA, 0xFF] + Array("hello".utf8)
        #expect(try Inflate.inflate(stored[...], size: 5, wrapper: .raw, what: "t").output == Array("hello".utf8))
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test func test_inflate_fillsALargeDeclaredSizeInChunks() throws {
        // 258,001 bytes: several of the 64 KiB chunks zlib is given at a time, into one buffer of the declared size.
        let result = try Inflate.inflate(Self.zeros(matches: 1000)[...], size: 258_001, wrapper: .raw, what: "t")
        #expect(result.output.count == 258_001 && result.output.allSatisfy { $0 == 0 })
        #expect(result.consumed == Self.zeros(matches: 1000).count)
        // An empty gzip member (`printf '' | gzip -n`) declares and inflates to nothing.
        let empty: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        #expect(try Gzip.decompress(empty, limit: 0, what: "t") == [])
    }

    @Test func test_zip_readsStoredEntries() throws {
        let text = Array("plain".utf8)
        let archive = try ZipArchive(Self.zip([("a.txt", 0, text, text.count, CRC32.checksum(text))]), what: "t")
        #expect(try archive.contents(of: archive.entries[0]) == text)
    }

    // MARK: - Failure

    @Test func test_zip_refusesBombsBeforeInflating() throws {
        let stream = Self.zeros(matches: 1000)
        // Declares 100 MiB from a few hundred bytes: refused by the ratio, nothing inflated.
        do {
            _ = try ZipArchive(Self.zip([("export.data", 8, stream, 100 << 20, 0)]), what: "the 1pux file")
            Issue.record("a bomb accepted")
        } catch { #expect(error.description.contains("refused before inflating") && error.description.contains("times over"), "\(error)") }
        // Declares less than it inflates to: the inflater stops at the declared size.
        let archive = try ZipArchive(Self.zip([("export.data", 8, stream, 1000, 0)]), what: "the 1pux file")
        do { _ = try archive.contents(of: archive.entries[0]); Issue.record("inflated past its size") } catch {
            #expect(error.description.contains("inflates to more than 1000 bytes"), "\(error)")
        }
        // Many entries over one compressed run (an overlapped bomb): here every entry points at the
        // first one's local header, whose name is the first one's, so the name check refuses it first.
        let small = Self.zeros(matches: 3)
        let overlapped = Self.zip([("a", 8, small, 775, 0), ("b", 8, small, 775, 0)], overlap: true)
        do { _ = try ZipArchive(overlapped, what: "the 1pux file"); Issue.record("overlap accepted") } catch {
            #expect(error.description.contains("overlap") || error.description.contains("names its file otherwise"), "\(error)")
        }
        // Entries whose local headers differ but whose data overlap: the second header lies inside
        // the first one's stored data.
        let inner = Self.zip([("b", 0, [7], 1, CRC32.checksum([7]))])
        let innerLocal = Array(inner.prefix(30 + 1 + 1))  // b's local header, name and byte
        let outer = Self.zip([("a", 0, innerLocal, innerLocal.count, CRC32.checksum(innerLocal))])
        var nested = Array(outer.prefix(30 + 1 + innerLocal.count))
        let centralA = Array(outer[(30 + 1 + innerLocal.count)..<(outer.count - 22)])
        var centralB = Array(inner[(30 + 1 + 1)..<(inner.count - 22)])
        centralB[42] = UInt8(30 + 1)  // b's local header: inside a's data
        let directory = centralA + centralB
        nested += directory
        nested += [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 2, 0, 2, 0] + [UInt8(directory.count), 0, 0, 0] + [UInt8(30 + 1 + innerLocal.count), 0, 0, 0, 0, 0]
        do { _ = try ZipArchive(nested, what: "the 1pux file"); Issue.record("overlap accepted") } catch {
            #expect(error.description.contains("overlap"), "\(error)")
        }
        // More than the total limit, declared by stored entries of one byte each would be slow; one entry suffices.
        #expect(throws: VaultError.self) { try ZipArchive(Self.zip([("big", 0, [1], ZipArchive.maxTotalBytes + 1, 0)]), what: "t") }
    }

    @Test func test_inflate_refusesOutputOtherThanTheDeclaredSize() throws {
        let stream = Self.zeros(matches: 1000)[...]
        do { _ = try Inflate.inflate(stream, size: 258_000, wrapper: .raw, what: "t"); Issue.record("inflated past its size") } catch {
            guard case .malformedInput = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("inflates to more than 258000 bytes, its declared size"), "\(error)")
        }
        do { _ = try Inflate.inflate(stream, size: 258_002, wrapper: .raw, what: "t"); Issue.record("a short stream accepted") } catch {
            #expect(error.description.contains("inflates to 258001 bytes, not the 258002 declared"), "\(error)")
        }
        do { _ = try Inflate.inflate(stream.dropLast(), size: 258_001, wrapper: .raw, what: "t"); Issue.record("a truncated stream accepted") } catch {
            #expect(error.description.contains("it ends early"), "\(error)")
        }
    }

    @Test func test_gzip_refusesDamageAndSizesPastTheLimit() throws {
        // KeePassXC's gzip of "hello attachment\n": CRC-32 8A C9 1D 8E, length 17, in its last 8 bytes.
        let good = Array(Data(base64Encoded: "H4sIAAAAAAAAA8tIzcnJV0gsKUlMzshNzSvhAgCOHcmKEQAAAA==")!)
        do { _ = try Gzip.decompress(good, limit: 16, what: "t"); Issue.record("a size past the limit accepted") } catch {
            guard case .limitExceeded = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("declares 17 bytes") && error.description.contains("refused before inflating"), "\(error)")
        }
        // A length field of 4 GiB − 1 (a bomb's claim) is refused without allocating it.
        var bomb = good
        bomb.replaceSubrange(bomb.count - 4..<bomb.count, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: VaultError.self) { try Gzip.decompress(bomb, limit: VaultLimits.maxValueLength, what: "t") }
        var wrongCRC = good
        wrongCRC[good.count - 8] ^= 1
        do { _ = try Gzip.decompress(wrongCRC, limit: 100, what: "t"); Issue.record("a wrong CRC-32 accepted") } catch {
            #expect(error.description.contains("incorrect data check"), "\(error)")
        }
        var shorter = good
        shorter[good.count - 4] = 16
        do { _ = try Gzip.decompress(shorter, limit: 100, what: "t"); Issue.record("a wrong length accepted") } catch {
            #expect(error.description.contains("more than 16 bytes"), "\(error)")
        }
        let trailing = good + good.suffix(4)
        do { _ = try Gzip.decompress(trailing, limit: 100, what: "t"); Issue.record("trailing data accepted") } catch {
            #expect(error.description.contains("4 bytes after its end"), "\(error)")
        }
        var notDeflate = good
        notDeflate[2] = 7
        #expect(throws: VaultError.self) { try Gzip.decompress(notDeflate, limit: 100, what: "t") }
    }

    @Test func test_zip_refusesDamage() throws {
        let text = Array("plain".utf8)
        let good = Self.zip([("a.txt", 0, text, text.count, CRC32.checksum(text))])
        var wrongCRC = Self.zip([("a.txt", 0, text, text.count, 1234)])
        let archive = try ZipArchive(wrongCRC, what: "t")
        do { _ = try archive.contents(of: archive.entries[0]); Issue.record("a wrong CRC accepted") } catch {
            #expect(error.description.contains("CRC-32"), "\(error)")
        }
        wrongCRC[40 + 8] = 1  // the encrypted flag, in the central directory (after a local header of 30 + 5 + 5 bytes)
        #expect(throws: VaultError.self) { try ZipArchive(wrongCRC, what: "t").contents(of: ZipArchive(wrongCRC, what: "t").entries[0]) }
        for length in [0, 10, good.count - 1] {
            #expect(throws: VaultError.self) { try ZipArchive(Array(good.prefix(length)), what: "t") }
        }
        #expect(throws: VaultError.self) { try Inflate.inflate([0x07][...], size: 10, wrapper: .raw, what: "t") }  // block type 3
        #expect(throws: VaultError.self) { try Inflate.inflate(Array(Self.zeros(matches: 3).dropLast())[...], size: 775, wrapper: .raw, what: "t") }
        #expect(throws: VaultError.self) { try Gzip.decompress(Array(repeating: 0, count: 20), limit: 10, what: "t") }
    }

    @Test func test_zip_refusesALocalNameOtherThanTheCentralOneAndALoweredCount() throws {
        // att58 F8: unzip and Python refuse or list what vaultfile read otherwise.
        let text = Array("plain".utf8)
        let two = Self.zip([("a.txt", 0, text, text.count, CRC32.checksum(text)), ("b.txt", 0, text, text.count, CRC32.checksum(text))])
        #expect(try ZipArchive(two, what: "t").entries.map(\.name) == ["a.txt", "b.txt"])
        var renamed = two
        renamed[30] = UInt8(ascii: "e")  // the first local header's name: e.txt, the directory still says a.txt
        #expect(throws: VaultError.self) { try ZipArchive(renamed, what: "t") }
        var hidden = two
        let end = hidden.count - 22
        hidden[end + 8] = 1; hidden[end + 10] = 1  // the end record counts one file of two
        do { _ = try ZipArchive(hidden, what: "t"); Issue.record("a lowered count accepted") } catch {
            #expect(error.description.contains("its end record says 1 file and"), "\(error)")
        }
    }

    /// An end record that counts 65,535 entries, with no ZIP64 record before it, is a damaged
    /// archive, not "a ZIP64 archive" (att62 F8); one with a ZIP64 locator before it is a ZIP64 one.
    @Test func test_zip_aCountOf65535WithoutAZIP64LocatorIsSaidToBeDamaged() throws {
        let text = Array("plain".utf8)
        var counted = Self.zip([("a.txt", 0, text, text.count, CRC32.checksum(text))])
        let end = counted.count - 22
        for offset in [8, 9, 10, 11] { counted[end + offset] = 0xFF }
        do { _ = try ZipArchive(counted, what: "t"); Issue.record("a count of 65,535 accepted") } catch {
            #expect(!error.description.contains("ZIP64 archive") && error.description.contains("does not hold together"), "\(error)")
        }
        // A ZIP64 end-of-central-directory locator (its signature) just before the end record.
        let locator: [UInt8] = [0x50, 0x4B, 0x06, 0x07] + Array(repeating: 0, count: 16)
        let zip64 = Array(counted[..<end]) + locator + Array(counted[end...])
        do { _ = try ZipArchive(zip64, what: "t"); Issue.record("a ZIP64 archive accepted") } catch {
            #expect(error.description.contains("a ZIP64 archive"), "\(error)")
        }
    }

    // MARK: - Edge cases

    @Test func test_inflate_neverCrashesOnRandomOrDamagedStreams() throws {
        var generator = SplitMix(seed: 4402)
        let real = try KeePassXMLReaderTests.fixture("1password.1pux")
        for round in 0..<2_000 {
            var bytes = (0..<(Int(generator.nextByte()) + 1)).map { _ in generator.nextByte() }
            if round % 2 == 0 {
                bytes = real
                for _ in 0..<4 { bytes[(Int(generator.nextByte()) << 8 | Int(generator.nextByte())) % bytes.count] = generator.nextByte() }
                _ = try? OnePUXReader.read(bytes, now: 0)
            }
            _ = try? Inflate.inflate(bytes[...], size: 1 << 16, wrapper: .raw, what: "t")
            _ = try? Inflate.inflate(bytes[...], size: bytes.count, wrapper: .gzip, what: "t")
            _ = try? Gzip.decompress([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0] + bytes, limit: 1 << 16, what: "t")
        }
    }

    /// The archive read from a file a part at a time (`ZipBytes` over `ImportWindows`, reads
    /// coming short) reads as the same archive in memory: the same entries and contents, or the
    /// same error, for the fixture, the hostile archives above, and 600 damaged or cut copies.
    @Test func test_zip_readFromAFileAsInMemory() throws {
        /// The entries' names and contents (or each error), as text.
        func described(_ archive: () throws(VaultError) -> ZipArchive) -> String {
            do {
                let zip = try archive()
                return zip.entries.map { entry in
                    let contents = Result { () throws(VaultError) in try zip.contents(of: entry) }
                    return "\(entry.name) \(entry.dataStart) \((try? contents.get()).map { "\($0)" } ?? "\(contents)")"
                }.joined(separator: "\n")
            } catch { return "error: \(error)" }
        }
        let real = try KeePassXMLReaderTests.fixture("1password.1pux")
        let stream = Self.zeros(matches: 1000), small = Self.zeros(matches: 3)
        var inputs = [real, Self.zip([("export.data", 8, stream, 100 << 20, 0)]), Self.zip([("export.data", 8, stream, 1000, 0)]),
                      Self.zip([("a", 8, small, 775, 0), ("b", 8, small, 775, 0)], overlap: true), [], Array(real.prefix(21))]
        var generator = SplitMix(seed: 4_403)
        for round in 0..<600 {
            var bytes = real
            if round % 3 == 0 { bytes = Array(bytes.prefix(Int(generator.nextByte()) << 4 % bytes.count)) }
            for _ in 0..<(round % 4) where !bytes.isEmpty { bytes[(Int(generator.nextByte()) << 8 | Int(generator.nextByte())) % bytes.count] = generator.nextByte() }
            inputs.append(bytes)
        }
        for (index, bytes) in inputs.enumerated() {
            let memory = described { () throws(VaultError) in try ZipArchive(bytes, what: "t") }
            let file = described { () throws(VaultError) in try ZipArchive(ZipBytes(ImportWindows.short(bytes, most: 1 + index % 300)), what: "t") }
            #expect(file == memory, "archive \(index)")
        }
    }

    /// CRC-32 folded 64 bytes at a time (`vaultfile_crc32`, carry-less multiplication, zlib's
    /// `crc32_z` for the tail) against the definition, a bit at a time: every length to 300 and
    /// longer ones, at every alignment.
    @Test func test_crc32_matchesTheDefinition() {
        func definition(_ bytes: ArraySlice<UInt8>) -> UInt32 {
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            return ~crc
        }
        var generator = SplitMix(seed: 3_232)
        let bytes = (0..<70_000).map { _ in generator.nextByte() }
        var lengths = Array(0...300) + [511, 512, 513, 1_000, 4_096, 65_536, 69_000]
        lengths += (0..<40).map { _ in Int(generator.nextByte()) << 8 | Int(generator.nextByte()) }
        for (index, length) in lengths.enumerated() {
            let start = index % 17
            let slice = bytes[start..<start + length]
            #expect(CRC32.checksum(Array(slice)) == definition(slice), "length \(length) at \(start)")
        }
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
