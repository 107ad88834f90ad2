import KDF
import SecureMemory
import VaultModel

// MARK: - An unlocked vault

/// A vault opened with its password: the decrypted contents plus what is needed to re-seal them.
///
/// Holds the file key in guarded memory, so re-sealing after an edit runs no KDF.
public final class UnlockedVault: @unchecked Sendable {
    // @unchecked: used by one thread at a time (one CLI command); never shared.

    /// The contents; edit them, then seal.
    public var vault: Vault
    /// The header as read (or as created).
    public internal(set) var header: VaultHeader
    /// The contents as they were when opened or last sealed, to skip rewriting unchanged vaults.
    public private(set) var sealedVault: Vault
    package let fileKey: SecureBytes
    /// The keyslot metadata of a format-1.1 vault, one entry per slot (nil in a 1.0 vault).
    public internal(set) var slotMetadata: [SlotMetadata]?
    /// The slot that opened the vault, and the credential (nil for a vault just created).
    public internal(set) var openedSlot: OpenedSlot?
    /// Set when the header changed (new keyslots or file key): seal even if the entries did not.
    var headerChanged = false
    /// Who signs the next seal of a signed vault: the opening slot's own secret (`SlotSealSigner`,
    /// set by the open), or the agent under a delegation (set by the command line). Nil: a signed
    /// vault cannot be sealed (`VaultError.noSealSigner`).
    public var sealSigner: (any SealSigner)?
    /// What the open of a signed vault established (every signature checked), then what the last
    /// seal wrote; nil for an unsigned vault.
    public internal(set) var sealEvidence: SealEvidence?
    /// What the next signed seal records beside the slots: parents, attestations, tombstones.
    var sealState = SealState()
    /// The HMAC of `fingerprint` under its subkey, keyed on first use and kept: `git textconv`
    /// fingerprints every value, and deriving the subkey into a guarded allocation per value (three
    /// system calls) and re-keying the HMAC made it 36× a `verify` at 10,000 entries.
    private lazy var fingerprintHMAC: PrekeyedHMACSHA256 = Subkey.derive(from: fileKey, Subkey.fingerprint)
        .withUnsafeBytes { PrekeyedHMACSHA256(key: $0) }

    init(vault: Vault, header: VaultHeader, fileKey: SecureBytes, metadata: [SlotMetadata]? = nil, opened: OpenedSlot? = nil) {
        self.vault = vault
        self.header = header
        self.sealedVault = vault
        self.fileKey = fileKey
        self.slotMetadata = metadata
        self.openedSlot = opened
    }

    /// Whether the contents differ from what is on disk.
    public var hasChanges: Bool { headerChanged || vault != sealedVault }

    /// Settings of the first password keyslot (v1 or 1.1).
    public var passwordKDF: KDFParameters? {
        for slot in header.keyslots {
            switch slot {
            case .password(let password): return password.kdf
            case .x25519(let x25519) where x25519.kind == .password: return x25519.kdf
            default: continue
            }
        }
        return nil
    }

    /// A keyed 16-byte fingerprint of the value of entry `name` (`field` nil) or of one of its
    /// fields, under a subkey of the file key: it changes when the bytes change but reveals
    /// nothing about them to whoever lacks the key.
    ///
    /// The HMAC covers the entry name and the field as well as the bytes, so equal values of two
    /// entries (or of two fields) get unrelated fingerprints and a diff does not show that a
    /// secret is reused. The same bytes in the same place always give the same fingerprint: a
    /// return to an earlier value shows. Input (docs/FORMAT.md §4), one encoding per triple:
    /// `u32 name length ‖ name ‖ 00` (the value) or `01 ‖ u32 field length ‖ field`, then
    /// `u64 value length ‖ value`, lengths little-endian.
    public func fingerprint(entry name: String, field: String?, value: [UInt8]) -> [UInt8] {
        let nameBytes = Array(name.utf8), fieldBytes = field.map { Array($0.utf8) }
        // One array of the exact size, owned here alone, so that wiping it wipes the only copy of the value.
        var input: [UInt8] = []
        input.reserveCapacity(4 + nameBytes.count + 1 + (fieldBytes.map { 4 + $0.count } ?? 0) + 8 + value.count)
        func appendLength<Length: FixedWidthInteger>(_ length: Length) { withUnsafeBytes(of: length.littleEndian) { input.append(contentsOf: $0) } }
        appendLength(UInt32(nameBytes.count))
        input += nameBytes
        if let fieldBytes {
            input.append(1)
            appendLength(UInt32(fieldBytes.count))
            input += fieldBytes
        } else {
            input.append(0)
        }
        appendLength(UInt64(value.count))
        input += value
        defer { wipe(&input) }
        return Array(input.withUnsafeBytes { fingerprintHMAC.authenticate($0) }.prefix(16))
    }

