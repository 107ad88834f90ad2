import KDF

// MARK: - Format v1 header

/// The plaintext header of a format-v1 vault (see docs/FORMAT.md for the byte layout).
///
/// Parsing checks every length against the bytes present and the documented
/// bounds before using it; serialising produces the one canonical encoding.
public struct VaultHeader: Equatable, Sendable {
    // MARK: Constants

    /// `\x89VAULT\r\n`: the high byte catches 7-bit transfers, CR LF catches newline conversion.
    public static let magic: [UInt8] = [0x89, 0x56, 0x41, 0x55, 0x4C, 0x54, 0x0D, 0x0A]
    /// The major version this build reads and writes. A different major version is refused.
    public static let majorVersion: UInt8 = 1
    /// The minor version this build writes. Readers accept any minor version of their major.
    public static let minorVersion: UInt8 = 0
    /// The only payload cipher of v1: secretstream XChaCha20-Poly1305, 64 KiB chunks.
    public static let secretstreamCipherID: UInt8 = 1
    /// The largest header, in bytes (the length field is 16 bits).
    public static let maxLength = 65_535
    /// The most keyslots a header may hold.
    public static let maxKeyslots = 16
    /// Bytes before the keyslots: magic, versions, length, id, generation, cipher, flags, stream header, slot count.
    static let fixedPrefixLength = 63
    /// Bytes after the keyslots: header MAC and checksum.
    static let trailerLength = 64

    // MARK: Fields

    /// The minor version found in the file (preserved on re-seal only if equal to ours).
    public var minorVersion: UInt8
    /// A random id chosen at creation and kept for the vault's life.
    public var vaultID: [UInt8]
    /// Incremented on every seal, so an older copy of the vault can be recognised.
    public var generation: UInt64
    /// The payload cipher (1 in v1).
    public var cipherID: UInt8
    /// Must-understand flags; none are defined in v1.0.
    public var flags: UInt8
    /// libsodium secretstream header: 24 random bytes, fresh on every seal.
    public var streamHeader: [UInt8]
    /// The keyslots, in file order.
    public var keyslots: [Keyslot]
    /// HMAC-SHA256 under the header subkey, over every byte before it.
    public var mac: [UInt8]

    /// Creates a header; `mac` is filled in by the sealing code.
    init(vaultID: [UInt8], generation: UInt64, streamHeader: [UInt8], keyslots: [Keyslot]) {
        self.minorVersion = Self.minorVersion
        self.vaultID = vaultID
        self.generation = generation
        self.cipherID = Self.secretstreamCipherID
        self.flags = 0
        self.streamHeader = streamHeader
        self.keyslots = keyslots
        self.mac = [UInt8](repeating: 0, count: 32)
    }

    // MARK: Serialising

    /// The bytes covered by the MAC: everything from the magic to the last keyslot.
    func authenticatedBytes() -> [UInt8] {
        let slotBytes = keyslots.map { $0.encoded() }
        let length = Self.fixedPrefixLength + slotBytes.reduce(0) { $0 + $1.count } + Self.trailerLength
        var writer = ByteWriter(capacity: length)
        writer.append(Self.magic)
        writer.append(Self.majorVersion)
        writer.append(minorVersion)
        writer.append(UInt16(length))
        writer.append(vaultID)
        writer.append(generation)
        writer.append(cipherID)
        writer.append(flags)
        writer.append(streamHeader)
        writer.append(UInt8(keyslots.count))
        for slot in slotBytes { writer.append(slot) }
        return writer.bytes
    }

    /// The whole header: authenticated bytes, MAC, then a BLAKE2b-256 checksum of both.
    public func encoded() -> [UInt8] {
        var bytes = authenticatedBytes()
        bytes.append(contentsOf: mac)
        bytes.append(contentsOf: Checksum.blake2b256(bytes[...]))
        return bytes
    }

    // MARK: Parsing

