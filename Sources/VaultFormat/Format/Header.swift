import KDF
import VaultModel

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
    /// The minor version a new vault gets. Readers accept any minor version of their major;
    /// writers keep a file's minor version unless a command adds a feature of a newer one (§8).
    public static let minorVersion: UInt8 = 0
    /// The minor version of keyslots 1.1 (`keyslotsFlag`), written when a vault first gets one.
    public static let keyslotsMinorVersion: UInt8 = 1
    /// Must-understand flag of format 1.1's keyslots: new slot types and the encrypted metadata block.
    public static let keyslotsFlag: UInt8 = 0x02
    /// Must-understand flag of format 1.2: the payload holds content version 2, with each
    /// entry's earlier versions (docs/FORMAT.md §7.1).
    public static let historyFlag: UInt8 = 0x04
    /// The minor version of entry history (`historyFlag`), written when a vault first gets it.
    public static let historyMinorVersion: UInt8 = 2
    /// Must-understand flag of format 1.3: every seal is signed (docs/FORMAT.md "Signed seals"):
    /// a signature block follows the metadata block, and the metadata holds the seal record.
    public static let signedFlag: UInt8 = 0x08
    /// The minor version of signed seals (`signedFlag`).
    public static let signedMinorVersion: UInt8 = 3
    /// Must-understand flag of format 1.4: the metadata block's version 2 (a u16 length for each
    /// slot's public key) and the slot types whose keys need it (ssh-rsa, type 7). Set exactly when
    /// a slot's key is longer than 255 bytes (docs/FORMAT.md §3.11).
    public static let longKeysFlag: UInt8 = 0x10
    /// The minor version of long slot keys (`longKeysFlag`).
    public static let longKeysMinorVersion: UInt8 = 4
    /// The flag bits this build understands (`historyFlag` only in a file of minor version 2 or
    /// later, `signedFlag` only at 3 or later, `longKeysFlag` only at 4 or later).
    public static let knownFlags: UInt8 = keyslotsFlag | historyFlag | signedFlag | longKeysFlag
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

    /// The minor version found in the file, kept on re-seal (docs/FORMAT.md §8).
    public var minorVersion: UInt8
    /// A random id chosen at creation and kept for the vault's life.
    public var vaultID: [UInt8]
    /// Incremented on every seal, so an older copy of the vault can be recognised.
    public var generation: UInt64
    /// The payload cipher (1 in v1).
    public var cipherID: UInt8
    /// Must-understand flags: `keyslotsFlag` (format 1.1), or none.
    public var flags: UInt8
    /// libsodium secretstream header: 24 random bytes, fresh on every seal.
    public var streamHeader: [UInt8]
    /// The keyslots, in file order.
    public var keyslots: [Keyslot]
    /// The encrypted keyslot metadata, present exactly when `keyslotsFlag` is set.
    public var metadata: MetadataBlock?
    /// The encrypted signature block, present exactly when `signedFlag` is set.
    public var signatureBlock: SignatureBlock?
    /// HMAC-SHA256 under the header subkey, over every byte before it.
    public var mac: [UInt8]

    /// Whether the file uses format 1.1's keyslots (`keyslotsFlag`).
    public var usesKeyslots11: Bool { flags & Self.keyslotsFlag != 0 }

    /// Whether the file keeps entry history (`historyFlag`, format 1.2).
    public var keepsHistory: Bool { flags & Self.historyFlag != 0 }

    /// Whether every seal of the file is signed (`signedFlag`, format 1.3).
    public var isSigned: Bool { flags & Self.signedFlag != 0 }

    /// Whether the file's metadata is version 2, with long slot keys (`longKeysFlag`, format 1.4).
    public var usesLongKeys: Bool { flags & Self.longKeysFlag != 0 }

    /// Creates a header; `mac` is filled in by the sealing code.
    init(vaultID: [UInt8], generation: UInt64, streamHeader: [UInt8], keyslots: [Keyslot]) {
        self.minorVersion = Self.minorVersion
        self.vaultID = vaultID
        self.generation = generation
        self.cipherID = Self.secretstreamCipherID
        self.flags = 0
        self.streamHeader = streamHeader
        self.keyslots = keyslots
        self.metadata = nil
        self.signatureBlock = nil
        self.mac = [UInt8](repeating: 0, count: 32)
    }

    // MARK: Serialising

    /// The bytes covered by the MAC: everything from the magic to the last keyslot, the
    /// metadata block when there is one, and the signature block when there is one.
    func authenticatedBytes() -> [UInt8] {
        let slotBytes = keyslots.map { $0.encoded() }
        let metadataLength = metadata.map { 2 + $0.nonce.count + $0.sealed.count } ?? 0
        let length = Self.fixedPrefixLength + slotBytes.reduce(0) { $0 + $1.count } + metadataLength
            + (signatureBlock?.encodedLength ?? 0) + Self.trailerLength
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
        if let metadata {
            writer.append(UInt16(metadata.sealed.count))
            writer.append(metadata.nonce)
            writer.append(metadata.sealed)
        }
        if let signatureBlock {
            writer.append(UInt16(signatureBlock.sealed.count))
            writer.append(signatureBlock.nonce)
            writer.append(signatureBlock.sealed)
        }
        return writer.bytes
    }

    /// The associated data of the metadata block: every header byte before its nonce (the
    /// block's length field included).
    func metadataAssociatedData() -> [UInt8] {
        let bytes = authenticatedBytes()
        guard let metadata else { return bytes }
        let after = metadata.nonce.count + metadata.sealed.count + (signatureBlock?.encodedLength ?? 0)
        return Array(bytes.prefix(bytes.count - after))
    }

    /// The header bytes a seal signature covers: magic … metadata block, everything before the
    /// signature block (with the final length and flags).
    public func signedPrefix() -> [UInt8] {
        let bytes = authenticatedBytes()
        return Array(bytes.prefix(bytes.count - (signatureBlock?.encodedLength ?? 0)))
    }

    /// The associated data of the signature block: every header byte before its nonce (its
    /// length field included).
    func signatureAssociatedData() -> [UInt8] {
        let bytes = authenticatedBytes()
        guard let signatureBlock else { return bytes }
        return Array(bytes.prefix(bytes.count - signatureBlock.nonce.count - signatureBlock.sealed.count))
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
        // Bit 0x04 was reserved before format 1.2 defined it: in a file of an older minor version
        // it is still the unknown bit that those versions' readers refuse.
        // So was 0x08 before format 1.3.
        var understood = minor >= historyMinorVersion ? knownFlags : knownFlags & ~historyFlag
        if minor < signedMinorVersion { understood &= ~signedFlag }
        if minor < longKeysMinorVersion { understood &= ~longKeysFlag }
        guard flags & ~understood == 0 else { throw .unsupportedFeature("header flags 0x\(String(flags, radix: 16))") }
        // A signed file's signature block and seal record live beside the 1.1 metadata block.
        guard flags & signedFlag == 0 || flags & keyslotsFlag != 0 else {
            throw .headerDamaged("flag 0x08 (signed seals) is set without flag 0x02 (keyslots)")
        }
        // Long keys live in the 1.1 metadata block (its version 2).
        guard flags & longKeysFlag == 0 || flags & keyslotsFlag != 0 else {
            throw .headerDamaged("flag 0x10 (long slot keys) is set without flag 0x02 (keyslots)")
        }
        // New slot types are read only where the flag says the file has them; elsewhere they stay unknown.
        let extended = flags & keyslotsFlag != 0, longKeys = flags & longKeysFlag != 0
        let streamHeader = Array(try reader.read(24, "stream header"))
        let slotCount = Int(try reader.read(UInt8.self, "keyslot count"))
        guard (1...maxKeyslots).contains(slotCount) else {
            throw .headerDamaged("keyslot count \(slotCount) is outside 1…\(maxKeyslots)")
        }
        var keyslots: [Keyslot] = []
        for index in 0..<slotCount {
            keyslots.append(try Keyslot.parse(&reader, index: index, extended: extended, longKeys: longKeys))
        }
        var metadata: MetadataBlock? = nil
        if extended {
            let sealedLength = Int(try reader.read(UInt16.self, "keyslot metadata length"))
            guard MetadataBlock.isValidSealedLength(sealedLength) else {
                throw .headerDamaged("keyslot metadata length \(sealedLength) is not 16 more than a multiple of 256")
            }
            let nonce = Array(try reader.read(XChaCha20Poly1305.nonceLength, "keyslot metadata nonce"))
            metadata = MetadataBlock(nonce: nonce, sealed: Array(try reader.read(sealedLength, "keyslot metadata")))
        }
        var signatureBlock: SignatureBlock? = nil
        if flags & signedFlag != 0 {
            if let index = keyslots.firstIndex(where: { if case .password = $0 { return true } else { return false } }) {
                throw .headerDamaged("keyslot \(index) is a v1 password slot, which a signed vault never holds")
            }
            signatureBlock = try SignatureBlock.parse(&reader, sealedLength: SignatureBlock.expectedSealedLength(longKeys: longKeys, keyslots: keyslots))
        }
        guard reader.remaining == 0 else {
            throw .headerDamaged("\(reader.remaining) unexpected bytes after the keyslots")
        }
        var header = VaultHeader(vaultID: vaultID, generation: generation, streamHeader: streamHeader, keyslots: keyslots)
        header.minorVersion = minor
        header.cipherID = cipherID
        header.flags = flags
        header.metadata = metadata
        header.signatureBlock = signatureBlock
        header.mac = Array(file[length - trailerLength..<length - 32])
        return (header, length)
    }
}

