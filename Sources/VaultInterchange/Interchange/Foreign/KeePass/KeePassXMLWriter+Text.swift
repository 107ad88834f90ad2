import FoundationEssentials
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - KeePassXMLWriter: text

extension KeePassXMLWriter {
    /// Whether `bytes` can be an XML text value: UTF-8 without the characters XML 1.0 forbids
    /// (C0 controls but tab, LF and CR; U+FFFE and U+FFFF) nor DEL.
    static func isText(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return isXMLText(text) && !bytes.contains(0x7F)
    }

    /// Whether XML 1.0 can hold every character of `text` (its `Char` production: no C0 control
    /// but tab, LF and CR, no U+FFFE or U+FFFF; Swift strings hold no lone surrogates).
    static func isXMLText(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            let value = scalar.value
            return value < 0x20 && value != 0x09 && value != 0x0A && value != 0x0D || value == 0xFFFE || value == 0xFFFF
        }
    }

    /// A name for a message: at most 80 characters, those XML or a terminal cannot show escaped.
    static func shown(_ name: String) -> String {
        String(name.prefix(80).unicodeScalars.map { scalar in
            let value = scalar.value
            return value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value) || value == 0xFFFE || value == 0xFFFF
                ? "\\u{\(String(value, radix: 16))}" : String(scalar)
        }.joined())
    }

    mutating func text(_ string: String) { xml.append(contentsOf: string.utf8) }

    static func wipe(_ entry: inout Entry) {
        SecureMemory.wipe(&entry.value)
        for key in Array(entry.fields.keys) { SecureMemory.wipe(&entry.fields[key]!) }
    }

    mutating func escaped(_ bytes: [UInt8]) {
        for byte in bytes {
            switch byte {
            case 0x26: xml.append(contentsOf: "&amp;".utf8)
            case 0x3C: xml.append(contentsOf: "&lt;".utf8)
            case 0x3E: xml.append(contentsOf: "&gt;".utf8)
            case 0x0D: xml.append(contentsOf: "&#13;".utf8)
            default: xml.append(byte)
            }
        }
    }

    /// Standard base64 of `bytes`, appended where they go: no `String` copy of an attachment.
    mutating func base64(_ bytes: [UInt8]) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var index = 0
        while index + 3 <= bytes.count {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { xml.append(alphabet[Int(word >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        guard rest > 0 else { return }
        let word = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
        xml.append(alphabet[Int(word >> 18 & 63)])
        xml.append(alphabet[Int(word >> 12 & 63)])
        xml.append(rest == 2 ? alphabet[Int(word >> 6 & 63)] : UInt8(ascii: "="))
        xml.append(UInt8(ascii: "="))
    }

    /// A new random UUID in base64, taken from random bytes drawn 4 KiB at a time (one system call
    /// per 256 UUIDs, not one each: they were 3 % of an export of 100,000 entries).
    mutating func uuid() -> String {
        if randomAt + 16 > random.count { (random, randomAt) = (randomBytes(count: 4096), 0) }
        defer { randomAt += 16 }
        return Data(random[randomAt..<(randomAt + 16)]).base64EncodedString()
    }

    /// KDBX 4's times: base64 of the seconds since 0001-01-01 as 8 little-endian bytes. No access
    /// time, usage count or location change: vaultfile keeps none, and an invented one would mislead.
    /// A KeePass 2 XML file's times are ISO 8601 to the second, as KeePass writes them. A time
    /// outside 0001–9999 (KeePass's `DateTime`) is written as the nearest it reads.
    func times(created: Int64, modified: Int64, expiry: Int64? = nil) -> String {
        let iso: Bool
        if case .xmlFile = form { iso = true } else { iso = false }
        func time(_ milliseconds: Int64) -> String {
            let seconds = max(0, UTCTime.withinFourDigitYears(milliseconds: milliseconds) / 1000 + 62_135_596_800)
            if iso {
                let (day, millisecondOfDay) = UTCTime.split(milliseconds: (seconds - 62_135_596_800) * 1000)
                return UTCTime.dateText(ofDay: day) + "T" + UTCTime.timeText(millisecondOfDay: millisecondOfDay) + "Z"
            }
            return Data(KDBXBytes.le64(UInt64(seconds))).base64EncodedString()
        }
        return "<CreationTime>\(time(created))</CreationTime><LastModificationTime>\(time(modified))</LastModificationTime>"
            + "<ExpiryTime>\(time(expiry ?? modified))</ExpiryTime><Expires>\(expiry == nil ? "False" : "True")</Expires>"
    }
}
