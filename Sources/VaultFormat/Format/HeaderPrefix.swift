import SecureMemory
import VaultModel

// MARK: - A signed header up to its signature block

/// The bytes of a signed header before its signature block (magic … metadata block), as the agent
/// is sent them to sign a seal (docs/AGENT.md "sign"). Parsed as untrusted input: every length is
/// checked before use, and the prefix must be exactly one signed header's first part: flags 0x02
/// and 0x08, minor version 3 or later, and a declared header length that is the prefix's plus a
/// signature block, the MAC and the checksum (so the seal that follows can be exactly this header).
package struct HeaderPrefix: Sendable {
    /// The flag of signed seals (format 1.3).
    package static let signedFlag = VaultHeader.signedFlag
    /// The first minor version that knows `signedFlag`.
    package static let signedMinorVersion = VaultHeader.signedMinorVersion
    /// Bytes of the signature block without flag 0x10: length (2), nonce (24), 400 sealed bytes.
    /// With it, the length follows the slots (`SignatureBlock.expectedSealedLength`).
    package static let signatureBlockLength = 2 + XChaCha20Poly1305.nonceLength + SignatureBlock.sealedLength
    /// Offset of the vault id in a header.
    package static let vaultIDOffset = 12

    /// The vault id.
    package let vaultID: [UInt8]
    /// The generation of the seal being signed.
    package let generation: UInt64
    /// The keyslots, in order.
    package let keyslots: [Keyslot]
    /// Whether the header has flag 0x10 (metadata version 2).
    private let longKeys: Bool
    /// The metadata block's nonce and sealed bytes.
    private let metadata: MetadataBlock
    /// Every byte before the metadata block's nonce: the block's associated data.
    private let metadataAssociatedData: [UInt8]

    /// Parses `bytes` as the part of a signed header before its signature block.
    package init(_ bytes: [UInt8]) throws(VaultError) {
        func damaged(_ why: String) -> VaultError { .headerDamaged("the header to sign: \(why)") }
        guard bytes.count >= VaultHeader.fixedPrefixLength, bytes.starts(with: VaultHeader.magic) else {
            throw damaged("it does not start like a vault header")
        }
        var reader = ByteReader(bytes[VaultHeader.magic.count...], reading: .header)
        let major = try reader.read(UInt8.self, "major version"), minor = try reader.read(UInt8.self, "minor version")
        guard major == VaultHeader.majorVersion, minor >= Self.signedMinorVersion else {
            throw damaged("version \(major).\(minor) has no signed seals")
        }
        let declared = Int(try reader.read(UInt16.self, "header length"))
        vaultID = Array(try reader.read(16, "vault id"))
        generation = try reader.read(UInt64.self, "generation")
        guard try reader.read(UInt8.self, "cipher id") == VaultHeader.secretstreamCipherID else { throw damaged("unknown payload cipher") }
        let flags = try reader.read(UInt8.self, "flags")
        let known = VaultHeader.knownFlags
        guard flags & ~known == 0, flags & VaultHeader.keyslotsFlag != 0, flags & Self.signedFlag != 0,
              flags & VaultHeader.longKeysFlag == 0 || minor >= VaultHeader.longKeysMinorVersion else {
            throw damaged("flags 0x\(String(flags, radix: 16)) are not those of a signed vault")
        }
        let longKeys = flags & VaultHeader.longKeysFlag != 0
        _ = try reader.read(24, "stream header")
        let slotCount = Int(try reader.read(UInt8.self, "keyslot count"))
        guard (1...VaultHeader.maxKeyslots).contains(slotCount) else { throw damaged("keyslot count \(slotCount) is outside 1…16") }
        var keyslots: [Keyslot] = []
        for index in 0..<slotCount { keyslots.append(try Keyslot.parse(&reader, index: index, extended: true, longKeys: longKeys)) }
        self.keyslots = keyslots
        self.longKeys = longKeys
        let sealedLength = Int(try reader.read(UInt16.self, "keyslot metadata length"))
        guard MetadataBlock.isValidSealedLength(sealedLength) else { throw damaged("keyslot metadata length \(sealedLength) is not valid") }
        let nonceOffset = bytes.count - reader.remaining
        let nonce = Array(try reader.read(XChaCha20Poly1305.nonceLength, "keyslot metadata nonce"))
        metadata = MetadataBlock(nonce: nonce, sealed: Array(try reader.read(sealedLength, "keyslot metadata")))
        guard reader.remaining == 0 else { throw damaged("\(reader.remaining) bytes follow the keyslot metadata") }
        // The seal that follows is this prefix, its signature block (sized by the slots), the MAC and the checksum.
        let blockLength = 2 + XChaCha20Poly1305.nonceLength + SignatureBlock.expectedSealedLength(longKeys: longKeys, keyslots: keyslots)
        guard declared == bytes.count + blockLength + VaultHeader.trailerLength else {
            throw damaged("the declared header length \(declared) does not fit a prefix of \(bytes.count) bytes")
        }
        metadataAssociatedData = Array(bytes[..<nonceOffset])
    }

    /// The vault id of `bytes` (at offset 12), when they are long enough to hold one.
    package static func vaultID(of bytes: [UInt8]) -> [UInt8]? {
        bytes.count >= vaultIDOffset + 16 ? Array(bytes[vaultIDOffset..<vaultIDOffset + 16]) : nil
    }

    /// The slots' metadata when `fileKey` opens the metadata block (its subkey `vfslotmd`, the
    /// associated data every byte before the nonce); nil when it does not (another key). Throws
    /// when the block opens but its contents are damaged.
    package func openMetadata(fileKey: SecureBytes) throws(VaultError) -> [SlotMetadata]? {
        let key = Subkey.derive(from: fileKey, MetadataBlock.subkey)
        guard let plaintext = try? key.withUnsafeBytes({ (bytes) throws(XChaCha20Poly1305.Failure) in
            try XChaCha20Poly1305.open(metadata.sealed, key: bytes, nonce: metadata.nonce, associatedData: metadataAssociatedData)
        }) else { return nil }
        // The whole plaintext checked as an open checks it (entries, seal record, padding).
        return try plaintext.withUnsafeBytes { (raw) throws(VaultError) in try MetadataBlock.decode(Array(raw), slots: keyslots, signed: true, longKeys: longKeys).0 }
    }

    /// The id of `fileKey`: the first 16 bytes of its `vfkey-id` subkey (docs/FORMAT.md §4).
    package static func fileKeyID(of fileKey: SecureBytes) -> [UInt8] { VaultCodec.fileKeyID(of: fileKey) }
}