    /// Writes `fingerprint(entry:field:value:)` of bytes where they lie (the entry name's UTF-8, the
    /// field name's, the value) into `output`, 16 bytes: the same fingerprint, with the value hashed
    /// in place rather than copied, and nothing allocated for a name and field of up to 100 bytes
    /// (`git textconv` fingerprints every value of a vault; generic and closure-based versions of
    /// this spent more on metadata and exclusivity checks than on the hashing).
    public func fingerprint(entry name: UnsafeRawBufferPointer, field: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer,
                            into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == 16, "a fingerprint is 16 bytes")
        let hmac = fingerprintHMAC
        let headLength = 4 + name.count + 1 + (field.map { 4 + $0.count } ?? 0) + 8
        var tag: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tag) { tag in
            if headLength <= 128 {
                var small: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &small) { head in
                    let head = UnsafeMutableRawBufferPointer(rebasing: head[..<headLength])
                    Self.writeFingerprintHead(into: head, name: name, field: field, valueLength: value.count)
                    hmac.authenticate(UnsafeRawBufferPointer(head), value, into: tag)
                }
            } else {
                var head = [UInt8](repeating: 0, count: headLength)
                head.withUnsafeMutableBytes { head in
                    Self.writeFingerprintHead(into: head, name: name, field: field, valueLength: value.count)
                    hmac.authenticate(UnsafeRawBufferPointer(head), value, into: tag)
                }
            }
            output.copyMemory(from: UnsafeRawBufferPointer(rebasing: tag[..<16]))
            wipe(tag)
        }
    }

    /// The fingerprint's input before the value: `u32 name length ‖ name ‖ 00` or
    /// `… ‖ 01 ‖ u32 field length ‖ field`, then `u64 value length` (little-endian; docs/FORMAT.md §4).
    private static func writeFingerprintHead(into head: UnsafeMutableRawBufferPointer, name: UnsafeRawBufferPointer,
                                             field: UnsafeRawBufferPointer?, valueLength: Int) {
        let base = head.baseAddress!
        base.storeBytes(of: UInt32(name.count).littleEndian, as: UInt32.self)
        var offset = 4
        if let start = name.baseAddress { (base + offset).copyMemory(from: start, byteCount: name.count) }
        offset += name.count
        if let field {
            base.storeBytes(of: 1, toByteOffset: offset, as: UInt8.self)
            base.storeBytes(of: UInt32(field.count).littleEndian, toByteOffset: offset + 1, as: UInt32.self)
            offset += 5
            if let start = field.baseAddress { (base + offset).copyMemory(from: start, byteCount: field.count) }
            offset += field.count
        } else {
            base.storeBytes(of: 0, toByteOffset: offset, as: UInt8.self)
            offset += 1
        }
        base.storeBytes(of: UInt64(valueLength).littleEndian, toByteOffset: offset, as: UInt64.self)
        precondition(offset + 8 == head.count, "the fingerprint head's length")
    }

    /// Encodes, pads and encrypts the contents with a fresh stream header and the next generation;
    /// returns the whole file.
    public func seal() throws(VaultError) -> [UInt8] {
        try vault.trimTrashIfNeeded()
        let contentLength = try EntryCodec.encodedLength(vault)
        let output = SealedBytes(capacity: VaultHeader.maxLength + Payload.ciphertextLength(contentLength: contentLength))
        try seal(to: output, contentLength: contentLength)
        return output.bytes
    }

    /// Seals as `seal()` does, writing the file to `output` as it is produced: the header, then
    /// each 64 KiB chunk of ciphertext as soon as it is encrypted.
    package func seal(to output: any SealedOutput) throws(VaultError) {
        try vault.trimTrashIfNeeded()
        try seal(to: output, contentLength: try EntryCodec.encodedLength(vault))
    }

    private func seal(to output: any SealedOutput, contentLength: Int) throws(VaultError) {
        // No writer seals above the ceiling (docs/FORMAT.md §2.1): a copy up there would leave
        // every later seal nowhere to go, and a wrapped counter would look older than every copy.
        guard header.generation < Generations.ceiling else { throw .generationCeiling(generation: header.generation) }
        // The header's length field is 16 bits: a seal whose header would not fit writes nothing.
        try checkHeaderFits()
        if header.isSigned { return try sealSigned(to: output, contentLength: contentLength) }
        let streamKey = Subkey.derive(from: fileKey, Subkey.payloadStream)
        var stream = try Payload.SealingStream(key: streamKey, contentLength: contentLength, output: output)
        var next = nextHeader(streamHeader: stream.streamHeader)
        if next.usesKeyslots11 {
            // Sealed again at every seal: its associated data (generation, stream header) changed.
            next.metadata = try MetadataBlock.sealChecked(slotMetadata ?? [], for: next, fileKey: fileKey)
        }
        next.mac = VaultCodec.headerMAC(next, fileKey: fileKey)
        try output.write(next.encoded())
        try EntryCodec.encode(vault, into: &stream)
        try stream.finish()
        header = next
        sealedVault = vault
        headerChanged = false
    }

    /// The next seal's header before its metadata and MAC: the next generation, `streamHeader`,
    /// and the history flag as the contents say.
    func nextHeader(streamHeader: [UInt8]) -> VaultHeader {
        var next = header
        next.generation += 1
        // The minor version and flags stay as they are (docs/FORMAT.md §8): only a command that
        // adds a newer feature changes them, so teammates on an older release keep working.
        next.streamHeader = streamHeader
        // Long keys (flag 0x10) follow the slots: set with the first key that needs them.
        updateLongKeys(of: &next)
        // History is the one feature whose bit follows the contents: set when the vault keeps
        // history (which only a command that asks for it turns on), cleared when it was turned off.
        if vault.keepsHistory {
            next.flags |= VaultHeader.historyFlag
            next.minorVersion = max(next.minorVersion, VaultHeader.historyMinorVersion)
        } else if next.keepsHistory {
            next.flags &= ~VaultHeader.historyFlag
            if next.minorVersion == VaultHeader.historyMinorVersion {
                next.minorVersion = next.usesKeyslots11 ? VaultHeader.keyslotsMinorVersion : VaultHeader.minorVersion
            }
        }
        return next
    }

    /// Marks the contents as written by a seal whose header is `written`.
    func didSeal(_ written: VaultHeader) {
        header = written
        sealedVault = vault
        headerChanged = false
    }

    /// Makes the next seal's generation greater than `generation` (after a merge of two lines of history).
    public func advanceGeneration(past generation: UInt64) {
        header.generation = max(header.generation, generation)
    }

    /// Makes the next seal write `generation` + 1, whatever the header's own generation: a merge
    /// or `--allow-rollback` that ignores an implausible generation (docs/FORMAT.md §2.1).
    public func rebaseGeneration(on generation: UInt64) {
        header.generation = generation
    }

    /// Replaces every keyslot with one for `newPassword` and rotates the file key.
    ///
    /// The next seal re-encrypts everything under the new key, so an old copy
    /// of the file opened with the old password never yields the new key.
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters) throws -> UnlockedVault {
        let newKey = SecureBytes(copying: randomBytes(count: 32))
        let slot = try VaultCodec.makePasswordSlot(password: newPassword, kdf: kdf, fileKey: newKey, vaultID: header.vaultID)
        let newHeader = VaultHeader(vaultID: header.vaultID, generation: header.generation,
                                    streamHeader: header.streamHeader, keyslots: [.password(slot)])
        let rotated = UnlockedVault(vault: vault, header: newHeader, fileKey: newKey)
        rotated.headerChanged = true
        return rotated
    }
}