    /// Parses the header at the start of `file`; returns it and its length in bytes.
    ///
    /// Checks, in order: magic, major version, declared length, the checksum
    /// (so accidental damage is reported as such, before any KDF runs), then
    /// each field and keyslot. Does not need the password.
    public static func parse(_ file: [UInt8], path: String) throws(VaultError) -> (header: VaultHeader, length: Int) {
        guard file.count >= magic.count, file[0..<magic.count].elementsEqual(magic) else {
            throw .notAVault(path: path)
        }
        guard file.count >= 12 else { throw .headerDamaged("the file ends inside the header (\(file.count) bytes)") }
        var prefix = ByteReader(file[magic.count..<12], reading: .header)
        let major = try prefix.read(UInt8.self, "major version"), minor = try prefix.read(UInt8.self, "minor version")
        guard major == majorVersion else { throw .unsupportedVersion(major: major, minor: minor) }
        let length = Int(try prefix.read(UInt16.self, "header length"))
        let minimum = fixedPrefixLength + trailerLength
        guard length >= minimum else { throw .headerDamaged("declared header length \(length) is below the minimum \(minimum)") }
        guard length <= file.count else {
            throw .headerDamaged("declared header length \(length) exceeds the file size \(file.count)")
        }
        let checksum = Checksum.blake2b256(file[0..<length - 32])
        guard constantTimeEqual(checksum, file[length - 32..<length]) else {
            throw .headerDamaged("header checksum mismatch")
        }

        var reader = ByteReader(file[12..<length - trailerLength], reading: .header)
        let vaultID = Array(try reader.read(16, "vault id"))
        let generation = try reader.read(UInt64.self, "generation")
        let cipherID = try reader.read(UInt8.self, "cipher id")
        guard cipherID == secretstreamCipherID else { throw .unsupportedFeature("payload cipher \(cipherID)") }
        let flags = try reader.read(UInt8.self, "flags")
        // Flags are must-understand: a reader that does not know a set bit must refuse.
        guard flags == 0 else { throw .unsupportedFeature("header flags 0x\(String(flags, radix: 16))") }
        let streamHeader = Array(try reader.read(24, "stream header"))
        let slotCount = Int(try reader.read(UInt8.self, "keyslot count"))
        guard (1...maxKeyslots).contains(slotCount) else {
            throw .headerDamaged("keyslot count \(slotCount) is outside 1…\(maxKeyslots)")
        }
        var keyslots: [Keyslot] = []
        for index in 0..<slotCount {
            keyslots.append(try Keyslot.parse(&reader, index: index))
        }
        guard reader.remaining == 0 else {
            throw .headerDamaged("\(reader.remaining) unexpected bytes after the keyslots")
        }
        var header = VaultHeader(vaultID: vaultID, generation: generation, streamHeader: streamHeader, keyslots: keyslots)
        header.minorVersion = minor
        header.cipherID = cipherID
        header.flags = flags
        header.mac = Array(file[length - trailerLength..<length - 32])
        return (header, length)
    }
}

// MARK: - Keyslots

/// One way to unwrap the file key. v1 defines password slots; other types are kept as they are.
public enum Keyslot: Equatable, Sendable {
    /// A password slot: the file key wrapped under a key derived from the password.
    case password(PasswordSlot)
    /// A slot type this version does not know (reserved: 2 keyfile, 3 recipient); preserved byte for byte.
    case unknown(type: UInt8, body: [UInt8])

    /// The type byte of password slots.
    public static let passwordType: UInt8 = 1

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        switch self {
        case .password(let slot):
            let body = slot.body()
            writer.append(Self.passwordType)
            writer.append(UInt16(body.count))
            writer.append(body)
        case .unknown(let type, let body):
            writer.append(type)
            writer.append(UInt16(body.count))
            writer.append(body)
        }
        return writer.bytes
    }

    static func parse(_ reader: inout ByteReader<ArraySlice<UInt8>>, index: Int) throws(VaultError) -> Keyslot {
        let type = try reader.read(UInt8.self, "keyslot \(index) type")
        let length = Int(try reader.read(UInt16.self, "keyslot \(index) length"))
        let body = try reader.read(length, "keyslot \(index) body")
        guard type == passwordType else {
            guard type != 0 else { throw .headerDamaged("keyslot \(index) has type 0") }
            return .unknown(type: type, body: Array(body))
        }
        return .password(try PasswordSlot.parse(body, index: index))
    }
}

/// A password keyslot: KDF parameters, salt, nonce, and the wrapped file key.
public struct PasswordSlot: Equatable, Sendable {
    /// How the slot key is derived from the password.
    public var kdf: KDFParameters
    /// 16 random bytes.
    public var salt: [UInt8]
    /// 24 random bytes: the XChaCha20-Poly1305 nonce of the wrap.
    public var nonce: [UInt8]
    /// The 32-byte file key encrypted under the slot key, plus the 16-byte tag.
    public var wrappedKey: [UInt8]

    /// The wrapped key's length: 32-byte key + 16-byte tag.
    static let wrappedKeyLength = 48

    func body() -> [UInt8] { kdf.encoded + salt + nonce + wrappedKey }

    /// The associated data of the wrap: context, vault id, slot type, KDF encoding and salt.
    /// Binding the id stops a slot being moved into another vault.
    func associatedData(vaultID: [UInt8]) -> [UInt8] {
        Array("vaultfile keyslot v1".utf8) + vaultID + [Keyslot.passwordType] + kdf.encoded + salt
    }

    static func parse(_ body: ArraySlice<UInt8>, index: Int) throws(VaultError) -> PasswordSlot {
        let fixed = KDFParameters.saltLength + XChaCha20Poly1305.nonceLength + wrappedKeyLength
        guard body.count > fixed else {
            throw .headerDamaged("keyslot \(index) is \(body.count) bytes, too short for a password slot")
        }
        let kdfBytes = body.prefix(body.count - fixed)
        let kdf: KDFParameters
        do {
            kdf = try KDFParameters.decode(kdfBytes)
        } catch {
            if case .unknownAlgorithm(let id) = error { throw .unsupportedFeature("key derivation function \(id) in keyslot \(index)") }
            throw .headerDamaged("keyslot \(index): \(error.description)")
        }
        var rest = body.suffix(fixed)
        let salt = Array(rest.prefix(KDFParameters.saltLength))
        rest = rest.dropFirst(KDFParameters.saltLength)
        let nonce = Array(rest.prefix(XChaCha20Poly1305.nonceLength))
        let wrapped = Array(rest.dropFirst(XChaCha20Poly1305.nonceLength))
        return PasswordSlot(kdf: kdf, salt: salt, nonce: nonce, wrappedKey: wrapped)
    }
}
