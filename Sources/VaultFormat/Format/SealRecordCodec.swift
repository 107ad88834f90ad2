import SecureMemory
import VaultModel

// MARK: - The seal record in the metadata plaintext (docs/FORMAT.md "Signed seals")

/// Encodes and decodes the seal record a signed file keeps in its metadata plaintext, after the
/// slot entries: `01 ‖ ancestor count (1, 0…8) ‖ ancestor × count ‖ attestation × slot count ‖
/// tombstone count (u16, 0…256) ‖ tombstone × count`. Every length is checked against the bytes
/// present and its bound; any violation is damage (only a holder of the file key wrote it).
public enum SealRecordCodec {
    /// The record's version byte.
    static let version: UInt8 = 1

    /// Appends `record` (one attestation per slot, in slot order) to `writer`. With `longKeys`
    /// (flag 0x10) an attestation's key and signature lengths are u16s (an ssh-rsa adder's key and
    /// RSA-PSS signature are longer than 255 and 64 bytes).
    static func encode(_ record: SealRecord, into writer: inout ByteWriter, longKeys: Bool = false) {
        writer.append(version)
        writer.append(UInt8(record.ancestors.count))
        for ancestor in record.ancestors {
            writer.append(ancestor.generation)
            writer.append(ancestor.headerHash)
        }
        for attestation in record.attestations {
            writer.append(attestation.adder.type)
            if longKeys { writer.append(UInt16(attestation.adder.bytes.count)) } else { writer.append(UInt8(attestation.adder.bytes.count)) }
            writer.append(attestation.adder.bytes)
            if longKeys { writer.append(UInt16(attestation.signature.count)) }
            writer.append(attestation.signature)
        }
        writer.append(UInt16(record.tombstones.count))
        for tombstone in record.tombstones {
            writer.append(tombstone.removed)
            writer.append(tombstone.remover)
            writer.append(tombstone.generation)
        }
    }

    /// The encoded record's length in bytes.
    static func encodedLength(_ record: SealRecord, longKeys: Bool = false) -> Int {
        4 + record.ancestors.count * 24 + record.tombstones.count * 40
            + record.attestations.reduce(0) { $0 + (longKeys ? 5 + $1.signature.count : 66) + $1.adder.bytes.count }
    }

    /// The longest signature an attestation of version 2 holds: an 8,192-bit RSA-PSS signature.
    static let maxSignatureLength = SSHRSAPublicKey.maximumBits / 8

    /// Decodes a record of `slotCount` attestations from `reader`, leaving it after the record.
    static func decode(_ reader: inout ByteReader<ArraySlice<UInt8>>, slotCount: Int, longKeys: Bool = false) throws(VaultError) -> SealRecord {
        func damaged(_ why: String) -> VaultError { .headerDamaged("seal record: \(why)") }
        func read(_ count: Int, _ what: String) throws(VaultError) -> [UInt8] {
            guard let bytes = try? reader.read(count, what) else { throw damaged("truncated in the \(what)") }
            return Array(bytes)
        }
        func byte(_ what: String) throws(VaultError) -> UInt8 { try read(1, what)[0] }
        func u64(_ what: String) throws(VaultError) -> UInt64 {
            try read(8, what).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        func u16(_ what: String) throws(VaultError) -> Int {
            let bytes = try read(2, what)
            return Int(bytes[0]) | Int(bytes[1]) << 8
        }
        guard try byte("version") == version else { throw damaged("unknown record version") }
        let ancestorCount = Int(try byte("ancestor count"))
        guard ancestorCount <= SealRecord.maxAncestors else {
            throw damaged("\(ancestorCount) ancestors; a seal records at most \(SealRecord.maxAncestors)")
        }
        var record = SealRecord()
        for _ in 0..<ancestorCount {
            let generation = try u64("ancestor generation")
            record.ancestors.append(SealAncestor(generation: generation, headerHash: try read(16, "ancestor header hash")))
        }
        for position in 0..<slotCount {
            let type = try byte("attestation \(position) adder type")
            let length = longKeys ? try u16("attestation \(position) key length") : Int(try byte("attestation \(position) key length"))
            guard length > 0 else { throw damaged("attestation \(position) has an empty adder key") }
            let key = try read(length, "attestation \(position) adder key")
            var signatureLength = 64
            if longKeys {
                signatureLength = try u16("attestation \(position) signature length")
                guard (1...maxSignatureLength).contains(signatureLength) else {
                    throw damaged("attestation \(position) has a \(signatureLength)-byte signature (1 to \(maxSignatureLength))")
                }
            }
            let signature = try read(signatureLength, "attestation \(position) signature")
            record.attestations.append(SlotAttestation(adder: MemberKey(type: type, bytes: key), signature: signature))
        }
        let counted = try read(2, "tombstone count")
        let tombstoneCount = Int(counted[0]) | Int(counted[1]) << 8
        guard tombstoneCount <= SealRecord.maxTombstones else {
            throw damaged("\(tombstoneCount) tombstones; a seal keeps at most \(SealRecord.maxTombstones)")
        }
        for _ in 0..<tombstoneCount {
            let removed = try read(16, "tombstone key id"), remover = try read(16, "tombstone remover id")
            record.tombstones.append(Tombstone(removed: removed, remover: remover, generation: try u64("tombstone generation")))
        }
        return record
    }

    /// Decodes a whole metadata plaintext of a signed file: the slot entries, then the record,
    /// then zero padding. Public so that the fuzzer can reach it.
    public static func decodeMetadata(_ plaintext: [UInt8], slots: [Keyslot], longKeys: Bool = false) throws(VaultError) -> ([SlotMetadata], SealRecord) {
        let (entries, record) = try MetadataBlock.decode(plaintext, slots: slots, signed: true, longKeys: longKeys)
        return (entries, record!)
    }
}

// MARK: - The signature block

/// The encrypted signature block of a signed header: `length L (u16) ‖ nonce (24) ‖ sealed (L)`,
/// L exactly 400 (a 384-byte plaintext and the tag), after the metadata block.
public struct SignatureBlock: Equatable, Sendable {
    /// The XChaCha20-Poly1305 nonce, random at every seal.
    public var nonce: [UInt8]
    /// The 384-byte plaintext encrypted, then the 16-byte tag.
    public var sealed: [UInt8]

