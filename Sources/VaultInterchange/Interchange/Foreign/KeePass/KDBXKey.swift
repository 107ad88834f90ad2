import FoundationEssentials
import KDF
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - What opens a KDBX file: a password, a key file, or both

/// The composite key of a KeePass database: SHA-256 of the password's SHA-256 followed by the key
/// file's 32-byte key (either part absent when not used), as KeePass 2 and KeePassXC make it.
public struct KDBXCredentials: Sendable {
    /// The password, or nil when the database has a key file only.
    public var password: SecureBytes?
    /// The 32 bytes the key file stands for (`KDBXKeyFile.key(of:)`), or nil.
    public var keyFileKey: SecureBytes?

    /// Credentials of a password and/or a key file's key; at least one of them.
    public init(password: SecureBytes?, keyFileKey: SecureBytes?) {
        self.password = password
        self.keyFileKey = keyFileKey
    }

    /// What the credentials are, for messages ("the password and key file given").
    public var described: String {
        switch (password != nil, keyFileKey != nil) {
        case (true, true): return "the password and key file given"
        case (false, true): return "the key file given (and no password)"
        default: return "the password given" + (keyFileKey == nil ? " (and no key file)" : "")
        }
    }

    /// SHA-256(SHA-256(password) ‖ key file's key): the input of the database's KDF.
    func composite() -> [UInt8] {
        var parts: [[UInt8]] = []
        if let password {
            parts.append(password.withUnsafeBytes { raw in
                var copy = Array(raw)
                defer { wipe(&copy) }
                return KDBXCrypto.sha256([copy[...]])
            })
        }
        if let keyFileKey { parts.append(keyFileKey.withUnsafeBytes { Array($0) }) }
        defer { for index in parts.indices { wipe(&parts[index]) } }
        return KDBXCrypto.sha256(parts.map { $0[...] })
    }
}

/// KeePass's key files: the XML key files of KeePass 2 (version 1.0: base64 `Data`; version 2.0:
/// hex `Data` with a `Hash` attribute, what KeePassXC's `--set-key-file` writes), a file of exactly
/// 32 bytes (the key itself), of 64 hexadecimal digits (the key in hex), else any file, whose
/// SHA-256 is the key.
public enum KDBXKeyFile {
    /// The 32-byte key that the key file `bytes` (named `file` in messages) stands for.
    public static func key(of bytes: [UInt8], file: String) throws(VaultError) -> SecureBytes {
        if let xml = try xmlKey(bytes, file: file) { return xml }
        if bytes.count == 32 { return SecureBytes(copying: bytes) }
        if bytes.count == 64, var decoded = hex(bytes[...]) {
            defer { wipe(&decoded) }
            return SecureBytes(copying: decoded)
        }
        var digest = KDBXCrypto.sha256([bytes[...]])
        defer { wipe(&digest) }
        return SecureBytes(copying: digest)
    }

    /// The key of a KeePass XML key file; nil when `bytes` is not one (it does not hold `<KeyFile>`).
    private static func xmlKey(_ bytes: [UInt8], file: String) throws(VaultError) -> SecureBytes? {
        // Key files are small: a large file is a hashed key file whatever it holds.
        guard bytes.count <= 64 << 10 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("<KeyFile>"), let version = element("Version", in: text), let data = element("Data", in: text) else { return nil }
        func refused(_ why: String) -> VaultError { .malformedInput("the key file \(file) is a KeePass XML key file, but \(why)") }
        switch version.body.trimmingASCIISpaces {
        case "1.0", "1.00":
            guard let decoded = Data(base64Encoded: data.body.trimmingASCIISpaces), decoded.count == 32 else { throw refused("its Data is not 32 bytes of base64") }
            return SecureBytes(copying: Array(decoded))
        case "2.0":
            let digits = Array(data.body.utf8).filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
            guard digits.count == 64, var key = hex(digits[...]) else { throw refused("its Data is not 32 bytes of hex") }
            defer { wipe(&key) }
            if let hash = attribute("Hash", in: data.tag) {
                let check = KDBXCrypto.sha256([key[...]]).prefix(4)
                guard let expected = hex(Array(hash.utf8)[...]), expected.elementsEqual(check) else {
                    throw refused("its Data does not match its Hash (the file is damaged)")
                }
            }
            return SecureBytes(copying: key)
        default:
            throw refused("of version \(version.body.trimmingASCIISpaces.prefix(10)), which vaultfile does not know (1.0 and 2.0)")
        }
    }

    /// The first element `name`: its start tag and its text.
    private static func element(_ name: String, in text: String) -> (tag: Substring, body: String)? {
        guard let open = text.firstRange(of: "<\(name)"), let close = text[open.upperBound...].firstRange(of: ">"),
              let end = text[close.upperBound...].firstRange(of: "</\(name)>") else { return nil }
        return (text[open.lowerBound..<close.upperBound], String(text[close.upperBound..<end.lowerBound]))
    }

    private static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let start = tag.firstRange(of: "\(name)=\"") , let end = tag[start.upperBound...].firstIndex(of: "\"") else { return nil }
        return String(tag[start.upperBound..<end])
    }

    /// The bytes of an even number of hex digits; nil for anything else.
    static func hex(_ digits: ArraySlice<UInt8>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
