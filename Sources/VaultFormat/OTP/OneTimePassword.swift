import CLibCrypto
import SecureMemory

// MARK: - HOTP and TOTP (RFC 4226, RFC 6238)

/// The hash under a TOTP's HMAC.
public enum OTPAlgorithm: String, Sendable, Equatable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha512 = "SHA512"
}

/// How a TOTP's truncated HMAC becomes the code shown.
public enum OTPEncoder: Sendable, Equatable {
    /// Decimal digits, zero-padded (RFC 4226 §5.3).
    case decimal
    /// Steam Guard: the 31-bit truncated value written as five characters of
    /// `23456789BCDFGHJKMNPQRTVWXY`, least significant first (HMAC-SHA1, period 30).
    case steam
}

/// One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238) over OpenSSL's `HMAC()`, which
/// takes a key of any length (seeds are 10–64 bytes; libsodium has no SHA-1 and its one-shot
/// HMACs take 32-byte keys).
public enum OneTimePassword {
    /// The HOTP code of `counter`: dynamic truncation of the HMAC, modulo 10^`digits`, zero-padded.
    public static func hotp(secret: SecureBytes, counter: UInt64, digits: Int, algorithm: OTPAlgorithm = .sha1, encoder: OTPEncoder = .decimal) -> String {
        var message = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { message[index] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * index)) }
        var mac = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        defer { wipe(&mac) }
        var macLength: UInt32 = 0
        let digest: OpaquePointer? = switch algorithm {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
        secret.withUnsafeBytes { key in
            _ = HMAC(digest, key.baseAddress, Int32(key.count), message, message.count, &mac, &macLength)
        }
        precondition(macLength >= 20, "OpenSSL's HMAC failed")
        let offset = Int(mac[Int(macLength) - 1] & 0x0F)
        let truncated = (UInt64(mac[offset] & 0x7F) << 24) | (UInt64(mac[offset + 1]) << 16)
            | (UInt64(mac[offset + 2]) << 8) | UInt64(mac[offset + 3])
        if encoder == .steam { return steamCode(truncated, length: digits) }
        var modulus: UInt64 = 1
        for _ in 0..<digits { modulus *= 10 }
        let code = String(truncated % modulus)
        return String(repeating: "0", count: max(0, digits - code.count)) + code
    }

    /// The TOTP code of `parameters` at `time` (seconds since 1970), and the seconds it stays valid.
    public static func totp(_ parameters: TOTPParameters, at time: Int64) throws(OTPError) -> (code: String, secondsLeft: Int) {
        guard time >= 0 else { throw .invalidTime(time) }
        let period = Int64(parameters.period)
        let code = hotp(secret: parameters.secret, counter: UInt64(time / period), digits: parameters.digits,
                        algorithm: parameters.algorithm, encoder: parameters.encoder)
        return (code, Int(period - time % period))
    }

    /// Steam Guard's alphabet: 26 characters without the ones easily confused.
    private static let steamAlphabet = Array("23456789BCDFGHJKMNPQRTVWXY".utf8)

    /// `value` written in Steam's alphabet, `length` characters, least significant first.
    private static func steamCode(_ value: UInt64, length: Int) -> String {
        var value = value, code: [UInt8] = []
        for _ in 0..<length {
            code.append(steamAlphabet[Int(value % 26)])
            value /= 26
        }
        return String(decoding: code, as: UTF8.self)
    }
}
