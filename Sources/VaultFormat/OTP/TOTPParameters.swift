import SecureMemory
import VaultModel

// MARK: - otpauth://totp/ URIs

/// What an `otpauth://totp/LABEL?secret=…&issuer=…&algorithm=…&digits=…&period=…` URI says.
///
/// The decoded seed lives in guarded memory. Parsing is strict about what decides the code
/// (secret, algorithm, digits, period: each at most once, each within its bounds) and lenient
/// about the rest (unknown parameters such as `image` are ignored, as authenticator apps do).
public struct TOTPParameters: Sendable {
    /// The longest URI read, in bytes: a 128-byte secret is 205 Base32 symbols.
    public static let maximumURILength = 4096
    /// The longest seed accepted, in bytes (RFC 4226 asks for at least 16; SHA-512 keys are 64).
    public static let maximumSecretLength = 128
    /// The digits a code may have.
    public static let digitRange = 6...10
    /// The periods accepted, in seconds.
    public static let periodRange = 1...3600

    /// The decoded seed.
    public let secret: SecureBytes
    /// The HMAC's hash (default SHA1).
    public let algorithm: OTPAlgorithm
    /// Digits per code (default 6).
    public let digits: Int
    /// Seconds per code (default 30).
    public let period: Int
    /// How the truncated HMAC becomes a code: decimal digits (RFC 4226), or Steam Guard's five
    /// characters (`encoder=steam`, as KeePassXC and Bitwarden write Steam's TOTP).
    public let encoder: OTPEncoder
    /// The `issuer` parameter, or the label's part before ':'.
    public let issuer: String?
    /// The label (account name), percent-decoded.
    public let label: String

    /// Parses `uri`; throws `OTPError` naming the faulty part, never the secret.
    public init(uri bytes: some Collection<UInt8>) throws(OTPError) {
        guard bytes.count <= Self.maximumURILength else { throw .malformedURI("it is longer than \(Self.maximumURILength) bytes") }
        var text = Array(bytes)
        defer { wipe(&text) }
        while let last = text.last, last == 0x0A || last == 0x0D || last == 0x20 { text.removeLast() }
        let scheme = Array("otpauth://".utf8)
        guard text.count >= scheme.count, zip(text, scheme).allSatisfy({ Self.lower($0) == $1 }) else {
            throw .malformedURI("it does not start with otpauth://")
        }
        var rest = text[scheme.count...]
        guard let slash = rest.firstIndex(of: 0x2F) else { throw .malformedURI("no type (totp) after otpauth://") }
        let type = String(decoding: rest[rest.startIndex..<slash].map(Self.lower), as: UTF8.self)
        guard type == "totp" else {
            if type == "hotp" { throw .unsupportedParameter("HOTP (counter-based) codes are not supported; only otpauth://totp/") }
            throw .malformedURI("unknown type; only otpauth://totp/ is supported")
        }
        rest = rest[(slash + 1)...]
        let question = rest.firstIndex(of: 0x3F) ?? rest.endIndex
        guard let label = Self.percentDecoded(rest[rest.startIndex..<question]) else { throw .malformedURI("the label has a bad %-escape") }
        self.label = label

        var values: [String: [UInt8]] = [:]
        defer { for key in values.keys { wipe(&values[key]!) } }
        if question < rest.endIndex {
            for pair in rest[(question + 1)...].split(separator: 0x26, omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: 0x3D) ?? pair.endIndex
                let key = String(decoding: pair[pair.startIndex..<equals].map(Self.lower), as: UTF8.self)
                guard ["secret", "algorithm", "digits", "period", "issuer", "encoder"].contains(key) else { continue }
                guard values[key] == nil else { throw .malformedURI("the parameter '\(key)' appears twice") }
                let raw = equals < pair.endIndex ? Array(pair[(equals + 1)...]) : []
                guard let decoded = Self.percentDecodedBytes(raw) else { throw .malformedURI("the parameter '\(key)' has a bad %-escape") }
                values[key] = decoded
            }
        }
        guard let secretText = values["secret"], !secretText.isEmpty else { throw .malformedURI("no secret parameter") }
        guard secretText.count <= Self.maximumSecretLength * 8 / 5 + 8 + 64 else {
            throw .invalidSecret("it is longer than \(Self.maximumSecretLength) bytes")
        }
        let secret = try Base32.decode(secretText)
        guard secret.count <= Self.maximumSecretLength else { throw .invalidSecret("it is longer than \(Self.maximumSecretLength) bytes") }
        self.secret = secret

