import VaultModel

// MARK: - The signature block of a file with long keys (format 1.4, flag 0x10)

extension SignatureBlock {
    /// The version byte of the plaintext with u16 lengths.
    static let longKeysVersion: UInt8 = 2
    /// The smallest plaintext of version 2.
    static let longKeysMinimumPlaintext = 512
    /// The longest signature or delegation signature version 2 holds: an 8,192-bit RSA-PSS signature.
    static let maxSignatureLength = SSHRSAPublicKey.maximumBits / 8

    /// The sealed length of the signature block of a header with these flags and slots: 400 without
    /// flag 0x10; with it, a plaintext of the smallest multiple of 256 that is at least 512 and at
    /// least 2k + 64, k the longest ssh-rsa slot body (its modulus in bytes), plus the 16-byte tag.
    /// A function of the slots alone, never of the signer: nothing in the clear says who signed.
    public static func expectedSealedLength(longKeys: Bool, keyslots: [Keyslot]) -> Int {
        guard longKeys else { return sealedLength }
        let longest = keyslots.reduce(0) { longest, slot in
            if case .sshRSA(let rsa) = slot { return max(longest, rsa.ciphertext.count) }
            return longest
        }
        let needed = max(longKeysMinimumPlaintext, 2 * longest + 64)
        return (needed + 255) / 256 * 256 + 16
    }

    /// `02 ‖ scheme ‖ signer position ‖ signer type ‖ u16 key length ‖ key ‖ u16 delegation length
    /// ‖ delegation ‖ u16 signature length ‖ signature ‖ zeros to plaintextLength`, where a
    /// delegation is `delegating scheme (1) ‖ expiry (u64) ‖ u16 signature length ‖ signature`,
    /// present exactly for scheme 3.
    public static func encodeLongKeys(_ block: SealSignatureBlock, plaintextLength: Int) throws(VaultError) -> [UInt8] {
        let signatures = [block.signature.count] + (block.delegation.map { [$0.signature.count] } ?? [])
        guard block.signerPosition >= 0, block.signerPosition < VaultHeader.maxKeyslots, !block.signerKey.isEmpty,
              block.signerKey.count <= Int(UInt16.max), signatures.allSatisfy({ (1...maxSignatureLength).contains($0) }),
              (block.delegation != nil) == (block.scheme == .delegated) else {
            throw .headerDamaged("the signer returned a malformed signature block")
        }
        var writer = ByteWriter(capacity: plaintextLength)
        writer.append(longKeysVersion)
        writer.append(block.scheme.rawValue)
        writer.append(UInt8(block.signerPosition))
        writer.append(block.signerType)
        writer.append(UInt16(block.signerKey.count))
        writer.append(block.signerKey)
        if let delegation = block.delegation {
            writer.append(UInt16(11 + delegation.signature.count))
            writer.append(delegation.delegatingScheme.rawValue)
            writer.append(delegation.expiry)
            writer.append(UInt16(delegation.signature.count))
            writer.append(delegation.signature)
        } else {
            writer.append(UInt16(0))
        }
        writer.append(UInt16(block.signature.count))
        writer.append(block.signature)
        guard writer.bytes.count <= plaintextLength else {
            throw .headerDamaged("the signature block's contents exceed \(plaintextLength) bytes")
        }
        return writer.bytes + [UInt8](repeating: 0, count: plaintextLength - writer.bytes.count)
    }

    /// Decodes a plaintext of version 2, checking every length against the bytes present and its
    /// bound, the scheme, and the zero padding. Public so that the fuzzer can reach it.
    public static func decodeLongKeys(_ plaintext: [UInt8]) throws(VaultError) -> SealSignatureBlock {
        func damaged(_ why: String) -> VaultError { .headerDamaged("signature block: \(why)") }
        guard plaintext.count >= longKeysMinimumPlaintext, plaintext.count % 256 == 0 else {
            throw damaged("\(plaintext.count) bytes, not a multiple of 256 from \(longKeysMinimumPlaintext)")
        }
        var reader = ByteReader(plaintext[...], reading: .header)
        func read(_ count: Int, _ what: String) throws(VaultError) -> [UInt8] {
            guard let bytes = try? reader.read(count, what) else { throw damaged("truncated in the \(what)") }
            return Array(bytes)
        }
        func u16(_ what: String) throws(VaultError) -> Int {
            let bytes = try read(2, what)
            return Int(bytes[0]) | Int(bytes[1]) << 8
        }
        func signature(_ what: String) throws(VaultError) -> [UInt8] {
            let length = try u16("\(what) length")
            guard (1...maxSignatureLength).contains(length) else { throw damaged("a \(length)-byte \(what) (1 to \(maxSignatureLength))") }
            return try read(length, what)
        }
        guard try read(1, "version")[0] == longKeysVersion else { throw damaged("unknown version (a header with flag 0x10 holds version 2)") }
        guard let scheme = SealScheme(rawValue: try read(1, "scheme")[0]) else { throw damaged("unknown signature scheme") }
        let position = Int(try read(1, "signer position")[0]), type = try read(1, "signer type")[0]
        guard position < VaultHeader.maxKeyslots else { throw damaged("signer position \(position); a vault holds at most \(VaultHeader.maxKeyslots) keyslots") }
        let keyLength = try u16("key length")
        guard keyLength > 0 else { throw damaged("empty signer key") }
        let key = try read(keyLength, "signer key")
        let delegationLength = try u16("delegation length")
        var delegation: SealDelegation? = nil
        switch (scheme, delegationLength) {
        case (.delegated, 0): throw damaged("a delegated signature without a delegation")
        case (.delegated, _):
            let start = reader.remaining
            guard let delegating = SealScheme(rawValue: try read(1, "delegating scheme")[0]), delegating != .delegated else {
                throw damaged("bad delegating scheme")
            }
            let expiry = try read(8, "delegation expiry").reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let signed = try signature("delegation signature")
            guard start - reader.remaining == delegationLength else { throw damaged("the delegation's length does not match its contents") }
            delegation = SealDelegation(delegatingScheme: delegating, expiry: expiry, signature: signed)
        case (_, 0): break
        default: throw damaged("a delegation with scheme \(scheme.rawValue)")
        }
        let signed = try signature("signature")
        guard plaintext[(plaintext.count - reader.remaining)...].allSatisfy({ $0 == 0 }) else { throw damaged("non-zero padding") }
        return SealSignatureBlock(scheme: scheme, signerPosition: position, signerType: type, signerKey: key, delegation: delegation, signature: signed)
    }
}
