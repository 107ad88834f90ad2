import SecureMemory
import VaultModel

// MARK: - age X25519 recipients

/// An age X25519 recipient: a 32-byte X25519 public key, written `age1…` (Bech32, HRP "age",
/// lower case), exactly as age and age-keygen write it.
public struct AgeRecipient: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The human-readable part of recipients.
    public static let humanReadablePart = "age"

    /// The X25519 public key.
    public let publicKey: [UInt8]

    /// A recipient for a 32-byte X25519 public key.
    public init?(publicKey: [UInt8]) {
        guard publicKey.count == X25519.keyLength else { return nil }
        self.publicKey = publicKey
    }

    /// Parses `age1…`. age writes recipients in lower case and refuses others; so does this.
    public init(parsing text: String) throws(VaultError) {
        let decoded: (humanReadablePart: String, data: [UInt8])
        do {
            decoded = try Bech32.decode(text)
        } catch {
            throw .malformedInput("the recipient is not an age recipient (age1…): it \(error.description)")
        }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            throw .malformedInput("the recipient is not an age recipient: it starts '\(decoded.humanReadablePart)1', not 'age1' (lower case)")
        }
        guard decoded.data.count == X25519.keyLength else {
            throw .malformedInput("the age recipient holds \(decoded.data.count) bytes, not 32")
        }
        // A low-order point is no one's key: every secret key shares the same (zero) secret with
        // it, so a slot wrapped to it would open for anyone. age refuses to wrap to one as well.
        guard !X25519.isLowOrder(decoded.data) else {
            throw .malformedInput("the age recipient \(text) is a low-order X25519 point, no one's real key: "
                                  + "a slot wrapped to it would open for anyone")
        }
        publicKey = decoded.data
    }

    /// `age1…`.
    public var description: String { Bech32.encode(humanReadablePart: Self.humanReadablePart, data: publicKey) }
}

// MARK: - age X25519 identities

/// An age X25519 identity: a 32-byte X25519 secret key in guarded memory, written
/// `AGE-SECRET-KEY-1…` (Bech32, HRP "AGE-SECRET-KEY-", upper case).
public struct AgeIdentity: Sendable {
    /// The human-readable part of identities, as written (upper case).
    public static let humanReadablePart = "AGE-SECRET-KEY-"

    /// The X25519 secret key.
    public let secretKey: SecureBytes
    /// Its public key.
    public let recipient: AgeRecipient

    /// The identity of `secretKey` (32 bytes).
    public init(secretKey: SecureBytes) throws(VaultError) {
        guard secretKey.count == X25519.keyLength, let publicKey = try? X25519.publicKey(of: secretKey),
              let recipient = AgeRecipient(publicKey: publicKey) else {
            throw .malformedInput("an age identity holds a 32-byte X25519 key")
        }
        self.secretKey = secretKey
        self.recipient = recipient
    }

    /// A new random identity.
    public static func generate() -> AgeIdentity {
        // A fresh 32-byte key always has a public key (X25519 clamps any scalar).
        try! AgeIdentity(secretKey: X25519.generateSecretKey())
    }

    /// Parses one `AGE-SECRET-KEY-1…` line (upper case, as age requires). The message never
    /// quotes the text: it is a secret key, or nearly one.
    public init(parsing text: String) throws(VaultError) {
        var decoded: (humanReadablePart: String, data: [UInt8])
        do {
            decoded = try Bech32.decode(text)
        } catch {
            throw .malformedInput("it is not an age identity (AGE-SECRET-KEY-1…): it \(error.description)")
        }
        defer { wipe(&decoded.data) }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            throw .malformedInput("it is not an age identity: it does not start 'AGE-SECRET-KEY-1' (upper case)")
        }
        guard decoded.data.count == X25519.keyLength else {
            throw .malformedInput("the age identity holds \(decoded.data.count) bytes, not 32")
        }
        try self.init(secretKey: SecureBytes(copying: decoded.data))
    }

    /// `AGE-SECRET-KEY-1…`: the secret key itself. Print it only where the user asked for it.
    public func encodedSecretKey() -> String {
        var bytes = secretKey.withUnsafeBytes { Array($0) }
        defer { wipe(&bytes) }
        return Bech32.encode(humanReadablePart: Self.humanReadablePart, data: bytes, upperCase: true)
    }
}

// MARK: - Text files of keys

/// The lines of a key file that carry something: `#` comments and blank lines (spaces and tabs
/// only) are skipped, a final `\r` is dropped (files written on Windows), and each line keeps its
/// 1-based number for messages.
func meaningfulLines(_ bytes: [UInt8], what: String) throws(VaultError) -> [(number: Int, text: String)] {
    var result: [(Int, String)] = []
    // Split on the byte 0x0A: a Swift String would keep "\r\n" together as one character.
    for (index, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
        var line = raw[...]
        if line.last == 0x0D { line = line.dropLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw .malformedInput("\(what), line \(index + 1): not UTF-8 text")
        }
        let trimmed = text.trimmingTrailingSpaces()
        if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
        result.append((index + 1, trimmed))
    }
    return result
}

extension String {
    /// The string without spaces and tabs at either end.
    func trimmingTrailingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(scalars[first...last])
    }
}

/// An age identity file, as age-keygen writes it: `AGE-SECRET-KEY-1…` lines, `#` comments
/// (age-keygen's `# created:` and `# public key:` lines) and blank lines.
public enum AgeIdentityFile {
    /// The identities in `bytes`, in file order. Refuses a file with no identity, a line that is
    /// not one (named by its number, never quoted) and age plugin identities.
    public static func parse(_ bytes: [UInt8], source: String) throws(VaultError) -> [AgeIdentity] {
        var identities: [AgeIdentity] = []
        for (number, line) in try meaningfulLines(bytes, what: source) {
            if line.uppercased().hasPrefix("AGE-PLUGIN-") {
                throw .malformedInput("\(source), line \(number): age plugin identities are not supported; vaultfile reads X25519 identities (AGE-SECRET-KEY-1…)")
            }
            do {
                identities.append(try AgeIdentity(parsing: line))
            } catch {
                throw .malformedInput("\(source), line \(number): \(error.description)")
            }
        }
        guard !identities.isEmpty else { throw .malformedInput("\(source) holds no identity (AGE-SECRET-KEY-1… lines)") }
        return identities
    }
}
