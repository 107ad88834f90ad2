import KDF
import VaultModel

// MARK: - The outer header of a KDBX file

/// The plaintext header of a KeePass database, KDBX 3.1 or 4.x: the signatures and version, then
/// fields of (id, length, data) up to the end field. Every length is checked against the bytes
/// that remain and against `maxLength` before anything is read: a field that claims 4 GiB is
/// refused as damage, and nothing here allocates more than the file holds.
struct KDBXHeader {
    /// The first eight bytes of every KDBX file (KeePass 2's two signatures).
    static let signature: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]
    /// The longest header read (KeePass writes a few hundred bytes; public custom data may add some).
    static let maxLength = 1 << 20

    /// The outer cipher.
    enum Cipher {
        case aes256CBC
        case chacha20
    }

    /// The key derivation and its parameters.
    enum KeyDerivation {
        /// AES-KDF: the key encrypted `rounds` times under `seed`.
        case aes(seed: [UInt8], rounds: UInt64)
        /// Argon2d or Argon2id (KDBX 4 only).
        case argon2(variant: Argon2Variant, salt: [UInt8], memoryBytes: UInt64, iterations: UInt64, parallelism: UInt32,
                    version: UInt32, secret: [UInt8], associatedData: [UInt8])
    }

    /// 3 or 4.
    var major: UInt16
    /// 1 for 3.1; 0 or 1 for 4.0 and 4.1.
    var minor: UInt16
    var cipher: Cipher
    var compressed: Bool
    var masterSeed: [UInt8]
    var encryptionIV: [UInt8]
    var kdf: KeyDerivation
    /// KDBX 3.1's inner stream key, the first bytes of the decrypted payload and the inner stream's ID.
    var protectedStreamKey: [UInt8] = []
    var streamStartBytes: [UInt8] = []
    var innerStream: UInt32 = 0
    /// Where the fields end: KDBX 3.1's payload starts here; KDBX 4's header hash and HMAC follow.
    var end: Int

    // MARK: Identifiers

    static let aesCBC: [UInt8] = [0x31, 0xC1, 0xF2, 0xE6, 0xBF, 0x71, 0x43, 0x50, 0xBE, 0x58, 0x05, 0x21, 0x6A, 0xFC, 0x5A, 0xFF]
    static let chacha20: [UInt8] = [0xD6, 0x03, 0x8A, 0x2B, 0x8B, 0x6F, 0x4C, 0xB5, 0xA5, 0x24, 0x33, 0x9A, 0x31, 0xDB, 0xB5, 0x9A]
    static let twofish: [UInt8] = [0xAD, 0x68, 0xF2, 0x9F, 0x57, 0x6F, 0x4B, 0xB9, 0xA3, 0x6A, 0xD4, 0x7A, 0xF9, 0x65, 0x34, 0x6C]
    static let aesKDF4: [UInt8] = [0xC9, 0xD9, 0xF3, 0x9A, 0x62, 0x8A, 0x44, 0x60, 0xBF, 0x74, 0x0D, 0x08, 0xC1, 0x8A, 0x4F, 0xEA]
    static let aesKDF3: [UInt8] = [0x7C, 0x02, 0xBB, 0x82, 0x79, 0xA7, 0x4A, 0xC0, 0x92, 0x7D, 0x11, 0x4A, 0x00, 0x64, 0x82, 0x38]
    static let argon2d: [UInt8] = [0xEF, 0x63, 0x6D, 0xDF, 0x8C, 0x29, 0x44, 0x4B, 0x91, 0xF7, 0xA9, 0xA4, 0x03, 0xE3, 0x0A, 0x0C]
    static let argon2id: [UInt8] = [0x9E, 0x29, 0x8B, 0x19, 0x56, 0xDB, 0x47, 0x73, 0xB2, 0x3D, 0xFC, 0x3E, 0xC6, 0xF0, 0xA1, 0xE6]

    // MARK: Parsing

    /// The header at the start of `bytes` (a whole file named `file` in messages).
    static func parse(_ bytes: [UInt8], file: String) throws(VaultError) -> KDBXHeader {
        var reader = KDBXBytes(bytes, file: file, what: "the header")
        guard bytes.starts(with: signature) else { throw reader.damaged("it does not start with KeePass 2's signature") }
        reader.offset = 8
        let minor = try reader.u16(), major = try reader.u16()
        guard major == 3 || major == 4 else {
            throw .unsupportedFeature("\(file) is a KDBX \(major).\(minor) database; vaultfile reads KDBX 3.1 and 4.x (save it with a current KeePass or KeePassXC)")
        }
        var cipher: Cipher?, compressed = false, seed: [UInt8]?, iv: [UInt8]?, kdf: KeyDerivation?
        var transformSeed: [UInt8]?, rounds: UInt64?
        var header = KDBXHeader(major: major, minor: minor, cipher: .aes256CBC, compressed: false, masterSeed: [], encryptionIV: [],
                                kdf: .aes(seed: [], rounds: 0), end: 0)
        while true {
            let id = try reader.u8()
            let length = major == 3 ? Int(try reader.u16()) : try reader.length(try reader.u32(), limit: maxLength)
            let data = try reader.take(length, "header field \(id)")
            guard reader.offset <= maxLength else { throw reader.damaged("the header is longer than \(maxLength) bytes") }
            switch id {
            case 0:
                header.end = reader.offset
                guard let cipher, let seed, let iv else { throw reader.damaged("a required field (cipher, master seed or IV) is missing") }
                guard seed.count == 32 else { throw reader.damaged("the master seed is \(seed.count) bytes, not 32") }
                guard iv.count == (cipher == .chacha20 ? 12 : 16) else { throw reader.damaged("the encryption IV is \(iv.count) bytes") }
                (header.cipher, header.compressed, header.masterSeed, header.encryptionIV) = (cipher, compressed, seed, iv)
                if major == 3 {
                    guard let transformSeed, let rounds, transformSeed.count == 32 else { throw reader.damaged("the AES-KDF seed or rounds are missing") }
                    guard header.streamStartBytes.count == 32 else { throw reader.damaged("the stream start bytes are missing") }
                    header.kdf = .aes(seed: transformSeed, rounds: rounds)
                } else {
                    guard let kdf else { throw reader.damaged("the KDF parameters are missing") }
                    header.kdf = kdf
                }
                return header
            case 2:
                let uuid = Array(data)
                if uuid == aesCBC { cipher = .aes256CBC } else if uuid == chacha20 { cipher = .chacha20 } else {
                    throw .unsupportedFeature("\(file) is encrypted with " + (uuid == twofish ? "Twofish" : "an unknown cipher")
                                              + "; vaultfile reads KDBX files encrypted with AES-256 or ChaCha20 (change the cipher in KeePassXC's database settings)")
                }
            case 3:
                guard data.count == 4 else { throw reader.damaged("the compression field is \(data.count) bytes") }
                let flag = KDBXBytes.u32(data)
                guard flag <= 1 else { throw .unsupportedFeature("\(file) uses compression algorithm \(flag); KDBX knows none (0) and gzip (1)") }
                compressed = flag == 1
            case 4: seed = Array(data)
            case 5 where major == 3: transformSeed = Array(data)
            case 6 where major == 3:
                guard data.count == 8 else { throw reader.damaged("the AES-KDF rounds field is \(data.count) bytes") }
                rounds = KDBXBytes.u64(data)
            case 7: iv = Array(data)
            case 8 where major == 3: header.protectedStreamKey = Array(data)
            case 9 where major == 3: header.streamStartBytes = Array(data)
            case 10 where major == 3:
                guard data.count == 4 else { throw reader.damaged("the inner stream ID is \(data.count) bytes") }
                header.innerStream = KDBXBytes.u32(data)
            case 11 where major == 4: kdf = try keyDerivation(data, file: file)
            default: continue  // comments, public custom data: nothing to keep
            }
        }
    }

    /// KDBX 4's KDF parameters: a VariantDictionary (version 1.x; entries of type, key, value).
    private static func keyDerivation(_ data: ArraySlice<UInt8>, file: String) throws(VaultError) -> KeyDerivation {
        var reader = KDBXBytes(Array(data), file: file, what: "the KDF parameters")
        let version = try reader.u16()
        guard version >> 8 == 1 else { throw reader.damaged("the KDF parameters' dictionary is of version \(version >> 8), not 1") }
        var values: [String: [UInt8]] = [:]
        while true {
            let type = try reader.u8()
            if type == 0 { break }
            let keyLength = try reader.length(try reader.u32(), limit: 256)
            let key = String(decoding: try reader.take(keyLength, "a KDF parameter's name"), as: UTF8.self)
            let valueLength = try reader.length(try reader.u32(), limit: 4_096)
            let value = try reader.take(valueLength, "the KDF parameter \(key)")
            guard values[key] == nil else { throw reader.damaged("the KDF parameter \(key) is given twice") }
            values[key] = Array(value)
        }
        func number(_ key: String, _ size: Int) throws(VaultError) -> UInt64 {
            guard let bytes = values[key] else { throw reader.damaged("the KDF parameter \(key) is missing") }
            guard bytes.count == size else { throw reader.damaged("the KDF parameter \(key) is \(bytes.count) bytes, not \(size)") }
            return size == 4 ? UInt64(KDBXBytes.u32(bytes[...])) : KDBXBytes.u64(bytes[...])
        }
        guard let uuid = values["$UUID"] else { throw reader.damaged("the KDF parameters name no KDF") }
        if uuid == aesKDF4 || uuid == aesKDF3 {
            guard let seed = values["S"], seed.count == 32 else { throw reader.damaged("AES-KDF's seed is missing or not 32 bytes") }
            return .aes(seed: seed, rounds: try number("R", 8))
        }
        guard uuid == argon2d || uuid == argon2id else {
            throw .unsupportedFeature("\(file) names a KDF vaultfile does not know; it reads AES-KDF, Argon2d and Argon2id")
        }
        guard let salt = values["S"], (8...1_024).contains(salt.count) else { throw reader.damaged("Argon2's salt is missing or of a wrong size") }
        return .argon2(variant: uuid == argon2d ? .argon2d : .argon2id, salt: salt, memoryBytes: try number("M", 8), iterations: try number("I", 8),
                       parallelism: UInt32(try number("P", 4)), version: UInt32(try number("V", 4)),
                       secret: values["K"] ?? [], associatedData: values["A"] ?? [])
    }
}

