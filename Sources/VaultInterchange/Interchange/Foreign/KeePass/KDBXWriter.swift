import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Writing a KDBX 4 database

/// `export --format kdbx`: the vault's entries as a KDBX 4.0 database that KeePassXC, KeePass and
/// pykeepass open: Argon2id, ChaCha20 outer cipher, HMAC-SHA-256 blocks of 1 MiB, gzip, inner
/// ChaCha20 for protected values, attachments in the inner header (`KeePassXMLWriter` makes the XML).
///
/// 4.0 rather than 4.1: 4.1 adds only group tags and previous-parent fields that nothing here
/// writes, and older readers (KeePassXC before 2.7, pykeepass 4.0) open 4.0.
public enum KDBXWriter {
    /// What `write` made: the whole file in memory (tests, callers with no file; the CLI hands
    /// `Prepared`'s blocks to the file one at a time instead).
    public struct Written {
        /// The database's bytes (not secret: encrypted).
        public var bytes: [UInt8]
        /// Entries written (history versions not counted).
        public var entries: Int
        /// Values and fields written as attachments because they are not text.
        public var binaryAsAttachment: Int
        /// String keys and attachment names written as `NAME (2)`… because the entry had taken theirs.
        public var renamed: Int = 0
        /// Labels XML cannot hold, written under the field's own name.
        public var labelsReplaced: Int = 0
        /// Everything written otherwise than the vault holds it, or not at all, one warning each.
        public var losses: [ExportLoss] = []
    }

    /// The blocks' size: KeePass's and KeePassXC's own.
    static let blockSize = 1 << 20

    /// The entries of `vault` under `prefix` as a KDBX 4 database that `credentials` open, its key
    /// derived with Argon2id `parameters` (validated here): `prepare`, then its blocks gathered
    /// into one array (`Written.bytes`).
    public static func write(_ vault: Vault, prefix: String, credentials: KDBXCredentials, parameters: Argon2idParameters,
                             now: Int64 = currentTimeMilliseconds()) throws -> Written {
        let prepared = try prepare(vault, prefix: prefix, credentials: credentials, parameters: parameters, now: now)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(prepared.fileSize)
        try prepared.write { (piece) throws(VaultError) in bytes.append(contentsOf: piece) }
        return Written(bytes: bytes, entries: prepared.entries, binaryAsAttachment: prepared.binaryAsAttachment, renamed: prepared.renamed,
                       labelsReplaced: prepared.labelsReplaced, losses: prepared.losses)
    }

    /// The database of `vault`'s entries under `prefix`, made up to its blocks: the XML compressed
    /// as it is written (`RawDeflater`, 1 MiB at a time), the inner header after it, the two to be
    /// joined into one gzip member (`Deflate.gzipMember`), and the key derived with Argon2id
    /// `parameters` (validated here). `Prepared.write` then lays the member in the file's blocks,
    /// each encrypted in place (ChaCha20 from the block's counter), authenticated and handed to
    /// the output as it is made. What is held at once (issue 17's memory rule): the vault, the
    /// compressed XML and one block; never the XML whole, nor the file.
    public static func prepare(_ vault: Vault, prefix: String, credentials: KDBXCredentials, parameters: Argon2idParameters,
                               now: Int64 = currentTimeMilliseconds()) throws -> Prepared {
        try parameters.validate()
        var innerKey = randomBytes(count: 64)
        defer { wipe(&innerKey) }
        // Level 3: 40 % less of deflate's time than level 6 for 3 % more bytes (100,000 entries:
        // 6.29 MB against 6.13 MB); deflate was a quarter of the export.
        let body = try RawDeflater(level: 3, capacity: 1 << 20)
        var writer = KeePassXMLWriter(stream: KDBXInnerStream(kind: .chacha20, innerKey: innerKey))
        try writer.write(vault, prefix: prefix, now: now) { (xml: inout [UInt8], last: Bool) throws(VaultError) in
            try body.add(xml, flush: last ? .finish : .none)
        }
        var tally = KeePassXMLWriter.losses(of: writer, format: "KeePass")
        tally.addTrash(of: vault, prefix: prefix, format: "a KeePass database")
        // The inner header: the protected stream (ChaCha20) and its key, the attachments, the end.
        var inner: [UInt8] = []
        defer { wipe(&inner) }
        inner.reserveCapacity(writer.pool.reduce(0) { $0 + $1.count + 6 } + 96)
        func field(_ type: UInt8, _ parts: [UInt8]...) {
            inner.append(type)
            inner.append(contentsOf: KDBXBytes.le32(UInt32(parts.reduce(0) { $0 + $1.count })))
            for part in parts { inner.append(contentsOf: part) }
        }
        field(1, KDBXBytes.le32(KDBXInnerStream.Kind.chacha20.rawValue))
        field(2, innerKey)
        for binary in writer.pool { field(3, [0x00], binary) }
        field(0)
        writer.wipe()
        let head = try RawDeflater(capacity: inner.count / 2 + 4096)
        try head.add(inner, flush: .full)

        let seed = randomBytes(count: 32), iv = randomBytes(count: 12), salt = randomBytes(count: 32)
        let header = self.header(seed: seed, iv: iv, salt: salt, parameters: parameters)
        var composite = credentials.composite()
        defer { wipe(&composite) }
        var transformed = try composite.withUnsafeBytes { password in
            try Argon2id.deriveForeign(password: password, salt: salt, parameters: parameters, variant: .argon2id, version: 0x13)
        }.withUnsafeBytes { Array($0) }
        defer { wipe(&transformed) }
        return Prepared(header: header, iv: iv, head: head, body: body, cipherKey: KDBXCrypto.sha256([seed[...], transformed[...]]),
                        base: KDBXCrypto.sha512([seed[...], transformed[...], [0x01]]), entries: writer.entries,
                        binaryAsAttachment: writer.binaryAsAttachment, renamed: writer.renamed, labelsReplaced: writer.labelsReplaced,
                        losses: tally.losses)
    }

