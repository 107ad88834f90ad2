import CSodium
import SecureMemory
import VaultModel

// MARK: - ssh-ed25519 public keys

/// An OpenSSH `ssh-ed25519` public key, as in `~/.ssh/id_ed25519.pub` and `authorized_keys`.
///
/// A slot made for it binds its SSH wire encoding (`string "ssh-ed25519" ‖ string key`), not
/// the X25519 key it maps to: A and −A map to one X25519 key, and the wire key names exactly one.
public struct SSHEd25519PublicKey: Equatable, Sendable, CustomStringConvertible {
    /// The key type name on the wire and in text.
    public static let typeName = "ssh-ed25519"

    /// The 32-byte Ed25519 public key.
    public let key: [UInt8]
    /// The X25519 public key it maps to (checked when the key is made).
    public let x25519PublicKey: [UInt8]
    /// The comment after the key in a `.pub` line (often user@host); empty when there is none.
    public let comment: String

    /// A key from its 32 bytes; refused when libsodium cannot map it to X25519.
    public init(key: [UInt8], comment: String = "") throws(VaultError) {
        guard key.count == Ed25519.publicKeyLength else { throw .malformedInput("an ssh-ed25519 key is 32 bytes, not \(key.count)") }
        guard let mapped = Ed25519.x25519PublicKey(key) else {
            throw .malformedInput("the ssh-ed25519 key is not a valid Ed25519 public key (not on the curve, or of small order)")
        }
        self.key = key
        self.x25519PublicKey = mapped
        self.comment = comment
    }

    /// A key from its SSH wire encoding (as the metadata stores it).
    public init(wire: [UInt8]) throws(VaultError) {
        var reader = SSHReader(wire[...])
        guard let type = reader.string(), type.elementsEqual(Self.typeName.utf8), let key = reader.string(), reader.isAtEnd else {
            throw .malformedInput("not the wire encoding of an ssh-ed25519 key")
        }
        try self.init(key: Array(key))
    }

    /// Parses `ssh-ed25519 AAAA… [comment]`; refuses other key types by name.
    public init(parsing line: String) throws(VaultError) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2 else { throw .malformedInput("not an ssh public key line (TYPE BASE64 [COMMENT])") }
        guard parts[0] == Self.typeName else {
            throw .malformedInput("'\(parts[0])' keys are not supported; vaultfile takes ssh-ed25519 and ssh-rsa keys (and age1… recipients)")
        }
        guard let wire = base64Decode(Array(parts[1].utf8)) else { throw .malformedInput("the ssh-ed25519 key is not valid base64") }
        let parsed = try SSHEd25519PublicKey(wire: wire)
        try self.init(key: parsed.key, comment: parts.count > 2 ? String(parts[2]).trimmingTrailingSpaces() : "")
    }

    /// `string "ssh-ed25519" ‖ string key`: 51 bytes.
    public var wireBytes: [UInt8] { sshString(Array(Self.typeName.utf8)) + sshString(key) }

    /// `ssh-ed25519 AAAA…`, without the comment.
    public var description: String { Self.typeName + " " + base64Encode(wireBytes) }

    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    public var fingerprint: String { "SHA256:" + base64Encode(SHA256.hash(wireBytes), padded: false) }
}

// MARK: - Unencrypted OpenSSH ed25519 private keys

/// An ssh-ed25519 identity read from an unencrypted OpenSSH private key file
/// (`-----BEGIN OPENSSH PRIVATE KEY-----`, the format of `ssh-keygen -t ed25519`).
public struct SSHEd25519Identity: Sendable {
    /// The public half.
    public let publicKey: SSHEd25519PublicKey
    /// The X25519 secret key the Ed25519 seed maps to.
    public let x25519SecretKey: SecureBytes
    /// The Ed25519 seed itself (guarded), which signs the seals of a signed vault (scheme 2).
    public let ed25519Seed: SecureBytes

    static let begin = "-----BEGIN OPENSSH PRIVATE KEY-----", end = "-----END OPENSSH PRIVATE KEY-----"
    static let magic = Array("openssh-key-v1".utf8) + [0]

