#if canImport(Glibc)
import Glibc
#endif
import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - kdbx: KeePass databases, KDBX 3.1 and 4.x

/// `--format kdbx`: a KeePass database opened with its password and/or key file, decrypted in
/// memory, its XML read by the keepass-xml reader (`KeePassXMLReader`), so that everything an
/// XML import keeps, a KDBX import keeps — and attachments too, which KeePassXC's XML export
/// leaves out.
///
/// KDBX 4 (KeePass 2.35+, KeePassXC 2.3+): header, its SHA-256 and its HMAC; the payload in
/// HMAC-SHA-256 blocks, then AES-256-CBC or ChaCha20, then gzip; an inner header (the protected
/// stream's key, the attachments) before the XML. KDBX 3.1: header, then AES-256-CBC (or ChaCha20)
/// over the stream start bytes and SHA-256-hashed blocks, then gzip; attachments in Meta/Binaries.
///
/// Every check comes before the work it guards: the KDF's parameters against the caps before the
/// KDF runs, each block's length against what remains and its HMAC before it is kept, the inflated
/// size against the import's growth limit before anything is inflated.
public enum KDBXReader {
    /// Everything the database `bytes` holds, as items; `file` names it in messages.
    /// Throws `KDFError` when its KDF asks for more than `limits` allow, `VaultError` otherwise.
    public static func read(_ bytes: [UInt8], file: String, credentials: KDBXCredentials, limits: KDFLimits,
                            now: Int64 = currentTimeMilliseconds()) throws -> ForeignImport {
        var taken = bytes
        return try read(taking: &taken, file: file, credentials: credentials, limits: limits, now: now)
    }

    /// `read(_:file:credentials:limits:now:)` that takes the file's bytes: a KDBX 4 payload is
    /// gathered and decrypted where it lies in them, a KDBX 3.1 one's blocks where they were
    /// decrypted, and `bytes` is emptied once the payload is out (issue 17's memory rule: the file
    /// and its payload are not held twice).
    public static func read(taking bytes: inout [UInt8], file: String, credentials: KDBXCredentials, limits: KDFLimits,
                            now: Int64 = currentTimeMilliseconds()) throws -> ForeignImport {
        try open(taking: &bytes, file: file, credentials: credentials, limits: limits) { xml, _ throws(VaultError) in try xml(nil) }
    }

    /// The entries of the database `bytes` (taken as `read(taking:file:credentials:limits:now:)`
    /// takes them), built as its XML is read (`ForeignBuilder.build(streaming:)`): no entry's item
    /// is held beside the others (issue 45: within issue 17's memory rule). Where the stream gives
    /// nothing (a record the writer refuses, an attachment referencing a pool not read yet; a title
    /// that repeats has the payload read once more first, for a plan of its numbers), the
    /// decrypted payload is read again into items and built from them
    /// (`ForeignImport.entries`), which gives what the stream gives wherever both give anything.
    public static func entries(taking bytes: inout [UInt8], file: String, credentials: KDBXCredentials, limits: KDFLimits,
                               now: Int64 = currentTimeMilliseconds(), options: ForeignBuildOptions) throws -> ImportedEntries {
        try open(taking: &bytes, file: file, credentials: credentials, limits: limits) { xml, documentBytes throws(VaultError) in
            // Room for records as large as the XML (a record is far smaller than its entry's
            // XML): mapped as written, so room never written costs no memory.
            if let built = try ForeignBuilder.build(streaming: { sink throws(VaultError) in try xml(sink) }, capacity: documentBytes,
                                                     now: now, options: options) {
                return built
            }
            var foreign = try xml(nil)
            defer { foreign.wipe() }
            return try foreign.entries(now: now, options: options)
        }
    }

