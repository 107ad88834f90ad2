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
        return header + head.output.withBytes { Array($0) } + body.output.withBytes { Array($0) } + trailer
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