    /// A database made up to its blocks (`prepare`): its header, keys and compressed payload, and
    /// what was written otherwise than the vault holds it. Its keys are wiped when it goes.
    public final class Prepared {
        /// Entries written (history versions not counted).
        public let entries: Int
        /// Values and fields written as attachments because they are not text.
        public let binaryAsAttachment: Int
        /// String keys and attachment names written as `NAME (2)`… because the entry had taken theirs.
        public let renamed: Int
        /// Labels XML cannot hold, written under the field's own name.
        public let labelsReplaced: Int
        /// Everything written otherwise than the vault holds it, or not at all, one warning each.
        public let losses: [ExportLoss]
        private let header: [UInt8], iv: [UInt8]
        private let head: RawDeflater, body: RawDeflater
        private var cipherKey: [UInt8], base: [UInt8]

        init(header: [UInt8], iv: [UInt8], head: RawDeflater, body: RawDeflater, cipherKey: [UInt8], base: [UInt8], entries: Int,
             binaryAsAttachment: Int, renamed: Int, labelsReplaced: Int, losses: [ExportLoss]) {
            (self.header, self.iv, self.head, self.body, self.cipherKey, self.base) = (header, iv, head, body, cipherKey, base)
            (self.entries, self.binaryAsAttachment, self.renamed, self.labelsReplaced, self.losses) = (entries, binaryAsAttachment, renamed, labelsReplaced, losses)
        }

        deinit {
            wipe(&cipherKey)
            wipe(&base)
        }

        /// The gzip member's size: its header (10), the two raw streams, its trailer (8).
        private var packedCount: Int { 18 + head.output.count + body.output.count }

        /// The file's size in bytes.
        public var fileSize: Int { header.count + 64 + packedCount + (packedCount / blockSize + 2) * 36 }

