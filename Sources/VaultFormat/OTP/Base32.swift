import SecureMemory

// MARK: - Strict Base32 (RFC 4648 §6)

/// Decodes the Base32 of TOTP secrets, strictly: the RFC 4648 alphabet in either case, spaces
/// ignored (authenticator apps show secrets in groups), padding optional but exact when present,
/// and nothing else. Leftover bits must be zero, so one secret has one spelling.
enum Base32 {
    /// Decodes `text` into guarded memory; throws `OTPError.invalidSecret` naming the fault, never the text.
    static func decode(_ text: some Collection<UInt8>) throws(OTPError) -> SecureBytes {
        var symbols = [UInt8](repeating: 0, count: text.count)
        defer { wipe(&symbols) }
        var count = 0, padding = 0
        for byte in text {
            if byte == 0x20 { continue }
            if byte == 0x3D { padding += 1; continue }  // '='
            guard padding == 0 else { throw .invalidSecret("'=' padding is only allowed at the end") }
            guard let value = symbolValue(byte) else { throw .invalidSecret("a character outside the Base32 alphabet (A–Z, 2–7)") }
            symbols[count] = value
            count += 1
        }
        guard count > 0 else { throw .invalidSecret("it is empty") }
        let remainder = count % 8
        // 8 symbols hold 5 bytes; a final group of 2, 4, 5 or 7 symbols holds 1–4 bytes.
        guard [0, 2, 4, 5, 7].contains(remainder) else { throw .invalidSecret("its length (\(count) symbols) is not a whole number of bytes") }
        if padding > 0 {
            guard remainder != 0, padding == 8 - remainder else { throw .invalidSecret("the '=' padding does not match the length") }
        }
        let byteCount = count * 5 / 8
        let output = SecureBytes(count: byteCount)
        var leftover: UInt64 = 0
        var leftoverOK = true
        output.withUnsafeMutableBytes { out in
            var buffer: UInt64 = 0, bits = 0, index = 0
            for position in 0..<count {
                buffer = (buffer << 5) | UInt64(symbols[position])
                bits += 5
                if bits >= 8 {
                    bits -= 8
                    out[index] = UInt8(truncatingIfNeeded: buffer >> UInt64(bits))
                    index += 1
                    buffer &= (1 << UInt64(bits)) - 1
                }
            }
            leftover = buffer
            leftoverOK = leftover == 0
            buffer = 0
        }
        guard leftoverOK else { throw .invalidSecret("its last symbol has bits set beyond the last byte") }
        return output
    }

    private static func symbolValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5A: return byte - 0x41        // A–Z
        case 0x61...0x7A: return byte - 0x61        // a–z
        case 0x32...0x37: return byte - 0x32 + 26   // 2–7
        default: return nil
        }
    }
}
