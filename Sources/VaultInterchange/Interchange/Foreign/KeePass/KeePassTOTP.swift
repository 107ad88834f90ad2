import FoundationEssentials

// MARK: - KeePass's TOTP attributes

/// The TOTP of a KeePass entry, from whichever attributes hold it: KeePassXC's `otp` (an
/// otpauth:// URI), KeePass 2.47+'s `TimeOtp-*` attributes, or KeePassXC's older `TOTP Seed` and
/// `TOTP Settings`. Gives the TOTP as `ForeignItem.totp` takes it and the keys it was made from
/// (which then become no fields); nil when the entry has none, or when its attributes do not
/// make one (they are then kept as fields, as they are).
enum KeePassTOTP {
    /// The TOTP and the string keys it consumed.
    static func totp(of strings: [KeePassString], title: String) -> (totp: String, keys: Set<String>)? {
        func value(_ key: String) -> String? {
            strings.first { $0.key == key }.map { String(decoding: $0.value, as: UTF8.self).trimmingASCIISpaces }.flatMap { $0.isEmpty ? nil : $0 }
        }
        if let uri = value("otp") { return (uri, ["otp"]) }
        if let made = timeOTP(value, title: title) { return made }
        if let seed = value("TOTP Seed") {
            let settings = value("TOTP Settings")?.split(separator: ";").map(String.init) ?? []
            if settings.count >= 2, settings[1] == "S" {
                return ("steam://" + seed.replacing(" ", with: ""), ["TOTP Seed", "TOTP Settings"])
            }
            let period = settings.first.flatMap { Int($0) } ?? 30, digits = settings.count >= 2 ? Int(settings[1]) ?? 6 : 6
            let secret = seed.replacing(" ", with: "").uppercased()
            return (uri(title: title, secret: secret, period: period, digits: digits, algorithm: "SHA1"),
                    settings.isEmpty ? ["TOTP Seed"] : ["TOTP Seed", "TOTP Settings"])
        }
        return nil
    }

    /// KeePass 2.47's `TimeOtp-Secret[-Hex|-Base32|-Base64]`, `-Length`, `-Period`, `-Algorithm`.
    private static func timeOTP(_ value: (String) -> String?, title: String) -> (totp: String, keys: Set<String>)? {
        var keys: Set<String> = []
        var secret: [UInt8]?
        if let text = value("TimeOtp-Secret") { secret = Array(text.utf8); keys.insert("TimeOtp-Secret") }
        else if let text = value("TimeOtp-Secret-Hex") { secret = hex(text); keys.insert("TimeOtp-Secret-Hex") }
        else if let text = value("TimeOtp-Secret-Base32") {
            let cleaned = text.replacing(" ", with: "").uppercased()
            guard !cleaned.isEmpty, cleaned.allSatisfy({ ("A"..."Z").contains($0) || ("2"..."7").contains($0) || $0 == "=" }) else { return nil }
            keys.insert("TimeOtp-Secret-Base32")
            return finish(secretBase32: cleaned.filter { $0 != "=" }, keys: keys, value, title: title)
        } else if let text = value("TimeOtp-Secret-Base64") { secret = Data(base64Encoded: text).map(Array.init); keys.insert("TimeOtp-Secret-Base64") }
        guard let secret, !secret.isEmpty else { return nil }
        return finish(secretBase32: base32(secret), keys: keys, value, title: title)
    }

    private static func finish(secretBase32: String, keys: Set<String>, _ value: (String) -> String?, title: String) -> (totp: String, keys: Set<String>)? {
        var keys = keys
        var digits = 6, period = 30, algorithm = "SHA1"
        if let text = value("TimeOtp-Length") { guard let number = Int(text) else { return nil }; digits = number; keys.insert("TimeOtp-Length") }
        if let text = value("TimeOtp-Period") { guard let number = Int(text) else { return nil }; period = number; keys.insert("TimeOtp-Period") }
        if let text = value("TimeOtp-Algorithm") {
            switch text.uppercased() {
            case "HMAC-SHA-1": algorithm = "SHA1"
            case "HMAC-SHA-256": algorithm = "SHA256"
            case "HMAC-SHA-512": algorithm = "SHA512"
            default: return nil
            }
            keys.insert("TimeOtp-Algorithm")
        }
        return (uri(title: title, secret: secretBase32, period: period, digits: digits, algorithm: algorithm), keys)
    }

    /// An otpauth:// URI with the title as its label (percent-encoded).
    static func uri(title: String, secret: String, period: Int, digits: Int, algorithm: String) -> String {
        var label = ""
        for byte in (title.isEmpty ? "KeePass" : title).utf8 {
            let unreserved = (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            label += unreserved ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
        }
        return "otpauth://totp/\(label)?secret=\(secret)&period=\(period)&digits=\(digits)&algorithm=\(algorithm)"
    }

    /// RFC 4648 Base32 without padding.
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var text = "", buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                text.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { text.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return text
    }

    private static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.replacing(" ", with: "").utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexDigit(digits[index]), let low = hexDigit(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension String {
    /// The text with zeros before it up to `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