        /// Hands the file to `output` in order, a piece at a time: the header with its SHA-256 and
        /// HMAC, then each block (HMAC, length, data) as soon as it is encrypted; at most one
        /// block is held.
        public func write(_ output: (UnsafeRawBufferPointer) throws(VaultError) -> Void) throws(VaultError) {
            func blockKey(_ index: UInt64) -> [UInt8] { KDBXCrypto.sha512([KDBXBytes.le64(index)[...], base[...]]) }
            var start = header
            start.append(contentsOf: KDBXCrypto.sha256([header[...]]))
            var headerKey = blockKey(UInt64.max)
            start.append(contentsOf: KDBXCrypto.hmacSHA256(key: headerKey, [header[...]]))
            wipe(&headerKey)
            try Self.hand(start, to: output)
            let (gzipHeader, gzipTrailer) = Deflate.gzipMember(head, body)
            let total = packedCount
            var block: [UInt8] = []
            block.reserveCapacity(36 + min(blockSize, total))
            defer { wipe(&block) }
            // Each block's data is the member's next bytes, laid in place, then encrypted there (its
            // ChaCha20 counter: its offset ÷ 64) and authenticated; the empty block ends the stream.
            var member = PieceReader(pieces: [.owned(gzipHeader), .chunks(head.output), .chunks(body.output), .owned(gzipTrailer)])
            var index: UInt64 = 0, offset = 0
            while true {
                let count = min(blockSize, total - offset)
                let length = KDBXBytes.le32(UInt32(count))
                block.removeAll(keepingCapacity: true)
                block.append(contentsOf: repeatElement(0, count: 32))
                block.append(contentsOf: length)
                member.append(count, to: &block)
                guard KDBXCrypto.chacha20(&block, range: 36..<block.count, key: cipherKey, nonce: iv, counter: UInt32(offset / 64)) else {
                    throw .unsupportedFeature("ChaCha20 refused its key")
                }
                var key = blockKey(index)
                let tag = KDBXCrypto.hmacSHA256(key: key, [KDBXBytes.le64(index)[...], length[...], block[36...]])
                wipe(&key)
                block.replaceSubrange(0..<32, with: tag)
                try Self.hand(block, to: output)
                if count == 0 { break }
                (offset, index) = (offset + count, index + 1)
            }
        }

        private static func hand(_ bytes: [UInt8], to output: (UnsafeRawBufferPointer) throws(VaultError) -> Void) throws(VaultError) {
            var failure: VaultError?
            bytes.withUnsafeBytes { raw in
                do throws(VaultError) { try output(raw) } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }

    /// The gzip member's bytes in order (its header, the two raw streams, its trailer), appended
    /// to the file a block's worth at a time.
    private struct PieceReader {
        enum Piece {
            case owned([UInt8])
            case chunks(ChunkedBytes)

            var count: Int {
                switch self {
                case .owned(let bytes): bytes.count
                case .chunks(let bytes): bytes.count
                }
            }

            func append(_ range: Range<Int>, to out: inout [UInt8]) {
                switch self {
                case .owned(let bytes): out.append(contentsOf: bytes[range])
                case .chunks(let bytes): bytes.copy(range, to: &out)
                }
            }
        }

        let pieces: [Piece]
        private var piece = 0, position = 0

        init(pieces: [Piece]) { self.pieces = pieces }

        /// Appends the next `count` bytes (fewer at the end) to `out`.
        mutating func append(_ count: Int, to out: inout [UInt8]) {
            var wanted = count
            while wanted > 0, piece < pieces.count {
                let taken = min(wanted, pieces[piece].count - position)
                pieces[piece].append(position..<(position + taken), to: &out)
                (wanted, position) = (wanted - taken, position + taken)
                if position == pieces[piece].count { (piece, position) = (piece + 1, 0) }
            }
        }
    }

    /// The outer header: signatures, version 4.0, cipher, compression, seed, IV, KDF parameters, end.
    private static func header(seed: [UInt8], iv: [UInt8], salt: [UInt8], parameters: Argon2idParameters) -> [UInt8] {
        var out = KDBXHeader.signature + KDBXBytes.le32(0x0004_0000)  // minor 0, major 4
        func field(_ id: UInt8, _ data: [UInt8]) {
            out.append(id)
            out.append(contentsOf: KDBXBytes.le32(UInt32(data.count)))
            out.append(contentsOf: data)
        }
        var dictionary: [UInt8] = [0x00, 0x01]
        func item(_ type: UInt8, _ key: String, _ value: [UInt8]) {
            dictionary.append(type)
            dictionary.append(contentsOf: KDBXBytes.le32(UInt32(key.utf8.count)))
            dictionary.append(contentsOf: key.utf8)
            dictionary.append(contentsOf: KDBXBytes.le32(UInt32(value.count)))
            dictionary.append(contentsOf: value)
        }
        item(0x42, "$UUID", KDBXHeader.argon2id)
        item(0x05, "M", KDBXBytes.le64(UInt64(parameters.memoryKiB) * 1024))
        item(0x05, "I", KDBXBytes.le64(UInt64(parameters.iterations)))
        item(0x04, "P", KDBXBytes.le32(parameters.parallelism))
        item(0x04, "V", KDBXBytes.le32(0x13))
        item(0x42, "S", salt)
        dictionary.append(0)
        field(2, KDBXHeader.chacha20)
        field(3, KDBXBytes.le32(1))
        field(4, seed)
        field(7, iv)
        field(11, dictionary)
        field(0, [0x0D, 0x0A, 0x0D, 0x0A])
        return out
    }
}