// MARK: - Keyslots

/// One way to unwrap the file key: v1 password slots, format 1.1's slots in the recipient
/// shape, and types this version does not know, which are kept as they are.
public enum Keyslot: Equatable, Sendable {
    /// A v1 password slot: the file key wrapped under a key derived from the password.
    case password(PasswordSlot)
    /// A format-1.1 slot (types 2-6, read only in a file with `VaultHeader.keyslotsFlag`).
    case x25519(X25519Slot)
    /// An ssh-rsa slot (type 7, read only in a file with `VaultHeader.longKeysFlag`).
    case sshRSA(RSASlot)
    /// A post-quantum mlkem768x25519 slot (type 8, read only in a file with `VaultHeader.longKeysFlag`).
    case mlkem768x25519(HybridSlot)
    /// An age plugin slot (type 9, read only in a file with `VaultHeader.longKeysFlag`).
    case plugin(PluginSlot)
    /// A slot type this version does not know (or a 1.1 type in a file without the flag); preserved byte for byte.
    case unknown(type: UInt8, body: [UInt8])

    /// The type byte of password slots.
    public static let passwordType: UInt8 = 1

    /// The slot's type byte.
    public var typeByte: UInt8 {
        switch self {
        case .password: return Self.passwordType
        case .x25519(let slot): return slot.kind.rawValue
        case .sshRSA: return RSASlot.type
        case .mlkem768x25519: return HybridSlot.type
        case .plugin: return PluginSlot.type
        case .unknown(let type, _): return type
        }
    }