    /// Decrypts the database `bytes` (taken: emptied once the payload is out) and hands `body` a
    /// reader of its XML (each call reads the payload from its start again, handing items to the
    /// sink given, if any) and the XML's size.
    private static func open<T>(taking bytes: inout [UInt8], file: String, credentials: KDBXCredentials, limits: KDFLimits,
                                _ body: ((ForeignItemSink?) throws(VaultError) -> ForeignImport, Int) throws(VaultError) -> T) throws -> T {
        let header = try KDBXHeader.parse(bytes, file: file)
        // The growth limit follows the file as read; KDBX 3.1 authenticates its header by
        // Meta/HeaderHash, the SHA-256 of the header's bytes.
        var budget = ExpansionBudget(inputBytes: bytes.count, what: file)
        let headerHash = header.major == 3 ? KDBXCrypto.sha256([bytes[..<header.end]]) : nil
        var transformed = try transformedKey(header, credentials: credentials, limits: limits, file: file)
        defer { wipe(&transformed) }
        var plain = header.major == 4
            ? try payload4(&bytes, header: header, transformed: transformed, file: file, credentials: credentials)
            : try payload3(bytes, header: header, transformed: transformed, file: file, credentials: credentials)
        defer { wipe(&plain) }
        bytes = []  // ciphertext, not secret: freed
        var inflatedSize: Int?
        if header.compressed {
            // The declared size and ratio checked, and counted, before anything is inflated.
            inflatedSize = try Gzip.declaredSize(plain, limit: budget.limit, what: "\(file): the payload")
            try budget.spend(inflatedSize!, on: "the payload")
        }
        let spent = budget
        return try plain.withUnsafeBufferPointer { (payload) throws(VaultError) -> T in
            // The payload read in order, inflated a window at a time: the inner header, then the
            // XML, which the XML reader takes as it comes (never whole in memory).
            let documentBytes = inflatedSize ?? payload.count
            return try body({ (sink) throws(VaultError) -> ForeignImport in
                let stream = try KDBXPayloadStream(payload, inflatedSize: inflatedSize, file: file)
                do throws(VaultError) {
                    return try readXML(stream, major: header.major, headerStream: (header.innerStream, header.protectedStreamKey),
                                       budget: spent, headerHash: headerHash, documentBytes: documentBytes, each: sink)
                } catch {
                    // Damage of the compressed stream further on is the cause of what the reader found.
                    if let damage = stream.damageAhead() { throw damage }
                    throw error
                }
            }, documentBytes)
        }
    }

    /// The inner header (KDBX 4) and the XML of the payload `stream`, as items (or handed to
    /// `sink`); the budget carries what inflating the payload spent, and every Ref copy into an
    /// entry is counted against it.
    private static func readXML(_ stream: KDBXPayloadStream, major: UInt16, headerStream: (id: UInt32, key: [UInt8]), budget: ExpansionBudget,
                                headerHash: [UInt8]?, documentBytes: Int, each sink: ForeignItemSink?) throws(VaultError) -> ForeignImport {
        var inner: KDBXInnerStream?
        var pool: [[UInt8]]?
        if major == 4 {
            var fields = try innerHeader(stream)
            pool = fields.binaries
            inner = try innerStream(id: fields.streamID, key: fields.streamKey, file: stream.file)
            wipe(&fields.streamKey)
        } else {
            inner = try innerStream(id: headerStream.id, key: headerStream.key, file: stream.file)
        }
        defer { if var binaries = pool { for index in binaries.indices { wipe(&binaries[index]) } } }
        var unprotect: ((inout [UInt8]) throws(VaultError) -> Void)?
        if let inner { unprotect = { (bytes: inout [UInt8]) in inner.apply(&bytes) } }
        do throws(VaultError) {
            var parser = try KeePassXMLParser(source: { (window) throws(VaultError) in try stream.read(into: window) }, unprotect: unprotect, budget: budget)
            return try KeePassXMLReader.read(&parser, format: "kdbx", pool: pool, headerHash: headerHash, documentBytes: documentBytes, each: sink)
        } catch {
            // The XML was authenticated with the key (HMAC blocks, or 3.1's hashes under the
            // cipher): what is wrong in it is damage of this file, named, not a malformed export.
            if case .malformedInput(let why) = error { throw VaultError.sourceDamaged(file: stream.file, why: "its XML: \(why)") }
            throw error
        }
    }

    // MARK: The key

