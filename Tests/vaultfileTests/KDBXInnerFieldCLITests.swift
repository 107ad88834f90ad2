import Foundation
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import VaultInterchange

/// A KDBX 4 whose inner header lies (issue 45's attacker review): an attachment field claiming
/// 900 MiB in a payload whose gzip trailer claims 950 MiB, with 4 MiB of bytes behind them. Both
/// claims pass the checks made up front (the payload may inflate 250 times over), so only a field
/// buffer that grows with the bytes inflated keeps the memory bounded: before, the import peaked
/// at 955 MB before its refusal. Refused as damaged (exit 4), its peak resident size measured.
@Suite struct KDBXInnerFieldCLITests {
    static let password = Array("kp-pw".utf8)

    /// Little-endian bytes of `value`.
    static func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    /// A KDBX 4 (AES-KDF of 100 rounds, ChaCha20, 1 MiB HMAC blocks) opened by `password`, whose
    /// inner header's attachment field claims `claimed` bytes and is followed by `data`, and whose
    /// gzip trailer claims `declared` bytes (the layout of Fixtures/kdbx/make-kdbx.py's `kdbx4`).
    static func lyingFile(data: [UInt8], claimed: UInt32, declared: UInt32) throws -> [UInt8] {
        let seed = randomBytes(count: 32), kdfSeed = randomBytes(count: 32), iv = randomBytes(count: 12), innerKey = randomBytes(count: 64)
        func field(_ id: UInt8, _ bytes: [UInt8]) -> [UInt8] { [id] + le(UInt32(bytes.count)) + bytes }
        func item(_ type: UInt8, _ key: String, _ value: [UInt8]) -> [UInt8] {
            [type] + le(UInt32(key.utf8.count)) + Array(key.utf8) + le(UInt32(value.count)) + value
        }
        let aesKDF: [UInt8] = [0xc9, 0xd9, 0xf3, 0x9a, 0x62, 0x8a, 0x44, 0x60, 0xbf, 0x74, 0x0d, 0x08, 0xc1, 0x8a, 0x4f, 0xea]
        let chacha: [UInt8] = [0xd6, 0x03, 0x8a, 0x2b, 0x8b, 0x6f, 0x4c, 0xb5, 0xa5, 0x24, 0x33, 0x9a, 0x31, 0xdb, 0xb5, 0x9a]
        let parameters = le(UInt16(0x0100)) + item(0x42, "$UUID", aesKDF) + item(0x05, "R", le(UInt64(100))) + item(0x42, "S", kdfSeed) + [0]
        let header = [0x03, 0xd9, 0xa2, 0x9a, 0x67, 0xfb, 0x4b, 0xb5] + le(UInt16(0)) + le(UInt16(4)) + field(2, chacha) + field(3, le(UInt32(1)))
            + field(4, seed) + field(7, iv) + field(11, parameters) + field(0, Array("\r\n\r\n".utf8))
        // The payload: the inner stream (ChaCha20) and its key, then the lying attachment field.
        let inner = field(1, le(UInt32(3))) + field(2, innerKey) + [3] + le(claimed) + [0] + data
        let head = try RawDeflater(capacity: 1 << 20), body = try RawDeflater(capacity: 1 << 20)
        try head.add(Array(inner.prefix(78)), flush: .full)
        try body.add(Array(inner.dropFirst(78)), flush: .finish)
        let (gzipHeader, gzipTrailer) = Deflate.gzipMember(head, body)
        var packed = gzipHeader + head.output.bytes + body.output.bytes + gzipTrailer.dropLast(4) + le(declared)
        // The key: SHA-256(SHA-256(password)) through AES-KDF, as KeePass composes a password alone.
        var transformed = KDBXCrypto.sha256([KDBXCrypto.sha256([password[...]])[...]])
        #expect(KDBXCrypto.aesKDF(seed: kdfSeed, key: &transformed, rounds: 100))
        transformed = KDBXCrypto.sha256([transformed[...]])
        #expect(KDBXCrypto.chacha20(&packed, key: KDBXCrypto.sha256([seed[...], transformed[...]]), nonce: iv))
        let base = KDBXCrypto.sha512([seed[...], transformed[...], [1]])
        func blockKey(_ index: UInt64) -> [UInt8] { KDBXCrypto.sha512([le(index)[...], base[...]]) }
        var file = header + KDBXCrypto.sha256([header[...]]) + KDBXCrypto.hmacSHA256(key: blockKey(.max), [header[...]])
        var index: UInt64 = 0
        for start in stride(from: 0, through: packed.count, by: 1 << 20) {
            let block = Array(packed[start..<min(packed.count, start + (1 << 20))])
            file += KDBXCrypto.hmacSHA256(key: blockKey(index), [le(index)[...], le(UInt32(block.count))[...], block[...]]) + le(UInt32(block.count)) + block
            index += 1
        }
        if packed.count % (1 << 20) != 0 {
            file += KDBXCrypto.hmacSHA256(key: blockKey(index), [le(index)[...], le(UInt32(0))[...]]) + le(UInt32(0))
        }
        return file
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"), "GNU time is absent: the memory of a lying KDBX is not measured"))
    func test_import_kdbxInnerFieldLyingAboutItsLengthIsRefusedWithinBoundedMemory() throws {
        let cli = try CLI.withEntriesSet([]); defer { cli.directory.remove() }
        try cli.write("fpw", Self.password)
        let file = try Self.lyingFile(data: randomBytes(count: 4 << 20), claimed: 900 << 20, declared: 950 << 20)
        try cli.write("lying.kdbx", file)
        let before = try cli.read("t.vault")
        // GNU time's %M: the peak resident size of vaultfile itself, in KiB, on the last line of stderr.
        let result = try cli.run(["-f", "peak %M", CLI.binary, "import", "--format", "kdbx", "--kdbx-password-file", cli.path("fpw"), cli.path("lying.kdbx")]
                                 + cli.unlock(), executable: "/usr/bin/time")
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("lying.kdbx is damaged"), "\(result.stderr)")
        let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) }
        let kib = try #require(peak, "no peak from /usr/bin/time: \(result.stderr)")
        #expect(kib < 150 << 10, "peak resident size \(kib) KiB for a 4 MiB file claiming 900 MiB")
        #expect(try cli.read("t.vault") == before, "nothing imported")
    }
}