    func encoded() -> [UInt8] {
        let body: [UInt8]
        switch self {
        case .password(let slot): body = slot.body()
        case .x25519(let slot): body = slot.body()
        case .sshRSA(let slot): body = slot.body()
        case .mlkem768x25519(let slot): body = slot.body()
        case .plugin(let slot): body = slot.body()
        case .unknown(_, let unknownBody): body = unknownBody
        }
        var writer = ByteWriter(capacity: 3 + body.count)
        writer.append(typeByte)
        writer.append(UInt16(body.count))
        writer.append(body)
        return writer.bytes
    }

    static func parse(_ reader: inout ByteReader<ArraySlice<UInt8>>, index: Int, extended: Bool, longKeys: Bool = false) throws(VaultError) -> Keyslot {
        let type = try reader.read(UInt8.self, "keyslot \(index) type")
        let length = Int(try reader.read(UInt16.self, "keyslot \(index) length"))
        let body = try reader.read(length, "keyslot \(index) body")
        if type == passwordType { return .password(try PasswordSlot.parse(body, index: index)) }
        guard type != 0 else { throw .headerDamaged("keyslot \(index) has type 0") }
        if extended, let kind = SlotKind(rawValue: type) {
            return .x25519(try X25519Slot.parse(kind: kind, body: body, index: index))
        }
        // An ssh-rsa key needs the metadata's long keys: without flag 0x10 the type is unknown, kept as it is.
        if extended, longKeys, type == RSASlot.type { return .sshRSA(try RSASlot.parse(body: body, index: index)) }
        // So does a post-quantum slot (its 1,216-byte key): without flag 0x10, unknown and kept.
        if extended, longKeys, type == HybridSlot.type { return .mlkem768x25519(try HybridSlot.parse(body: body, index: index)) }
        if extended, longKeys, type == PluginSlot.type { return .plugin(try PluginSlot.parse(body: body, index: index)) }
        return .unknown(type: type, body: Array(body))
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