    /// Whether an identity source's `bytes` are read as an OpenSSH private key rather than as an
    /// age identity file: its first line that holds more than spaces and tabs (a final `\r`
    /// dropped, spaces and tabs around it ignored) starts with `-----BEGIN`, a PEM armor line, as
    /// age decides. Lines are split as `parse` splits them, so a key after blank lines is a key;
    /// a PEM file of another kind (an RSA key, an age-encrypted file) then gets `parse`'s refusal,
    /// which says what it is. Bytes, not text: no UTF-8 is needed to decide.
    public static func looksLikeOpenSSHKey(_ bytes: [UInt8]) -> Bool {
        guard let first = armorLines(bytes).first else { return false }
        return first.starts(with: "-----BEGIN".utf8)
    }

    /// The lines of a key file that hold more than spaces and tabs, each without a final `\r` and
    /// without the spaces and tabs around it.
    static func armorLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        return bytes.split(separator: 0x0A).compactMap { line in
            var line = line.last == 0x0D ? line.dropLast() : line
            while let first = line.first, blank(first) { line = line.dropFirst() }
            while let last = line.last, blank(last) { line = line.dropLast() }
            return line.isEmpty ? nil : line
        }
    }

    /// Parses an OpenSSH private key file. Refuses, saying so: an encrypted key (a cipher other
    /// than "none"), another key type, more than one key, check integers that differ (a wrong
    /// decryption or damage), a public half that differs from the private one, a seed that does
    /// not derive its public key, bad padding, and trailing bytes.
    public static func parse(_ bytes: [UInt8], source: String) throws(VaultError) -> SSHEd25519Identity {
        func refuse(_ why: String) -> VaultError { .malformedInput("\(source): \(why)") }
        let lines = armorLines(bytes)
        if let first = lines.first, first.starts(with: "-----BEGIN".utf8), !first.elementsEqual(begin.utf8) {
            // Armor text is public: naming it says what the file is (an RSA key, an age-encrypted file).
            let kind = String(decoding: first.prefix(64), as: UTF8.self)
            throw refuse("it is a PEM file of another kind (\(kind)); vaultfile reads unencrypted OpenSSH ed25519 keys "
                         + "(\(begin)) and age identities (AGE-SECRET-KEY-1…)")
        }
        guard let first = lines.first, first.elementsEqual(begin.utf8), let last = lines.last, last.elementsEqual(end.utf8), lines.count >= 3 else {
            throw refuse("not an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY----- … -----END OPENSSH PRIVATE KEY-----)")
        }
        guard var blob = base64Decode(Array(lines[1..<(lines.count - 1)].joined())) else { throw refuse("the key is not valid base64") }
        defer { wipe(&blob) }
        guard blob.starts(with: magic) else { throw refuse("not an openssh-key-v1 key") }
        var reader = SSHReader(blob[magic.count...])
        guard let cipher = reader.string(), let kdf = reader.string(), reader.string() != nil, let count = reader.uint32() else {
            throw refuse("the key file is truncated")
        }
        guard cipher.elementsEqual("none".utf8), kdf.elementsEqual("none".utf8) else {
            throw refuse("the key is encrypted (protected by a passphrase): it is read as a protected identity, which asks for its passphrase")
        }
        guard count == 1 else { throw refuse("the file holds \(count) keys; vaultfile reads files of one key") }
        guard let publicWire = reader.string(), var privateSection = reader.string().map(Array.init), reader.isAtEnd else {
            throw refuse("the key file is truncated or has bytes after its key")
        }
        defer { wipe(&privateSection) }
        return try fromPrivateSection(privateSection, publicWire: publicWire, blockSize: 8, refuse: refuse)
    }

    /// The identity in a decrypted private section (`check1 ‖ check2 ‖ key ‖ comment ‖ padding`,
    /// padded to `blockSize`: 8 unencrypted, the cipher's block when encrypted), after the file's
    /// public key `publicWire`. Both checks must pass: equal check integers, then a seed that
    /// derives the public key (all a wrong passphrase leaves to catch under aes256-ctr).
    static func fromPrivateSection(_ privateSection: [UInt8], publicWire: ArraySlice<UInt8>, blockSize: Int,
                                   refuse: (String) -> VaultError) throws(VaultError) -> SSHEd25519Identity {
        var typeReader = SSHReader(publicWire)
        guard let type = typeReader.string(), type.elementsEqual(SSHEd25519PublicKey.typeName.utf8) else {
            throw refuse("the key is not an ssh-ed25519 key; vaultfile reads ssh-ed25519 keys")
        }
        let publicKey = try SSHEd25519PublicKey(wire: Array(publicWire))
        guard privateSection.count % blockSize == 0 else { throw refuse("the private section is not a whole number of blocks") }
        var secret = SSHReader(privateSection[...])
        guard let check1 = secret.uint32(), let check2 = secret.uint32() else { throw refuse("the private section is truncated") }
        guard check1 == check2 else { throw refuse("the key's check integers differ (damaged, or a wrong passphrase)") }
        guard let innerType = secret.string(), innerType.elementsEqual(SSHEd25519PublicKey.typeName.utf8),
              let innerPublic = secret.string(), let pair = secret.string(), let comment = secret.string() else {
            throw refuse("the private section is truncated or not an ssh-ed25519 key")
        }
        guard innerPublic.elementsEqual(publicKey.key), pair.count == 64, pair.suffix(32).elementsEqual(publicKey.key) else {
            throw refuse("the private key's public half differs from the key's public key")
        }
        let padding = secret.rest
        guard padding.count < blockSize, padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) }) else {
            throw refuse("the private section's padding is malformed")
        }
        let seed = SecureBytes(copying: pair.prefix(32))
        guard Ed25519.publicKey(fromSeed: seed) == publicKey.key, let x25519 = Ed25519.x25519SecretKey(fromSeed: seed) else {
            throw refuse("the private key does not derive its public key")
        }
        let commented = try SSHEd25519PublicKey(key: publicKey.key, comment: String(decoding: comment, as: UTF8.self))
        return SSHEd25519Identity(publicKey: commented, x25519SecretKey: x25519, ed25519Seed: seed)
    }
}