    /// The composite key through the file's KDF, once its parameters are within `limits`.
    static func transformedKey(_ header: KDBXHeader, credentials: KDBXCredentials, limits: KDFLimits, file: String) throws -> [UInt8] {
        var composite = credentials.composite()
        defer { wipe(&composite) }
        switch header.kdf {
        case .aes(let seed, let rounds):
            // AES-KDF rounds count against the iterations cap (one round costs far less than one
            // PBKDF2 iteration: two AES blocks against two SHA-256 compressions).
            let cap = limits.maxPBKDF2Iterations.multipliedReportingOverflow(by: 4)
            let most = cap.overflow ? UInt64.max : cap.partialValue
            guard rounds <= most else { throw KDFError.aesKDFRoundsOverCap(source: file, rounds: rounds, cap: most) }
            var key = composite
            guard KDBXCrypto.aesKDF(seed: seed, key: &key, rounds: rounds) else { throw VaultError.unsupportedFeature("OpenSSL refused AES-KDF") }
            defer { wipe(&key) }
            return KDBXCrypto.sha256([key[...]])
        case .argon2(let variant, let salt, let memoryBytes, let iterations, let parallelism, let version, let secret, let associatedData):
            // The caps before anything else: a header asking for 4 TiB is refused, never allocated.
            guard memoryBytes <= limits.maxMemoryBytes else { throw KDFError.memoryOverCap(asked: memoryBytes, cap: limits.maxMemoryBytes) }
            let (work, overflow) = (memoryBytes / 1024).multipliedReportingOverflow(by: iterations)
            guard !overflow, work <= limits.maxArgon2WorkKiB else { throw KDFError.workOverCap(asked: overflow ? UInt64.max : work, cap: limits.maxArgon2WorkKiB) }
            guard memoryBytes % 1024 == 0, iterations <= UInt64(UInt32.max) else {
                throw VaultError.sourceDamaged(file: file, why: "Argon2's memory is not whole KiB or its iterations are out of range")
            }
            let parameters = Argon2idParameters(memoryKiB: UInt32(memoryBytes / 1024), iterations: UInt32(iterations), parallelism: parallelism)
            let derived = try composite.withUnsafeBytes { password in
                try Argon2id.deriveForeign(password: password, salt: salt, parameters: parameters, variant: variant, version: version,
                                           secret: secret, associatedData: associatedData)
            }
            return derived.withUnsafeBytes { Array($0) }
        }
    }

    // MARK: KDBX 4

    /// The decrypted (still compressed) payload of a KDBX 4 file, once the header's hash and HMAC
    /// and every block's HMAC verify: the blocks' data moved together where they lie in `bytes`,
    /// which become the payload (ChaCha20 decrypts in place; AES-CBC into a new array), `bytes` left empty.
    private static func payload4(_ bytes: inout [UInt8], header: KDBXHeader, transformed: [UInt8], file: String,
                                 credentials: KDBXCredentials) throws(VaultError) -> [UInt8] {
        var base = KDBXCrypto.sha512([header.masterSeed[...], transformed[...], [0x01]])
        defer { wipe(&base) }
        let blocks = try blocks4(bytes, header: header, base: base, file: file, credentials: credentials)
        var cipherKey = KDBXCrypto.sha256([header.masterSeed[...], transformed[...]])
        defer { wipe(&cipherKey) }
        var total = 0
        bytes.withUnsafeMutableBytes { raw in
            for block in blocks {
                memmove(raw.baseAddress! + total, raw.baseAddress! + block.lowerBound, block.count)
                total += block.count
            }
        }
        bytes.removeLast(bytes.count - total)
        var ciphertext: [UInt8] = []
        swap(&ciphertext, &bytes)
        // ChaCha20 in place: the ciphertext becomes the payload, never copied.
        guard header.cipher == .chacha20 else { return try decrypt(ciphertext[...], header: header, key: cipherKey, file: file, credentials: credentials) }
        guard KDBXCrypto.chacha20(&ciphertext, range: 0..<ciphertext.count, key: cipherKey, nonce: header.encryptionIV, counter: 0) else {
            throw .sourceDamaged(file: file, why: "the ChaCha20 IV")
        }
        return ciphertext
    }

