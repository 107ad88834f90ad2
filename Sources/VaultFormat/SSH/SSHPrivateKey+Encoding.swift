import CSodium
import SecureMemory

// MARK: - Writing the key back

extension SSHPrivateKey {
    /// The key as an unencrypted OpenSSH private key file, in guarded memory: the armor
    /// `-----BEGIN OPENSSH PRIVATE KEY-----`, Base64 in lines of 70 characters, as ssh-keygen
    /// writes it (cipher and KDF "none", one key, random check integers, padding 1 2 3 … to 8
    /// bytes). `SSHKeyFile.read` and ssh-keygen read it back to the same key and comment.
    public func openSSHText() throws(SSHKeyError) -> SecureBytes {
        var section = try privateSection()
        defer { wipe(&section) }
        var blob: [UInt8] = []
        blob.reserveCapacity(SSHEd25519Identity.magic.count + 64 + publicKey.wireBytes.count + section.count)
        defer { wipe(&blob) }
        blob += SSHEd25519Identity.magic
        appendString(&blob, Array("none".utf8))
        appendString(&blob, Array("none".utf8))
        appendString(&blob, [])
        appendUInt32(&blob, 1)
        appendString(&blob, publicKey.wireBytes)
        appendString(&blob, section)
        return Self.armor(blob)
    }

    /// `check ‖ check ‖ key ‖ string comment ‖ padding`, the unencrypted private section (to wipe).
    func privateSection() throws(SSHKeyError) -> [UInt8] {
        var section: [UInt8] = []
        section.reserveCapacity(publicKey.wireBytes.count * 4 + comment.utf8.count + 64)
        let check = randomBytes(count: 4)
        section += check + check
        appendString(&section, Array(type.rawValue.utf8))
        switch secret {
        case .ed25519(let secretKey):
            appendString(&section, Array(publicKey.wireBytes.suffix(32)))
            secretKey.withUnsafeBytes { appendString(&section, $0) }
        case .ecdsa(let parts):
            appendString(&section, Array(type.curve!.sshName.utf8))
            appendString(&section, parts.point)
            parts.scalar.withUnsafeBytes { appendMPInt(&section, $0) }
        case .rsa(let numbers):
            appendMPInt(&section, numbers.n)
            appendMPInt(&section, SSHRSAPublicKey.exponent)
            for number in [numbers.d, numbers.iqmp, numbers.p, numbers.q] { number.withUnsafeBytes { appendMPInt(&section, $0) } }
        }
        appendString(&section, Array(comment.utf8))
        var pad: UInt8 = 1
        while section.count % 8 != 0 { section.append(pad); pad += 1 }
        return section
    }

    /// `blob` armored as an OpenSSH private key file, in guarded memory.
    static func armor(_ blob: [UInt8]) -> SecureBytes {
        ensureSodiumInitialised()
        let variant = sodium_base64_VARIANT_ORIGINAL
        let encodedLength = sodium_base64_encoded_len(blob.count, variant)
        let encoded = SecureBytes(count: encodedLength)
        encoded.withUnsafeMutableBytes { out in
            _ = sodium_bin2base64(out.baseAddress!.assumingMemoryBound(to: CChar.self), encodedLength, blob, blob.count, variant)
        }
        let textLength = encodedLength - 1
        let head = Array((SSHKeyFile.begin + "\n").utf8), tail = Array((SSHKeyFile.end + "\n").utf8)
        let lineCount = (textLength + 69) / 70
        let output = SecureBytes(count: head.count + textLength + lineCount + tail.count)
        output.withUnsafeMutableBytes { out in
            encoded.withUnsafeBytes { text in
                var at = 0
                for byte in head { out[at] = byte; at += 1 }
                for start in stride(from: 0, to: textLength, by: 70) {
                    for index in start..<min(start + 70, textLength) { out[at] = text[index]; at += 1 }
                    out[at] = 0x0A; at += 1
                }
                for byte in tail { out[at] = byte; at += 1 }
            }
        }
        return output
    }
}

// MARK: - SSH wire writing

/// Appends a big-endian `uint32`.
func appendUInt32(_ out: inout [UInt8], _ value: UInt32) {
    out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
}

/// Appends an SSH `string` (length, then the bytes).
func appendString(_ out: inout [UInt8], _ bytes: some Collection<UInt8>) {
    appendUInt32(&out, UInt32(bytes.count))
    out += bytes
}

/// Appends the positive magnitude `magnitude` as a canonical SSH `mpint` (leading zero bytes
/// dropped; a zero byte first when the top bit is set).
func appendMPInt(_ out: inout [UInt8], _ magnitude: some Collection<UInt8>) {
    let trimmed = magnitude.drop { $0 == 0 }
    let padded = (trimmed.first ?? 0) & 0x80 != 0
    appendUInt32(&out, UInt32(trimmed.count + (padded ? 1 : 0)))
    if padded { out.append(0) }
    out += trimmed
}
