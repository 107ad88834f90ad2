import SecureMemory
import VaultModel
import VaultPQ

// MARK: - age post-quantum recipients (age1pq1…)

/// An age 1.3 post-quantum hybrid recipient: a 1,216-byte ML-KEM-768 + X25519 public key, written
/// `age1pq1…` (Bech32, HRP "age1pq", lower case), as `age-keygen -pq` writes it. Parsing checks the
/// key as FIPS 203 asks (`HybridPublicKey(validating:)`), so a slot is never wrapped to a bad key.
public struct AgePQRecipient: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The human-readable part of post-quantum recipients.
    public static let humanReadablePart = "age1pq"
    /// The length of an `age1pq1…` recipient: HRP, separator, 1,946 data characters, 6 of checksum.
    /// Bech32's 90-character limit is lifted for this prefix only.
    public static let encodedLength = 1_959

    /// The checked public key.
    public let publicKey: HybridPublicKey

    /// A recipient for a checked key.
    public init(publicKey: HybridPublicKey) { self.publicKey = publicKey }

    /// Whether `text` claims to be a post-quantum recipient, in any case (so that other parsers
    /// hand it here, and an upper-case one is refused with this parser's message).
    public static func looksLike(_ text: String) -> Bool { text.lowercased().hasPrefix(humanReadablePart + "1") }

    /// Parses `age1pq1…` (lower case, as age writes it) and checks the key.
    public init(parsing text: String) throws(VaultError) {
        let decoded: (humanReadablePart: String, data: [UInt8])
        guard text.utf8.count <= Self.encodedLength else {
            throw .malformedInput("the age post-quantum recipient is \(text.utf8.count) characters; an age1pq1… recipient is \(Self.encodedLength)")
        }
        do {
            decoded = try Bech32.decode(text, maxLength: Self.encodedLength)
        } catch {
            throw .malformedInput("the recipient is not an age post-quantum recipient (age1pq1…): it \(error.description)")
        }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            throw .malformedInput("the recipient is not an age post-quantum recipient: it starts '\(decoded.humanReadablePart)1', not 'age1pq1' (lower case)")
        }
        try self.init(bytes: decoded.data)
    }

    /// A recipient of raw key bytes (the metadata's copy), checked as a parsed one is.
    public init(bytes: [UInt8]) throws(VaultError) {
        do {
            publicKey = try HybridPublicKey(validating: bytes)
        } catch {
            throw .malformedInput(Self.describe(error))
        }
    }

    /// `age1pq1…`.
    public var description: String { Bech32.encode(humanReadablePart: Self.humanReadablePart, data: publicKey.bytes) }

    /// A short name for messages: `age1pq1` and the last 8 characters (`shortened`).
    public var shortName: String { Self.shortened(description) }

    /// A recipient as messages and `slot list` show it: text that claims to be a post-quantum
    /// recipient (`looksLike`) cut to `age1pq1…` and its last 8 characters, since its 1,959 fill
    /// a screen (its `mlkem768x25519:` fingerprint names it whole); other text as it is.
    public static func shortened(_ text: String) -> String {
        guard looksLike(text), text.count > 24 else { return text }
        return "age1pq1…" + String(text.suffix(8))
    }

    /// The refusal of a key, in words.
    static func describe(_ error: HybridKEMError) -> String {
        switch error {
        case .publicKeyLength(let count):
            return "the age post-quantum recipient holds \(count) bytes, not \(HybridKEM.publicKeyLength) (ML-KEM-768 + X25519)"
        case .mlkemKeyInvalid:
            return "the age post-quantum recipient's ML-KEM-768 encapsulation key fails FIPS 203's modulus check (a coefficient is not below q): it is not a real key"
        case .mlkemKeyZero:
            return "the age post-quantum recipient's ML-KEM-768 encapsulation key is all zeros (t̂ = 0): a slot wrapped to it would open with the X25519 key alone, so it is not post-quantum; ask for the key age-keygen -pq or vaultfile keygen --pq printed"
        case .x25519KeyNotCanonical:
            return "the age post-quantum recipient's X25519 key is not canonical (high bit set, or not below 2^255-19): no identity could open a slot wrapped to it; ask for the key age-keygen -pq or vaultfile keygen --pq printed"
        case .x25519KeyInvalid, .encapsulationFailed:
            return "the age post-quantum recipient's X25519 key is a low-order point, no one's real key: a slot wrapped to it would not be post-quantum against anyone"
        case .seedLength(let count):
            return "the age post-quantum identity holds \(count) bytes, not \(HybridKEM.seedLength)"
        }
    }
}

// MARK: - age post-quantum identities (AGE-SECRET-KEY-PQ-1…)

/// An age 1.3 post-quantum identity: a 32-byte X-Wing seed, written `AGE-SECRET-KEY-PQ-1…`
/// (Bech32, upper case); the seed is expanded with SHAKE256 into ML-KEM-768's and X25519's keys.
public struct AgePQIdentity: Sendable {
    /// The human-readable part of post-quantum identities, as written (upper case).
    public static let humanReadablePart = "AGE-SECRET-KEY-PQ-"

