import CSodium
import SecureMemory
import VaultModel

// MARK: - What the header says about each slot, encrypted

/// One keyslot's metadata: who it is for. Kept in the header's encrypted metadata block
/// (docs/FORMAT.md §3.8), so that only someone who can open the vault can read it.
public struct SlotMetadata: Equatable, Sendable {
    /// The slot's type byte (the metadata repeats it; a mismatch is damage).
    public var type: UInt8
    /// A label for people ("alice", "CI"); at most `maxLabelLength` bytes, no control characters.
    public var label: String
    /// The key the slot is wrapped to (32 bytes, or an ssh-ed25519 wire key); empty for a v1 password slot.
    public var publicKey: [UInt8]
    /// When the slot was added, in milliseconds since the Unix epoch.
    public var added: Int64

    /// The longest label, in UTF-8 bytes.
    public static let maxLabelLength = 64

    /// Whether `label` may be a slot label: at most 64 bytes of UTF-8 without control characters.
    public static func isValidLabel(_ label: String) -> Bool {
        label.utf8.count <= maxLabelLength && !label.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

/// The encrypted metadata block of a format-1.1 header: `length (2) ‖ nonce (24) ‖ sealed (length)`.
public struct MetadataBlock: Equatable, Sendable {
    /// The XChaCha20-Poly1305 nonce, random at every seal.
    public var nonce: [UInt8]
    /// The padded plaintext encrypted, then the 16-byte tag.
    public var sealed: [UInt8]

    /// Plaintexts are padded to a multiple of this, so label lengths stay hidden.
    static let paddingUnit = 256
    /// The subkey of the file key that seals the block: context `vfslotmd`, id 1.
    static let subkey = (context: "vfslotmd", id: UInt64(1))
    /// The plaintext encoding's version byte.
    static let version: UInt8 = 1
    /// The version byte of format 1.4's long keys (flag 0x10): each key's length is a u16.
    static let longKeysVersion: UInt8 = 2
    /// The longest key an entry of version 1 holds (its length is one byte).
    public static let shortKeyLimit = 255

    /// Whether `length` (of `sealed`) can be a block: a whole number of padding units and a tag.
    static func isValidSealedLength(_ length: Int) -> Bool {
        length >= paddingUnit + 16 && (length - 16) % paddingUnit == 0
    }

    // MARK: Sealing and opening

    /// Seals `entries` (one per slot of `header`, in order) for `header`: the associated data is
    /// every header byte before the nonce, with this block's length in place.
    /// A signed header's block also holds `record` after the entries.
    static func sealChecked(_ entries: [SlotMetadata], for header: VaultHeader, fileKey: SecureBytes,
                            record: SealRecord? = nil) throws(VaultError) -> MetadataBlock {
        guard entries.count == header.keyslots.count else {
            throw .headerDamaged("the keyslot metadata has \(entries.count) entries for \(header.keyslots.count) keyslots")
        }
        if let record, record.attestations.count != entries.count {
            throw .headerDamaged("the seal record has \(record.attestations.count) attestations for \(entries.count) keyslots")
        }
        var plaintext = encode(entries, slots: header.keyslots, record: record, longKeys: header.usesLongKeys)
        defer { wipe(&plaintext) }
        var placeholder = header
        placeholder.metadata = MetadataBlock(nonce: [UInt8](repeating: 0, count: 24), sealed: [UInt8](repeating: 0, count: plaintext.count + 16))
        let nonce = randomBytes(count: XChaCha20Poly1305.nonceLength)
        let key = Subkey.derive(from: fileKey, subkey)
        // A 32-byte subkey and a 24-byte nonce: the AEAD's only refusals (sizes) cannot happen.
        let sealed = try! key.withUnsafeBytes { try XChaCha20Poly1305.seal(plaintext, key: $0, nonce: nonce, associatedData: placeholder.metadataAssociatedData()) }
        return MetadataBlock(nonce: nonce, sealed: sealed)
    }

    /// Opens the block of `header` (whose MAC has been verified) and checks it against the slots;
    /// the seal record too in a signed header (nil otherwise).
    /// Any failure is damage: only a holder of the file key could have written it.
    static func open(_ header: VaultHeader, fileKey: SecureBytes) throws(VaultError) -> ([SlotMetadata], SealRecord?) {
        guard let block = header.metadata else { throw .headerDamaged("the keyslot metadata is missing") }
        let key = Subkey.derive(from: fileKey, subkey)
        let plaintext: SecureBytes
        do {
            plaintext = try key.withUnsafeBytes { (bytes) throws(XChaCha20Poly1305.Failure) in
                try XChaCha20Poly1305.open(block.sealed, key: bytes, nonce: block.nonce, associatedData: header.metadataAssociatedData())
            }
        } catch {
            throw .headerDamaged("the keyslot metadata fails authentication")
        }
        return try decode(plaintext.withUnsafeBytes { Array($0) }, slots: header.keyslots, signed: header.isSigned, longKeys: header.usesLongKeys)
    }

    // MARK: Plaintext

    /// `01 ‖ count (1) ‖ entry* ‖ zeros` to a multiple of 256 bytes, where
    /// `entry = position (1) ‖ BLAKE2b-256 of the slot's bytes (32) ‖ type (1) ‖ added (8, signed)
    /// ‖ label length (1) ‖ label ‖ key length (1) ‖ key`; with `longKeys` (flag 0x10) the version
    /// byte is `02` and the key length a u16.
    /// With `record` (a signed header), the seal record follows the entries (`SealRecordCodec`).
    static func encode(_ entries: [SlotMetadata], slots: [Keyslot], record: SealRecord? = nil, longKeys: Bool = false) -> [UInt8] {
        precondition(entries.count == slots.count, "one metadata entry per slot")
        precondition(longKeys || entries.allSatisfy { $0.publicKey.count <= shortKeyLimit }, "a long key needs flag 0x10")
        var writer = ByteWriter()
        writer.append(longKeys ? longKeysVersion : version)
        writer.append(UInt8(entries.count))
        for (position, (entry, slot)) in zip(entries, slots).enumerated() {
            writer.append(UInt8(position))
            writer.append(slotHash(slot))
            writer.append(entry.type)
            writer.append(UInt64(bitPattern: entry.added))
            writer.append(UInt8(entry.label.utf8.count))
            writer.append(Array(entry.label.utf8))
            if longKeys { writer.append(UInt16(entry.publicKey.count)) } else { writer.append(UInt8(entry.publicKey.count)) }
            writer.append(entry.publicKey)
        }
        if let record { SealRecordCodec.encode(record, into: &writer, longKeys: longKeys) }
        var bytes = writer.bytes
        let padded = max(paddingUnit, (bytes.count + paddingUnit - 1) / paddingUnit * paddingUnit)
        bytes += [UInt8](repeating: 0, count: padded - bytes.count)
        return bytes
    }

    /// Decodes a plaintext and checks each entry against its slot: the count, each position, the
    /// hash of the slot's bytes and its type; labels within the rules; zero padding. Public so
    /// that the fuzzer can reach it.
    public static func decode(_ plaintext: [UInt8], slots: [Keyslot], longKeys: Bool = false) throws(VaultError) -> [SlotMetadata] {
        try decode(plaintext, slots: slots, signed: false, longKeys: longKeys).0
    }

    /// Decodes as `decode(_:slots:)`; with `signed`, the seal record after the entries too. With
    /// `longKeys` (flag 0x10) the version must be 2 and key lengths are u16s; without, version 1.
    static func decode(_ plaintext: [UInt8], slots: [Keyslot], signed: Bool, longKeys: Bool = false) throws(VaultError) -> ([SlotMetadata], SealRecord?) {
        func damaged(_ why: String) -> VaultError { .headerDamaged("keyslot metadata: \(why)") }
        var reader = ByteReader(plaintext[...], reading: .header)
        guard let version = try? reader.read(UInt8.self, "metadata version") else { throw damaged("unknown encoding version") }
        // One encoding per file: version 2 exactly when the header has flag 0x10.
        guard version == (longKeys ? longKeysVersion : Self.version) else {
            throw damaged(version == longKeysVersion ? "version 2 (long keys) in a header without flag 0x10"
                          : version == Self.version && longKeys ? "version 1 in a header with flag 0x10 (long keys)" : "unknown encoding version")
        }
        guard let count = try? reader.read(UInt8.self, "metadata count"), Int(count) == slots.count else {
            throw damaged("the number of entries differs from the number of keyslots")
        }
        var entries: [SlotMetadata] = []
        for (position, slot) in slots.enumerated() {
            let index: UInt8, hash: ArraySlice<UInt8>, type: UInt8, added: UInt64, label: ArraySlice<UInt8>, key: ArraySlice<UInt8>
            do throws(VaultError) {
                index = try reader.read(UInt8.self, "position")
                hash = try reader.read(32, "slot hash")
                type = try reader.read(UInt8.self, "type")
                added = try reader.read(UInt64.self, "time")
                label = try reader.read(Int(try reader.read(UInt8.self, "label length")), "label")
                let keyLength = longKeys ? Int(try reader.read(UInt16.self, "key length")) : Int(try reader.read(UInt8.self, "key length"))
                key = try reader.read(keyLength, "key")
            } catch {
                throw damaged("entry \(position) is truncated")
            }
            guard Int(index) == position else { throw damaged("entry \(position) names keyslot \(index)") }
            guard constantTimeEqual(slotHash(slot), hash) else { throw damaged("entry \(position) does not match keyslot \(position)'s bytes") }
            guard type == slot.typeByte else { throw damaged("entry \(position) gives another type than keyslot \(position)") }
            guard let text = String(validating: label, as: UTF8.self), SlotMetadata.isValidLabel(text) else {
                throw damaged("entry \(position) has an invalid label")
            }
            // A v1 password slot wraps with its raw KDF output: it has no public key, and one
            // encoding of the metadata means an empty one (FORMAT.md §3.8).
            if case .password = slot, !key.isEmpty {
                throw damaged("entry \(position) holds a \(key.count)-byte public key; a v1 password slot has none")
            }
            // A plugin slot's key names the program every rotation runs (§3.12): checked here, at every open.
            if case .plugin = slot, !AgePluginRecipient.isValidStored(key) {
                throw damaged("entry \(position) holds no valid age plugin recipient (age1NAME1…) for plugin keyslot \(position)")
            }
            entries.append(SlotMetadata(type: type, label: text, publicKey: Array(key), added: Int64(bitPattern: added)))
        }
        let record = signed ? try SealRecordCodec.decode(&reader, slotCount: slots.count, longKeys: longKeys) : nil
        guard plaintext[(plaintext.count - reader.remaining)...].allSatisfy({ $0 == 0 }) else { throw damaged("non-zero padding") }
        guard plaintext.count % paddingUnit == 0 else { throw damaged("the padding does not match") }
        return (entries, record)
    }

    /// BLAKE2b-256 of a keyslot's encoded bytes (type ‖ length ‖ body).
    static func slotHash(_ slot: Keyslot) -> [UInt8] {
        let bytes = slot.encoded()
        return Checksum.blake2b256(bytes[...])
    }
}