    /// Where each block's data lies in `bytes`, once the header's SHA-256 and HMAC (the key's
    /// check) and every block's HMAC verify.
    private static func blocks4(_ bytes: [UInt8], header: KDBXHeader, base: [UInt8], file: String,
                                credentials: KDBXCredentials) throws(VaultError) -> [Range<Int>] {
        var reader = KDBXBytes(bytes, file: file, what: "the header's check")
        reader.offset = header.end
        let hash = try reader.take(32, "the header's SHA-256")
        let mac = try reader.take(32, "the header's HMAC")
        guard KDBXCrypto.equal(KDBXCrypto.sha256([bytes[..<header.end]]), hash) else {
            throw reader.damaged("the header's SHA-256 does not match (the header was damaged or changed)")
        }
        func blockKey(_ index: UInt64) -> [UInt8] { KDBXCrypto.sha512([KDBXBytes.le64(index)[...], base[...]]) }
        var headerKey = blockKey(UInt64.max)
        defer { wipe(&headerKey) }
        guard KDBXCrypto.equal(KDBXCrypto.hmacSHA256(key: headerKey, [bytes[..<header.end]]), mac) else {
            throw .sourceSecretRejected(file: file, what: credentials.described)
        }
        // The blocks: HMAC, length (i32), data; an empty block ends the stream.
        reader = KDBXBytes(bytes, file: file, what: "the payload")
        reader.offset = header.end + 64
        var blocks: [Range<Int>] = []
        var index: UInt64 = 0
        while true {
            let tag = try reader.take(32, "block \(index)'s HMAC")
            let length = KDBXBytes.u32(try reader.take(4, "block \(index)'s length"))
            guard length <= Int32.max else { throw reader.damaged("block \(index) has a negative length") }
            let data = try reader.take(Int(length), "block \(index)")
            var key = blockKey(index)
            let expected = KDBXCrypto.hmacSHA256(key: key, [KDBXBytes.le64(index)[...], KDBXBytes.le32(length)[...], data])
            wipe(&key)
            guard KDBXCrypto.equal(expected, tag) else {
                throw reader.damaged("block \(index)'s HMAC does not verify (the file was damaged or changed after it was written)")
            }
            if length == 0 { break }
            blocks.append(data.startIndex..<data.endIndex)
            index += 1
        }
        guard reader.remaining == 0 else { throw reader.damaged("\(reader.remaining) bytes follow the last block") }
        return blocks
    }

    /// The inner header at the start of a decrypted KDBX 4 payload: the protected stream and the
    /// attachments, each field's length checked against what remains before it is read.
    private static func innerHeader(_ stream: KDBXPayloadStream) throws(VaultError) -> (streamID: UInt32, streamKey: [UInt8], binaries: [[UInt8]]) {
        let what = "the inner header"
        var streamID: UInt32?, streamKey: [UInt8]?, binaries: [[UInt8]] = []
        func damaged(_ why: String) -> VaultError { .sourceDamaged(file: stream.file, why: "\(what): \(why)") }
        while true {
            let type = try stream.take(1, "a field", what: what)[0]
            let length = KDBXBytes.u32(try stream.take(4, "a field", what: what)[...])
            var data = try stream.take(Int(length), "inner header field \(type)", what: what)
            switch type {
            case 0:
                guard let streamID, let streamKey else { throw damaged("the protected stream's ID or key is missing") }
                return (streamID, streamKey, binaries)
            case 1:
                guard data.count == 4 else { throw damaged("the protected stream's ID is \(data.count) bytes") }
                streamID = KDBXBytes.u32(data[...])
            case 2:
                if var previous = streamKey { wipe(&previous) }
                streamKey = data
            case 3:
                guard !data.isEmpty else { throw damaged("an attachment without its flags byte") }
                data.removeFirst()
                binaries.append(data)
            default:
                wipe(&data)
            }
        }
    }

    // MARK: KDBX 3.1

    /// The decrypted payload of a KDBX 3.1 file: its stream start bytes checked (the password's
    /// test), then each block's SHA-256.
    private static func payload3(_ bytes: [UInt8], header: KDBXHeader, transformed: [UInt8], file: String,
                                 credentials: KDBXCredentials) throws(VaultError) -> [UInt8] {
        var cipherKey = KDBXCrypto.sha256([header.masterSeed[...], transformed[...]])
        defer { wipe(&cipherKey) }
        let keyChecked = try checkKey3(bytes[header.end...], header: header, key: cipherKey, file: file, credentials: credentials)
        var plain = try decrypt(bytes[header.end...], header: header, key: cipherKey, file: file, credentials: credentials, keyChecked: keyChecked)
        guard plain.count >= 32, KDBXCrypto.equal(header.streamStartBytes, plain[0..<32]) else {
            wipe(&plain)
            throw .sourceSecretRejected(file: file, what: credentials.described)
        }
        let blocks: [Range<Int>]
        do { blocks = try blocks3(plain, file: file) } catch {
            wipe(&plain)
            throw error
        }
        // The blocks' data moved together where it was decrypted (no second copy of the payload),
        // what it leaves behind zeroed.
        var total = 0
        plain.withUnsafeMutableBytes { raw in
            for block in blocks {
                memmove(raw.baseAddress! + total, raw.baseAddress! + block.lowerBound, block.count)
                total += block.count
            }
            wipe(UnsafeMutableRawBufferPointer(rebasing: raw[total...]))
        }
        plain.removeLast(plain.count - total)
        return plain
    }

