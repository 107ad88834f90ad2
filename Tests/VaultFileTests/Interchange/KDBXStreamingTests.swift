import Foundation
import KDF
import SecureMemory
import TestSupport
import Testing
import VaultFormat
@testable import VaultInterchange
@testable import VaultModel

/// The KDBX export within issue 17's memory rule (issue 45): the XML compressed as it is written
/// (`RawDeflater`), the inner header after it, both joined into one gzip member that zlib's own
/// gzip reader inflates whole, and the file encrypted block by block (ChaCha20 from each block's
/// counter) — read back by KDBXReader when the payload spans many blocks and many spills.
@Suite struct KDBXStreamingTests {
    static func random(_ count: Int) -> [UInt8] { randomBytes(count: count) }

    /// `first` (ended by a full flush) and `second` (fed in `pieces`, then finished) as one gzip member.
    static func joined(_ first: [UInt8], _ second: [UInt8], pieces: Int) throws -> [UInt8] {
        let head = try RawDeflater(capacity: 16), body = try RawDeflater(capacity: 16)
        let size = max(1, second.count / pieces)
        var start = 0
        repeat {
            let end = min(second.count, start + size)
            try body.add(Array(second[start..<end]), flush: end == second.count ? .finish : .none)
            start = end
        } while start < second.count
        try head.add(first, flush: .full)
        let (header, trailer) = Deflate.gzipMember(head, body)
        return header + head.output.bytes + body.output.bytes + trailer
    }

    // MARK: - Success

    @Test func test_gzipMember_inflatesToBothInputsInOrder() throws {
        let first = Self.random(70_000) + Array(repeating: 0x41, count: 5_000)
        let second = Array(String(repeating: "<Entry><String>repeated</String></Entry>", count: 40_000).utf8) + Self.random(3_000)
        let member = try Self.joined(first, second, pieces: 7)
        #expect(member.count < second.count / 4, "compressed: \(member.count)")
        #expect(try Gzip.decompress(member, limit: 1 << 26, what: "t") == first + second, "zlib checks the CRC-32 and the length too")
    }

    @Test func test_write_aPayloadOfManyBlocksAndSpillsIsReadBack() throws {
        // Random values (protected, so XORed: incompressible) make a payload of more than one 1 MiB
        // blocks, each encrypted from its own ChaCha20 counter, and an XML of several spills.
        var vault = Vault()
        var values: [String: [UInt8]] = [:]
        for index in 0..<1_000 {
            let value = Array(Self.random(1_600).map { UInt8(ascii: "a") + $0 % 26 })
            values["e\(index)"] = value
            try vault.put(Entry(value: value, fields: ["username": Array("user\(index)".utf8)], created: 0, modified: 0), as: "g\(index % 7)/e\(index)", now: 0)
        }
        let written = try KDBXWriter.write(vault, prefix: "", credentials: KDBXTests.password, parameters: KDBXTests.tiny, now: 0)
        #expect(written.bytes.count > (1 << 20) + (1 << 18) && written.entries == 1_000, "at least two blocks: \(written.bytes.count) bytes")
        let read = try KDBXReader.read(written.bytes, file: "x", credentials: KDBXTests.password, limits: KDBXTests.limits, now: 0)
        #expect(read.items.count == 1_000)
        #expect(read.items.allSatisfy { values[$0.title] == $0.value && $0.username == "user\($0.title.dropFirst())" })
    }

    /// What `stream` inflates, asked `window` bytes at a time.
    static func inflated(_ member: [UInt8], size: Int, window: Int) throws(VaultError) -> [UInt8] {
        var out: [UInt8] = []
        var failure: VaultError?
        member.withUnsafeBufferPointer { input in
            do throws(VaultError) {
                let stream = try InflateStream(input, size: size, wrapper: .gzip, what: "t")
                var buffer = [UInt8](repeating: 0, count: window)
                while true {
                    let count = try buffer.withUnsafeMutableBufferPointer { (target) throws(VaultError) in try stream.read(into: target) }
                    if count == 0 { break }
                    out += buffer[..<count]
                }
            } catch { failure = error }
        }
        if let failure { throw failure }
        return out
    }

    @Test func test_inflateStream_everyWindowGivesWhatTheWholeInflateGives() throws {
        let plain = Self.random(40_000) + Array(String(repeating: "<Entry>same</Entry>", count: 5_000).utf8)
        let member = try Self.joined(Self.random(3), plain, pieces: 3)
        let whole = try Gzip.decompress(member, limit: 1 << 26, what: "t")
        for window in [1, 2, 3, 7, 64, 4_096, 65_536, whole.count, whole.count + 1] {
            #expect(try Self.inflated(member, size: whole.count, window: window) == whole, "window \(window)")
        }
    }

    @Test func test_readTaking_emptiesTheFileAndReadsAsACopyDoes() throws {
        for name in ["kdbx4-argon2id-chacha20.kdbx", "kdbx4-argon2d-aes.kdbx", "kdbx31-aeskdf-salsa20.kdbx", "kdbx31-header-hash.kdbx"] {
            let file = try KDBXTests.fixture(name)
            var taken = file
            let read = try KDBXReader.read(taking: &taken, file: name, credentials: KDBXTests.password, limits: KDBXTests.limits, now: 0)
            let copied = try KDBXReader.read(file, file: name, credentials: KDBXTests.password, limits: KDBXTests.limits, now: 0)
            #expect(taken.isEmpty, "\(name): the file's bytes are let go once the payload is out")
            #expect(XMLReaderStreamingTests.summary(read) == XMLReaderStreamingTests.summary(copied) && !read.items.isEmpty, "\(name)")
        }
    }

    // MARK: - Failure

    @Test func test_inflateStream_refusesATruncatedStreamAWrongSizeAndBytesAfter() throws {
        let plain = Array(String(repeating: "abc", count: 30_000).utf8) + Self.random(5_000)
        let member = try Self.joined([1], plain, pieces: 2)
        let size = plain.count + 1
        func failure(_ bytes: [UInt8], size: Int) -> String {
            do { _ = try Self.inflated(bytes, size: size, window: 4_096); return "no error" } catch { return error.description }
        }
        #expect(failure(Array(member.dropLast(12)), size: size).contains("ends early"))
        #expect(failure(member, size: size - 1).contains("more than \(size - 1) bytes"))
        #expect(failure(member, size: size + 1).contains("inflates to \(size) bytes, not the \(size + 1) declared"))
        #expect(failure(member + [0], size: size).contains("1 bytes after its end"))
        var flipped = member
        flipped[member.count / 2] ^= 0xFF
        #expect(failure(flipped, size: size).contains("damaged"))
    }

    // MARK: - Edge cases

    @Test func test_gzipMember_ofAnEmptySecondStreamAndOneByteFirst() throws {
        #expect(try Gzip.decompress(try Self.joined([7], [], pieces: 1), limit: 1 << 20, what: "t") == [7])
    }

    @Test func test_write_anEmptyVaultIsOneShortBlockThenTheEnd() throws {
        let written = try KDBXWriter.write(Vault(), prefix: "", credentials: KDBXTests.password, parameters: KDBXTests.tiny, now: 0)
        let read = try KDBXReader.read(written.bytes, file: "x", credentials: KDBXTests.password, limits: KDBXTests.limits, now: 0)
        #expect(read.items.isEmpty && written.entries == 0)
    }
}