    /// The plaintext's fixed length: nothing in the clear says which kind of signer wrote it.
    public static let plaintextLength = 384
    /// The only sealed length: the plaintext and the tag.
    public static let sealedLength = plaintextLength + 16
    /// The subkey of the file key that seals the block: context `vfsealsg`, id 1.
    static let subkey = (context: "vfsealsg", id: UInt64(1))

    /// The block's bytes in the header: length, nonce, sealed.
    var encodedLength: Int { 2 + nonce.count + sealed.count }

    /// A block of `sealedLength` zero bytes: stands in while the payload is written, so that the
    /// header's length and the signed prefix are final before signing.
    static func placeholder(sealedLength: Int = sealedLength) -> SignatureBlock {
        SignatureBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: sealedLength))
    }

    /// Reads a block at the reader's position (after the metadata block), whose sealed length must
    /// be `sealedLength` exactly (`expectedSealedLength(longKeys:keyslots:)`).
    static func parse(_ reader: inout ByteReader<ArraySlice<UInt8>>, sealedLength expected: Int = sealedLength) throws(VaultError) -> SignatureBlock {
        guard reader.remaining >= 2 else { throw .headerDamaged("the signature block is missing (the header has flag 0x08)") }
        let length = Int(try reader.read(UInt16.self, "signature block length"))
        guard length == expected else { throw .headerDamaged("signature block length \(length) is not \(expected)") }
        let nonce = Array(try reader.read(XChaCha20Poly1305.nonceLength, "signature block nonce"))
        return SignatureBlock(nonce: nonce, sealed: Array(try reader.read(length, "signature block")))
    }

    // MARK: Sealing and opening

    /// Seals `contents` for `header` (whose signature block, a placeholder or not, has the final
    /// size): the associated data is every header byte before the block's nonce.
    static func seal(_ contents: SealSignatureBlock, for header: VaultHeader, fileKey: SecureBytes) throws(VaultError) -> SignatureBlock {
        let length = expectedSealedLength(longKeys: header.usesLongKeys, keyslots: header.keyslots)
        var placed = header
        placed.signatureBlock = placeholder(sealedLength: length)
        let plaintext = header.usesLongKeys ? try encodeLongKeys(contents, plaintextLength: length - 16) : try encode(contents)
        let nonce = randomBytes(count: XChaCha20Poly1305.nonceLength)
        let key = Subkey.derive(from: fileKey, subkey)
        let sealed = try! key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: placed.signatureAssociatedData()) }
        return SignatureBlock(nonce: nonce, sealed: sealed)
    }

    /// Opens the block of `header` (whose MAC has verified) and decodes it; any failure is damage.
    static func open(_ header: VaultHeader, fileKey: SecureBytes) throws(VaultError) -> SealSignatureBlock {
        guard let block = header.signatureBlock else { throw .headerDamaged("the signature block is missing (the header has flag 0x08)") }
        let key = Subkey.derive(from: fileKey, subkey)
        let plaintext: SecureBytes
        do {
            plaintext = try key.withUnsafeBytes { (bytes) throws(XChaCha20Poly1305.Failure) in
                try XChaCha20Poly1305.open(block.sealed, key: bytes, nonce: block.nonce, associatedData: header.signatureAssociatedData())
            }
        } catch {
            throw .headerDamaged("the signature block fails authentication")
        }
        let bytes = plaintext.withUnsafeBytes { Array($0) }
        return header.usesLongKeys ? try decodeLongKeys(bytes) : try decode(bytes)
    }

    // MARK: Plaintext

    /// `01 ‖ scheme ‖ signer position ‖ signer type ‖ key length ‖ key ‖ delegation length ‖
    /// delegation ‖ signature (64) ‖ zeros to 384`, where a delegation is `delegating scheme (1) ‖
    /// expiry (u64) ‖ signature (64)`, present exactly for scheme 3.
    public static func encode(_ block: SealSignatureBlock) throws(VaultError) -> [UInt8] {
        guard block.signerPosition >= 0, block.signerPosition < VaultHeader.maxKeyslots, block.signature.count == 64,
              (1...255).contains(block.signerKey.count), (block.delegation != nil) == (block.scheme == .delegated),
              block.delegation.map({ $0.signature.count == 64 }) ?? true else {
            throw .headerDamaged("the signer returned a malformed signature block")
        }
        var writer = ByteWriter(capacity: plaintextLength)
        writer.append(UInt8(1))
        writer.append(block.scheme.rawValue)
        writer.append(UInt8(block.signerPosition))
        writer.append(block.signerType)
        writer.append(UInt8(block.signerKey.count))
        writer.append(block.signerKey)
        if let delegation = block.delegation {
            writer.append(UInt8(73))
            writer.append(delegation.delegatingScheme.rawValue)
            writer.append(delegation.expiry)
            writer.append(delegation.signature)
        } else {
            writer.append(UInt8(0))
        }
        writer.append(block.signature)
        guard writer.bytes.count <= plaintextLength else { throw .headerDamaged("the signature block's contents exceed \(plaintextLength) bytes") }
        return writer.bytes + [UInt8](repeating: 0, count: plaintextLength - writer.bytes.count)
    }

    /// Decodes a 384-byte plaintext, checking every length, the scheme, and the zero padding.
    /// Public so that the fuzzer can reach it.
    public static func decode(_ plaintext: [UInt8]) throws(VaultError) -> SealSignatureBlock {
        func damaged(_ why: String) -> VaultError { .headerDamaged("signature block: \(why)") }
        guard plaintext.count == plaintextLength else { throw damaged("\(plaintext.count) bytes, not \(plaintextLength)") }
        var reader = ByteReader(plaintext[...], reading: .header)
        func read(_ count: Int, _ what: String) throws(VaultError) -> [UInt8] {
            guard let bytes = try? reader.read(count, what) else { throw damaged("truncated in the \(what)") }
            return Array(bytes)
        }
        guard try read(1, "version")[0] == 1 else { throw damaged("unknown version") }
        guard let scheme = SealScheme(rawValue: try read(1, "scheme")[0]) else { throw damaged("unknown signature scheme") }
        let position = Int(try read(1, "signer position")[0]), type = try read(1, "signer type")[0]
        guard position < VaultHeader.maxKeyslots else { throw damaged("signer position \(position); a vault holds at most \(VaultHeader.maxKeyslots) keyslots") }
        let keyLength = Int(try read(1, "key length")[0])
        guard keyLength > 0 else { throw damaged("empty signer key") }
        let key = try read(keyLength, "signer key")
        let delegationLength = Int(try read(1, "delegation length")[0])
        var delegation: SealDelegation? = nil
        switch (scheme, delegationLength) {
        case (.delegated, 73):
            let fields = try read(73, "delegation")
            guard let delegating = SealScheme(rawValue: fields[0]), delegating != .delegated else { throw damaged("bad delegating scheme") }
            let expiry = fields[1..<9].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            delegation = SealDelegation(delegatingScheme: delegating, expiry: expiry, signature: Array(fields[9...]))
        case (.delegated, _): throw damaged("a delegated signature without a 73-byte delegation")
        case (_, 0): break
        default: throw damaged("a delegation with scheme \(scheme.rawValue)")
        }
        let signature = try read(64, "signature")
        guard plaintext[(plaintext.count - reader.remaining)...].allSatisfy({ $0 == 0 }) else { throw damaged("non-zero padding") }
        return SealSignatureBlock(scheme: scheme, signerPosition: position, signerType: type, signerKey: key, delegation: delegation, signature: signature)
    }
}