        let algorithmName = values["algorithm"].map { String(decoding: $0, as: UTF8.self).uppercased() } ?? "SHA1"
        guard let algorithm = OTPAlgorithm(rawValue: algorithmName) else {
            throw .unsupportedParameter("algorithm must be SHA1, SHA256 or SHA512")
        }
        self.algorithm = algorithm
        // An encoder this build does not know is refused: computed as digits it would give a wrong code.
        let encoderName = values["encoder"].map { String(decoding: $0.map(Self.lower), as: UTF8.self) }
        switch encoderName {
        case nil: self.encoder = .decimal
        case "steam"?: self.encoder = .steam
        default: throw .unsupportedParameter("encoder must be steam (Steam Guard) when given")
        }
        if encoder == .steam {
            // Steam's codes are always five characters; another digits value is a different, unknown scheme.
            self.digits = try Self.number(values["digits"], name: "digits", default: 5, range: 5...5)
        } else {
            self.digits = try Self.number(values["digits"], name: "digits", default: 6, range: Self.digitRange)
        }
        self.period = try Self.number(values["period"], name: "period", default: 30, range: Self.periodRange)
        let issuer = values["issuer"].map { String(decoding: $0, as: UTF8.self) }
        self.issuer = issuer ?? label.firstIndex(of: ":").map { String(label[..<$0]) }
    }

    // MARK: Private

    private static func number(_ bytes: [UInt8]?, name: String, default value: Int, range: ClosedRange<Int>) throws(OTPError) -> Int {
        guard let bytes else { return value }
        let bounds = "\(range.lowerBound)–\(range.upperBound)"
        guard !bytes.isEmpty, bytes.count <= 9, bytes.allSatisfy({ (0x30...0x39).contains($0) }),
              let number = Int(String(decoding: bytes, as: UTF8.self)) else {
            throw .unsupportedParameter("\(name) must be a whole number in \(bounds)")
        }
        guard range.contains(number) else { throw .unsupportedParameter("\(name) is \(number); it must be in \(bounds)") }
        return number
    }

    private static func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    private static func percentDecoded(_ bytes: some Collection<UInt8>) -> String? {
        percentDecodedBytes(Array(bytes)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `%XX` escapes decoded; '+' left as it is (otpauth labels use %20 for spaces).
    private static func percentDecodedBytes(_ bytes: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25 {
                guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else { return nil }
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x37
        case 0x61...0x66: return byte - 0x57
        default: return nil
        }
    }
}

// MARK: - An entry's TOTP

extension Vault {
    /// The TOTP parameters of entry `name`: its `totp` field, else its `otp` field, else its value
    /// when that is an `otpauth://` URI. Throws `VaultError.entryNotFound`, `OTPError.noTOTP`, or
    /// the URI's own error.
    public func totpParameters(of name: String) throws -> TOTPParameters {
        for field in ["totp", "otp"] {
            let found: TOTPParameters? = try lookUp(.field(field), of: name) { bytes in
                try TOTPParameters(uri: bytes)
            } missing: { error in
                guard case .entryNotFound(let missing) = error, missing != name else { throw error }
                return nil
            }
            if let found { return found }
        }
        return try withValue(of: name) { bytes in
            let prefix = Array("otpauth://".utf8)
            guard bytes.count >= prefix.count, zip(bytes, prefix).allSatisfy({ ($0 | 0x20) == $1 || $0 == $1 }) else {
                throw OTPError.noTOTP(name)
            }
            return try TOTPParameters(uri: bytes)
        }
    }
}