// MARK: - Reading bounded little-endian fields

/// A cursor over a KDBX file's bytes: every read checked against what remains, every failure the
/// file's damage (`VaultError.sourceDamaged`) naming the part being read.
struct KDBXBytes {
    let bytes: [UInt8]
    let file: String
    let what: String
    var offset = 0

    init(_ bytes: [UInt8], file: String, what: String) { (self.bytes, self.file, self.what) = (bytes, file, what) }

    /// The bytes not read yet.
    var remaining: Int { bytes.count - offset }

    func damaged(_ why: String) -> VaultError { .sourceDamaged(file: file, why: "\(what): \(why)") }

    mutating func take(_ count: Int, _ name: String) throws(VaultError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw damaged("\(name) says \(count) bytes, but only \(remaining) remain (the file is truncated or damaged)")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() throws(VaultError) -> UInt8 { try take(1, "a field")[offset - 1] }
    mutating func u16() throws(VaultError) -> UInt16 { let b = try take(2, "a field"); return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8 }
    mutating func u32() throws(VaultError) -> UInt32 { Self.u32(try take(4, "a field")) }

    /// A length field, refused above `limit` before anything is read or allocated.
    func length(_ value: UInt32, limit: Int) throws(VaultError) -> Int {
        guard Int(value) <= limit else { throw damaged("a length of \(value) bytes, more than the \(limit) allowed there") }
        return Int(value)
    }

    static func u32(_ b: ArraySlice<UInt8>) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[b.startIndex + $1]) << (8 * UInt32($1)) } }
    static func u64(_ b: ArraySlice<UInt8>) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[b.startIndex + $1]) << (8 * UInt64($1)) } }
    static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) } }
}
