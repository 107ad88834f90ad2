import SecureMemory
import VaultModel

// MARK: - AGE-PLUGIN-VAULTFILE-1… lines

/// The age identity of `age-plugin-vaultfile`: `AGE-PLUGIN-VAULTFILE-1…` (Bech32, upper case) of
/// a version byte (1), the vault id (16 bytes), the entry's name (UTF-8) and a 16-byte MAC.
///
/// The MAC is HMAC-SHA-256, cut to 16 bytes, under the entry's lend key (32 random bytes kept in
/// the entry's `age-lent` field, inside the encrypted vault), of
/// `"vaultfile age-plugin identity v1" ‖ 0x00 ‖ vault id ‖ name`. So a line names exactly the entry
/// it was made for, and only while that entry is lent under that key: a crafted line (another
/// name, another vault) names nothing, and lending the entry again under a new key retires every
/// line made before. The line holds no secret: it is safe in a file, as age identity files of plugins are.
public struct VaultfilePluginIdentity: Sendable, Hashable {
    /// The human-readable part, as written (upper case).
    public static let humanReadablePart = "AGE-PLUGIN-VAULTFILE-"
    /// The version byte of this layout.
    static let version: UInt8 = 1
    /// The bytes of the vault id.
    public static let vaultIDLength = 16
    /// The bytes of the MAC.
    static let macLength = 16
    /// The bytes of a lend key.
    public static let lendKeyLength = 32
    /// The longest entry name a line carries, in bytes (the line is then 1,000-odd characters).
    public static let maxNameLength = 512
    /// The field of an entry that marks it lent; its value is the lend key, 64 hex digits.
    public static let lentField = "age-lent"
    /// The MAC's domain separation.
    private static let label = Array("vaultfile age-plugin identity v1".utf8) + [0]

    /// The vault the line names.
    public let vaultID: [UInt8]
    /// The entry the line names.
    public let entry: String
    /// The MAC, checked against the entry's lend key.
    let mac: [UInt8]

    /// The line for `entry` of the vault `vaultID` under `lendKey`.
    public init(vaultID: [UInt8], entry: String, lendKey: [UInt8]) throws(AgePluginError) {
        guard vaultID.count == Self.vaultIDLength, lendKey.count == Self.lendKeyLength else {
            throw .malformed("a plugin identity holds a 16-byte vault id and is made under a 32-byte lend key")
        }
        guard !entry.isEmpty, entry.utf8.count <= Self.maxNameLength else {
            throw .overLimit("an entry name of \(entry.utf8.count) bytes; a plugin identity carries names of 1 to \(Self.maxNameLength) bytes")
        }
        try Self.checkName(entry)
        self.vaultID = vaultID
        self.entry = entry
        mac = Self.mac(vaultID: vaultID, entry: entry, lendKey: lendKey)
    }

    /// Parses a line; its MAC is checked later, against the lend key of the entry it names.
    public init(parsing text: String) throws(AgePluginError) {
        let decoded: (humanReadablePart: String, data: [UInt8])
        do {
            decoded = try Bech32.decode(text, maxLength: 2 * Self.maxNameLength + 120)
        } catch {
            throw .malformed("it is not a vaultfile plugin identity: it \(error.description)")
        }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            throw .malformed("it does not start 'AGE-PLUGIN-VAULTFILE-1' (upper case)")
        }
        let data = decoded.data
        let fixed = 1 + Self.vaultIDLength + Self.macLength
        guard data.count > fixed, data[0] == Self.version else {
            throw .malformed("it is not a version-1 vaultfile plugin identity (too short, or another version)")
        }
        guard let name = String(validating: data[(1 + Self.vaultIDLength)..<(data.count - Self.macLength)], as: UTF8.self),
              name.utf8.count <= Self.maxNameLength else {
            throw .malformed("its entry name is not UTF-8 of at most \(Self.maxNameLength) bytes")
        }
        // Before any vault is asked: the name reaches the confirm command before the MAC is checked.
        try Self.checkName(name)
        vaultID = Array(data[1...Self.vaultIDLength])
        entry = name
        mac = Array(data.suffix(Self.macLength))
    }

    /// `AGE-PLUGIN-VAULTFILE-1…`.
    public var line: String {
        Bech32.encode(humanReadablePart: Self.humanReadablePart, data: [Self.version] + vaultID + Array(entry.utf8) + mac, upperCase: true)
    }

    /// Whether the line was made under `lendKey` (constant time).
    public func isValid(lendKey: [UInt8]) -> Bool {
        guard lendKey.count == Self.lendKeyLength else { return false }
        return constantTimeEqual(mac, Self.mac(vaultID: vaultID, entry: entry, lendKey: lendKey))
    }

    /// The lend key in an `age-lent` field's value (64 hex digits), or nil.
    public static func lendKey(fromField value: [UInt8]) -> [UInt8]? {
        guard value.count == 2 * lendKeyLength else { return nil }
        var key: [UInt8] = []
        key.reserveCapacity(lendKeyLength)
        var index = 0
        while index < value.count {
            guard let high = hexValue(value[index]), let low = hexValue(value[index + 1]) else { return nil }
            key.append(high << 4 | low)
            index += 2
        }
        return key
    }

    /// A new lend key as an `age-lent` field's value: 64 lower-case hex digits of 32 random bytes.
    public static func newLendField() -> [UInt8] {
        AgeCrypto.randomBytes(count: lendKeyLength).flatMap { [hexDigit($0 >> 4), hexDigit($0 & 0x0F)] }
    }

    /// Why a line cannot carry `name`, or nil: it is 1 to `maxNameLength` bytes and one that
    /// `set` would create (no control characters, bidi controls or other invisible format
    /// characters, no empty or dot components). A line with another name was not made by vaultfile.
    public static func nameProblem(_ name: String) -> String? {
        guard name.utf8.count <= maxNameLength else {
            return "its name is \(name.utf8.count) bytes, and a plugin identity carries entry names of at most \(maxNameLength) bytes"
        }
        do {
            _ = try EntryName.validateNew(name)
            return nil
        } catch {
            return error.description
        }
    }

    private static func checkName(_ name: String) throws(AgePluginError) {
        if let problem = nameProblem(name) { throw .malformed("its entry name is not one vaultfile lends: \(problem)") }
    }

    private static func mac(vaultID: [UInt8], entry: String, lendKey: [UInt8]) -> [UInt8] {
        let message = label + vaultID + Array(entry.utf8)
        return Array(lendKey.withUnsafeBytes { HMACSHA256.authenticate(message[...], key: $0) }.prefix(macLength))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
