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
    /// What was written.
    public struct Written {
        /// The database's bytes (not secret: encrypted; the caller writes them to the file).
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
    /// derived with Argon2id `parameters` (validated here).
    public static func write(_ vault: Vault, prefix: String, credentials: KDBXCredentials, parameters: Argon2idParameters,
                             now: Int64 = currentTimeMilliseconds()) throws -> Written {
        try parameters.validate()
        var innerKey = randomBytes(count: 64)
        defer { wipe(&innerKey) }
        var writer = KeePassXMLWriter(stream: KDBXInnerStream(kind: .chacha20, innerKey: innerKey))
        try writer.write(vault, prefix: prefix, now: now)
        var tally = KeePassXMLWriter.losses(of: writer, format: "KeePass")
        tally.addTrash(of: vault, prefix: prefix, format: "a KeePass database")
        // The inner header: the protected stream (ChaCha20) and its key, the attachments, the end.
        var payload: [UInt8] = []
        defer { wipe(&payload) }
        payload.reserveCapacity(writer.xml.count + writer.pool.reduce(0) { $0 + $1.count + 6 } + 96)
        func inner(_ type: UInt8, _ parts: [UInt8]...) {
            payload.append(type)
            payload.append(contentsOf: KDBXBytes.le32(UInt32(parts.reduce(0) { $0 + $1.count })))
            for part in parts { payload.append(contentsOf: part) }
        }
        inner(1, KDBXBytes.le32(KDBXInnerStream.Kind.chacha20.rawValue))
        inner(2, innerKey)
        for binary in writer.pool { inner(3, [0x00], binary) }
        inner(0)
        payload.append(contentsOf: writer.xml)
        writer.wipe()
        var packed = try Deflate.gzip(payload)
        defer { wipe(&packed) }

        let seed = randomBytes(count: 32), iv = randomBytes(count: 12), salt = randomBytes(count: 32)
        let header = self.header(seed: seed, iv: iv, salt: salt, parameters: parameters)
        var composite = credentials.composite()
        defer { wipe(&composite) }
        var transformed = try composite.withUnsafeBytes { password in
            try Argon2id.deriveForeign(password: password, salt: salt, parameters: parameters, variant: .argon2id, version: 0x13)
        }.withUnsafeBytes { Array($0) }
        defer { wipe(&transformed) }
        var cipherKey = KDBXCrypto.sha256([seed[...], transformed[...]])
        defer { wipe(&cipherKey) }
        guard KDBXCrypto.chacha20(&packed, key: cipherKey, nonce: iv) else { throw VaultError.unsupportedFeature("ChaCha20 refused its key") }
        var base = KDBXCrypto.sha512([seed[...], transformed[...], [0x01]])
        defer { wipe(&base) }
        func blockKey(_ index: UInt64) -> [UInt8] { KDBXCrypto.sha512([KDBXBytes.le64(index)[...], base[...]]) }

        var out = header
        out.reserveCapacity(header.count + 64 + packed.count + (packed.count / blockSize + 2) * 36)
        out.append(contentsOf: KDBXCrypto.sha256([header[...]]))
        var headerKey = blockKey(UInt64.max)
        out.append(contentsOf: KDBXCrypto.hmacSHA256(key: headerKey, [header[...]]))
        wipe(&headerKey)
        var index: UInt64 = 0, start = 0
        while true {
            let end = min(start + blockSize, packed.count)
            let data = packed[start..<end]
            let length = KDBXBytes.le32(UInt32(data.count))
            var key = blockKey(index)
            out.append(contentsOf: KDBXCrypto.hmacSHA256(key: key, [KDBXBytes.le64(index)[...], length[...], data]))
            wipe(&key)
            out.append(contentsOf: length)
            out.append(contentsOf: data)
            if data.isEmpty { break }
            (start, index) = (end, index + 1)
        }
        return Written(bytes: out, entries: writer.entries, binaryAsAttachment: writer.binaryAsAttachment, renamed: writer.renamed,
                       labelsReplaced: writer.labelsReplaced, losses: tally.losses)
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