// MARK: - SSH wire reading

/// Reads untrusted SSH wire data: bytes, big-endian `uint32`s and 32-bit-length strings, never
/// past the end (a length is checked against what is left before anything is taken). The key
/// files' parsers and the agent's ssh socket (VaultAgent) read through it.
package struct SSHReader {
    private var bytes: ArraySlice<UInt8>

    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    package var isAtEnd: Bool { bytes.isEmpty }
    package var rest: ArraySlice<UInt8> { bytes }

    package mutating func byte() -> UInt8? {
        guard let first = bytes.first else { return nil }
        bytes = bytes.dropFirst()
        return first
    }

    package mutating func uint32() -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        let value = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        bytes = bytes.dropFirst(4)
        return value
    }

    package mutating func string() -> ArraySlice<UInt8>? {
        guard let length = uint32(), Int(length) <= bytes.count else { return nil }
        let value = bytes.prefix(Int(length))
        bytes = bytes.dropFirst(Int(length))
        return value
    }

    /// `count` raw bytes.
    package mutating func raw(_ count: Int) -> ArraySlice<UInt8>? {
        guard bytes.count >= count else { return nil }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }
}

/// An SSH `string`: a big-endian 32-bit length, then the bytes.
func sshString(_ bytes: [UInt8]) -> [UInt8] {
    let length = UInt32(bytes.count)
    return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + bytes
}

// MARK: - Base64 (libsodium)

/// Standard Base64 (RFC 4648 §4) through `sodium_base642bin`; `padded` chooses whether `=`
/// padding is required. Nil for anything else, including trailing garbage.
func base64Decode(_ text: [UInt8], padded: Bool = true) -> [UInt8]? {
    guard !text.isEmpty else { return nil }
    ensureSodiumInitialised()
    var output = [UInt8](repeating: 0, count: text.count / 4 * 3 + 3)
    var length = 0
    var end: UnsafePointer<CChar>? = nil
    let variant = padded ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING
    let status = text.withUnsafeBufferPointer { input in
        input.withMemoryRebound(to: CChar.self) { chars in
            sodium_base642bin(&output, output.count, chars.baseAddress, chars.count, nil, &length, &end, variant)
        }
    }
    guard status == 0, let end, text.withUnsafeBufferPointer({ UnsafeRawPointer($0.baseAddress! + $0.count) == UnsafeRawPointer(end) }) else {
        wipe(&output)
        return nil
    }
    let decoded = Array(output.prefix(length))
    wipe(&output)
    return decoded
}

/// Standard Base64 of `bytes` (`sodium_bin2base64`), with or without `=` padding.
func base64Encode(_ bytes: [UInt8], padded: Bool = true) -> String {
    ensureSodiumInitialised()
    let variant = padded ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING
    var output = [CChar](repeating: 0, count: sodium_base64_encoded_len(bytes.count, variant))
    _ = sodium_bin2base64(&output, output.count, bytes, bytes.count, variant)
    return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