    /// Where each block's data lies in a decrypted KDBX 3.1 payload, once every block's index and
    /// SHA-256 check.
    private static func blocks3(_ plain: [UInt8], file: String) throws(VaultError) -> [Range<Int>] {
        var reader = KDBXBytes(plain, file: file, what: "the payload")
        reader.offset = 32
        var blocks: [Range<Int>] = []
        var index: UInt32 = 0
        while true {
            guard KDBXBytes.u32(try reader.take(4, "block \(index)'s index")) == index else { throw reader.damaged("block \(index) is out of order") }
            let hash = try reader.take(32, "block \(index)'s hash")
            let length = KDBXBytes.u32(try reader.take(4, "block \(index)'s length"))
            let data = try reader.take(Int(length), "block \(index)")
            if length == 0 {
                guard hash.allSatisfy({ $0 == 0 }) else { throw reader.damaged("the last block's hash is not zero") }
                return blocks
            }
            guard KDBXCrypto.equal(KDBXCrypto.sha256([data]), hash) else { throw reader.damaged("block \(index)'s SHA-256 does not match") }
            blocks.append(data.startIndex..<data.endIndex)
            index += 1
        }
    }

    /// KDBX 3.1 with AES-256-CBC: the key checked on the first two blocks alone (they decrypt to
    /// the stream start bytes), before the whole payload and its padding, so that a file cut short
    /// with the right password is damage (exit 4), not a wrong password (exit 3). The two blocks
    /// are decrypted with a third made for them under the key (PKCS#7's full padding block after
    /// the second). Returns whether the key was checked so; a wrong key throws.
    private static func checkKey3(_ ciphertext: ArraySlice<UInt8>, header: KDBXHeader, key: [UInt8], file: String,
                                  credentials: KDBXCredentials) throws(VaultError) -> Bool {
        guard header.cipher == .aes256CBC, ciphertext.count >= 32, ciphertext.count % 16 == 0 else { return false }
        let start = ciphertext.startIndex
        guard let padding = KDBXCrypto.aes256CBCEncrypt([UInt8](repeating: 16, count: 16)[...], key: key, iv: Array(ciphertext[(start + 16)..<(start + 32)])),
              var first = KDBXCrypto.aes256CBCDecrypt((Array(ciphertext[start..<(start + 32)]) + padding.prefix(16))[...], key: key, iv: header.encryptionIV)
        else { return false }
        defer { wipe(&first) }
        guard first.count == 32, KDBXCrypto.equal(header.streamStartBytes, first[...]) else {
            throw .sourceSecretRejected(file: file, what: credentials.described)
        }
        return true
    }

    // MARK: Shared

    private static func decrypt(_ ciphertext: ArraySlice<UInt8>, header: KDBXHeader, key: [UInt8], file: String,
                                credentials: KDBXCredentials, keyChecked: Bool = false) throws(VaultError) -> [UInt8] {
        switch header.cipher {
        case .chacha20:
            var plain = Array(ciphertext)
            guard KDBXCrypto.chacha20(&plain, key: key, nonce: header.encryptionIV) else { throw .sourceDamaged(file: file, why: "the ChaCha20 IV") }
            return plain
        case .aes256CBC:
            guard ciphertext.count % 16 == 0 else {
                throw .sourceDamaged(file: file, why: "the encrypted payload is \(ciphertext.count) bytes, not whole AES blocks (it is truncated)")
            }
            // KDBX 4 has verified the key by the header's HMAC: bad padding there is damage; in 3.1 it is the key.
            guard let plain = KDBXCrypto.aes256CBCDecrypt(ciphertext, key: key, iv: header.encryptionIV) else {
                if header.major == 3 && !keyChecked { throw .sourceSecretRejected(file: file, what: credentials.described) }
                throw .sourceDamaged(file: file, why: "the decrypted payload has no valid padding")
            }
            return plain
        }
    }

    private static func innerStream(id: UInt32, key: [UInt8], file: String) throws(VaultError) -> KDBXInnerStream? {
        switch id {
        case 0: return nil
        case 2: return KDBXInnerStream(kind: .salsa20, innerKey: key)
        case 3: return KDBXInnerStream(kind: .chacha20, innerKey: key)
        default: throw .unsupportedFeature("\(file) protects its values with inner stream \(id) (ArcFour?); vaultfile reads Salsa20 and ChaCha20")
        }
    }
}