    /// The seed and its expanded keys.
    public let identity: HybridIdentity
    /// Its recipient.
    public let recipient: AgePQRecipient

    /// The identity of a 32-byte seed.
    public init(seed: SecureBytes) throws(VaultError) {
        do {
            identity = try HybridIdentity(seed: seed)
        } catch {
            throw .malformedInput(AgePQRecipient.describe(error))
        }
        recipient = AgePQRecipient(publicKey: identity.publicKey)
    }

    /// A new random identity.
    public static func generate() throws(VaultError) -> AgePQIdentity {
        let seed = SecureBytes(copying: randomBytes(count: HybridKEM.seedLength))
        return try AgePQIdentity(seed: seed)
    }

    /// Whether a line claims to be a post-quantum identity (in any case, so a lower-case one is
    /// refused by this parser with its own message rather than by another's).
    public static func looksLike(_ text: String) -> Bool { text.uppercased().hasPrefix(humanReadablePart + "1") }

    /// Parses one `AGE-SECRET-KEY-PQ-1…` line (upper case, as age writes it). The message never
    /// quotes the text: it is a secret key, or nearly one.
    public init(parsing text: String) throws(VaultError) {
        var decoded: (humanReadablePart: String, data: [UInt8])
        do {
            decoded = try Bech32.decode(text)
        } catch {
            throw .malformedInput("it is not an age post-quantum identity (AGE-SECRET-KEY-PQ-1…): it \(error.description)")
        }
        defer { wipe(&decoded.data) }
        guard decoded.humanReadablePart == Self.humanReadablePart, text.hasPrefix(Self.humanReadablePart) else {
            throw .malformedInput("it is not an age post-quantum identity: it does not start 'AGE-SECRET-KEY-PQ-1' (upper case)")
        }
        guard decoded.data.count == HybridKEM.seedLength else {
            throw .malformedInput("the age post-quantum identity holds \(decoded.data.count) bytes, not \(HybridKEM.seedLength)")
        }
        try self.init(seed: SecureBytes(copying: decoded.data))
    }

    /// `AGE-SECRET-KEY-PQ-1…`: the seed itself. Print it only where the user asked for it.
    public func encodedSecretKey() -> String {
        var bytes = identity.seed.withUnsafeBytes { Array($0) }
        defer { wipe(&bytes) }
        return Bech32.encode(humanReadablePart: Self.humanReadablePart, data: bytes, upperCase: true)
    }
}

// MARK: - Identity files with both kinds

/// One identity of an age identity file: X25519 or post-quantum.
public enum AgeAnyIdentity: Sendable {
    /// `AGE-SECRET-KEY-1…`.
    case x25519(AgeIdentity)
    /// `AGE-SECRET-KEY-PQ-1…`.
    case postQuantum(AgePQIdentity)
}

extension AgeIdentityFile {
    /// The identities of both kinds in `bytes`, in file order (`parse`'s rules otherwise). More
    /// than `limit` identity lines are refused before any key is made (each holds locked memory,
    /// and tens of thousands exhaust the process's mappings); `total` is the cap across every
    /// identity source, which the message names.
    public static func parseAll(_ bytes: [UInt8], source: String, limit: Int = .max, total: Int = .max) throws(VaultError) -> [AgeAnyIdentity] {
        var identities: [AgeAnyIdentity] = []
        let lines = try meaningfulLines(bytes, what: source)
        try checkIdentityCount(lines.count, source: source, limit: limit, total: total)
        for (number, line) in lines {
            if line.uppercased().hasPrefix("AGE-PLUGIN-") {
                throw .malformedInput("\(source), line \(number): age plugin identities are not supported here; vaultfile reads AGE-SECRET-KEY-1… and AGE-SECRET-KEY-PQ-1… identities")
            }
            do {
                if AgePQIdentity.looksLike(line) {
                    identities.append(.postQuantum(try AgePQIdentity(parsing: line)))
                } else {
                    identities.append(.x25519(try AgeIdentity(parsing: line)))
                }
            } catch {
                throw .malformedInput("\(source), line \(number): \(error.description)")
            }
        }
        guard !identities.isEmpty else {
            throw .malformedInput("\(source) holds no identity (AGE-SECRET-KEY-1… or AGE-SECRET-KEY-PQ-1… lines)")
        }
        return identities
    }

    /// Refuses more than `limit` identity lines before any key is made (each holds locked memory,
    /// and tens of thousands exhaust the process's mappings); `total` is the cap across every
    /// identity source, which the message names.
    static func checkIdentityCount(_ count: Int, source: String, limit: Int, total: Int) throws(VaultError) {
        guard count > limit else { return }
        throw .limitExceeded("\(source) holds \(count) identities, more than the \(max(limit, 0)) left of the \(total) "
                             + "that vaultfile reads in all (every --identity file, VAULTFILE_IDENTITY_FILE, VAULTFILE_IDENTITY "
                             + "and the default identities together); keep the identities this vault needs in a smaller file")
    }
}
