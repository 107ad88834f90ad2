import SecureMemory
import VaultModel

// MARK: - ssh-rsa public keys

/// An OpenSSH `ssh-rsa` public key, as in `~/.ssh/id_rsa.pub` and `authorized_keys`: a modulus
/// of 2,048 to 8,192 bits and the public exponent 65,537, nothing else (docs/FORMAT.md §3.10).
///
/// A slot made for it stores (and a seal names) its SSH wire encoding, `string "ssh-rsa" ‖
/// mpint e ‖ mpint n`, in the one canonical form ssh-keygen writes: every mpint minimal and
/// positive, so that one key has one encoding and a slot holding it is found again.
public struct SSHRSAPublicKey: Equatable, Sendable, CustomStringConvertible {
    /// The key type name on the wire and in text.
    public static let typeName = "ssh-rsa"
    /// The smallest modulus accepted, in bits.
    public static let minimumBits = 2_048
    /// The largest modulus accepted, in bits.
    public static let maximumBits = 8_192
    /// The only public exponent accepted: 65,537, as a big-endian magnitude.
    static let exponent: [UInt8] = [0x01, 0x00, 0x01]

    /// The modulus, a big-endian magnitude without leading zero bytes.
    public let modulus: [UInt8]
    /// The modulus's size in bits.
    public let bits: Int
    /// The comment after the key in a `.pub` line; empty when there is none.
    public let comment: String
    /// The key in libcrypto.
    let handle: RSAKeyHandle

    /// Equal when the keys are (the comment aside, as for the wire key).
    public static func == (lhs: SSHRSAPublicKey, rhs: SSHRSAPublicKey) -> Bool { lhs.modulus == rhs.modulus }

    /// A key from its modulus magnitude and exponent; refuses, naming the number, a modulus
    /// outside 2,048…8,192 bits, an even modulus, and any exponent but 65,537. Sizes are checked
    /// from the byte count before libcrypto sees anything.
    init(modulus: [UInt8], exponent: [UInt8], comment: String = "") throws(VaultError) {
        guard let top = modulus.first, top != 0 else { throw .malformedInput("the ssh-rsa key's modulus is zero") }
        let bits = (modulus.count - 1) * 8 + (8 - top.leadingZeroBitCount)
        guard (Self.minimumBits...Self.maximumBits).contains(bits) else {
            throw .malformedInput("the ssh-rsa key has a \(grouped(bits))-bit modulus; vaultfile takes RSA keys of "
                                  + "\(grouped(Self.minimumBits)) to \(grouped(Self.maximumBits)) bits")
        }
        guard exponent == Self.exponent else {
            let shown = exponent.count <= 8 ? grouped(Int(exponent.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })) : "a \(exponent.count)-byte number"
            throw .malformedInput("the ssh-rsa key's public exponent is \(shown); vaultfile takes only 65,537")
        }
        guard modulus.last! & 1 == 1 else { throw .malformedInput("the ssh-rsa key's modulus is even: not an RSA key") }
        guard let handle = RSAKeyHandle.publicKey(n: modulus, e: exponent) else {
            throw .malformedInput("libcrypto refuses the ssh-rsa key")
        }
        self.modulus = modulus
        self.bits = bits
        self.comment = comment
        self.handle = handle
    }

    /// A key from its SSH wire encoding (as the metadata stores it): canonical mpints, nothing after.
    public init(wire: [UInt8]) throws(VaultError) {
        var reader = SSHReader(wire[...])
        guard let type = reader.string(), type.elementsEqual(Self.typeName.utf8) else {
            throw .malformedInput("not the wire encoding of an ssh-rsa key")
        }
        guard let exponent = reader.mpint(), let modulus = reader.mpint(), reader.isAtEnd else {
            throw .malformedInput("the ssh-rsa key's numbers are truncated, negative or not minimally encoded")
        }
        try self.init(modulus: modulus, exponent: exponent)
    }

    /// Parses `ssh-rsa AAAA… [comment]`.
    public init(parsing line: String) throws(VaultError) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0] == Self.typeName else { throw .malformedInput("not an ssh-rsa public key line (ssh-rsa BASE64 [COMMENT])") }
        guard let wire = base64Decode(Array(parts[1].utf8)) else { throw .malformedInput("the ssh-rsa key is not valid base64") }
        let parsed = try SSHRSAPublicKey(wire: wire)
        try self.init(modulus: parsed.modulus, exponent: Self.exponent, comment: parts.count > 2 ? String(parts[2]).trimmingTrailingSpaces() : "")
    }

    /// `string "ssh-rsa" ‖ mpint e ‖ mpint n`.
    public var wireBytes: [UInt8] { sshString(Array(Self.typeName.utf8)) + sshString(mpintBytes(Self.exponent)) + sshString(mpintBytes(modulus)) }

    /// `ssh-rsa AAAA…`, without the comment.
    public var description: String { Self.typeName + " " + base64Encode(wireBytes) }

    /// `SHA256:…`, as `ssh-keygen -l` prints it.
    public var fingerprint: String { "SHA256:" + base64Encode(SHA256.hash(wireBytes), padded: false) }

    /// The modulus's length in bytes: the length of every OAEP ciphertext and PSS signature.
    public var modulusBytes: Int { modulus.count }

    /// RSA-OAEP (SHA-256, MGF1-SHA-256) of `plaintext` to this key under `label`: the keyslot wrap
    /// with the keyslot's label (docs/FORMAT.md §3.10), or age's ssh-rsa stanza with age's.
    public func oaepEncrypt(_ plaintext: SecureBytes, label: [UInt8]) throws(VaultError) -> [UInt8] {
        let sealed = plaintext.withUnsafeBytes { RSAPrimitives.oaepEncrypt($0, key: handle, label: label) }
        guard let sealed else { throw .malformedInput("RSA-OAEP encryption to the ssh-rsa key failed") }
        return sealed
    }

    /// Whether `signature` is this key's RSA-PSS-SHA-256 signature (MGF1-SHA-256, 32-byte salt) of `message`.
    public func pssVerifies(_ signature: [UInt8], message: [UInt8]) -> Bool {
        RSAPrimitives.pssVerifies(signature, message: message, key: handle)
    }
}

// MARK: - ssh-rsa private keys

/// An ssh-rsa identity: the private key of an unencrypted OpenSSH key file (`ssh-keygen -t rsa
/// -N ''`), or of a protected one once its private section is decrypted (`parse(publicWire:privateSection:source:)`).
/// The private key lives only in libcrypto, which clears it when the last copy is released.
public struct SSHRSAIdentity: Sendable {
    /// The public half (with the file's comment).
    public let publicKey: SSHRSAPublicKey
    /// The private key in libcrypto.
    let privateKey: RSAKeyHandle

    /// Whether `bytes` hold an OpenSSH private key file (armored `openssh-key-v1`) whose key is of
    /// type ssh-rsa, read from its public part alone (encrypted or not).
    public static func holdsRSAKey(_ bytes: [UInt8]) -> Bool {
        guard SSHEd25519Identity.looksLikeOpenSSHKey(bytes), var blob = try? OpenSSHKeyBlob.decode(bytes, source: "") else { return false }
        defer { wipe(&blob.privateSection) }
        var reader = SSHReader(blob.publicWire[...])
        return reader.string()?.elementsEqual(SSHRSAPublicKey.typeName.utf8) == true
    }

    /// Parses an unencrypted OpenSSH private key file of one ssh-rsa key; refuses an encrypted
    /// one, saying so, and every inconsistency `parse(publicWire:privateSection:source:)` finds.
    public static func parse(_ bytes: [UInt8], source: String) throws(VaultError) -> SSHRSAIdentity {
        var blob = try OpenSSHKeyBlob.decode(bytes, source: source)
        defer { wipe(&blob.privateSection) }
        guard blob.cipher == "none", blob.kdf == "none" else {
            throw .malformedInput("\(source): the key is encrypted (protected by a passphrase); vaultfile reads only unencrypted OpenSSH keys")
        }
        return try parse(publicWire: blob.publicWire, privateSection: blob.privateSection, source: source)
    }

    /// The identity from a key file's public key (`string "ssh-rsa" ‖ mpint e ‖ mpint n`) and its
    /// private section in the clear (for a protected key, as its decryptor hands it over):
    /// `check (4) ‖ check (4) ‖ string "ssh-rsa" ‖ mpint n ‖ mpint e ‖ mpint d ‖ mpint iqmp ‖
    /// mpint p ‖ mpint q ‖ string comment ‖ padding 01 02 03 …`. Refuses check integers that
    /// differ, a private half whose n or e differ from the public key, numbers that are not
    /// canonical, parts that disagree (n ≠ p·q, …), bad padding. The caller wipes `privateSection`.
    public static func parse(publicWire: [UInt8], privateSection: [UInt8], source: String) throws(VaultError) -> SSHRSAIdentity {
        func refuse(_ why: String) -> VaultError { .malformedInput("\(source): \(why)") }
        let publicKey: SSHRSAPublicKey
        do { publicKey = try SSHRSAPublicKey(wire: publicWire) } catch {
            guard case .malformedInput(let why) = error else { throw error }
            throw refuse(why)
        }
        guard privateSection.count % 8 == 0 else { throw refuse("the private section is not a whole number of blocks") }
        var reader = SSHReader(privateSection[...])
        guard let check1 = reader.uint32(), let check2 = reader.uint32() else { throw refuse("the private section is truncated") }
        guard check1 == check2 else { throw refuse("the key's check integers differ (damaged, or a wrong passphrase)") }
        guard let type = reader.string(), type.elementsEqual(SSHRSAPublicKey.typeName.utf8) else {
            throw refuse("the private section is not an ssh-rsa key")
        }
        guard let n = reader.mpint(), let e = reader.mpint() else { throw refuse("the private key's n or e is truncated or not canonical") }
        guard n == publicKey.modulus, e == SSHRSAPublicKey.exponent else {
            throw refuse("the private key's public half differs from the key's public key")
        }
        guard var d = reader.mpint(), var iqmp = reader.mpint(), var p = reader.mpint(), var q = reader.mpint() else {
            throw refuse("the private key's numbers are truncated or not canonical")
        }
        defer { wipe(&d); wipe(&iqmp); wipe(&p); wipe(&q) }
        guard let comment = reader.string() else { throw refuse("the private section is truncated") }
        let padding = reader.rest
        guard padding.count < 8, padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) }) else {
            throw refuse("the private section's padding is malformed")
        }
        guard d.count <= n.count, p.count <= n.count, q.count <= n.count, iqmp.count <= n.count,
              let handle = RSAKeyHandle.privateKey(n: n, e: e, d: d, iqmp: iqmp, p: p, q: q) else {
            throw refuse("the private key's numbers do not make one RSA key (n is not p·q, or d or iqmp is wrong)")
        }
        let commented = try SSHRSAPublicKey(modulus: n, exponent: e, comment: String(decoding: comment, as: UTF8.self))
        return SSHRSAIdentity(publicKey: commented, privateKey: handle)
    }

    /// RSA-OAEP (SHA-256, MGF1-SHA-256) decryption of `ciphertext` under `label`, into guarded
    /// memory; nil when it does not decrypt (another key or label, damage).
    public func oaepDecrypt(_ ciphertext: [UInt8], label: [UInt8]) -> SecureBytes? {
        RSAPrimitives.oaepDecrypt(ciphertext, key: privateKey, label: label)
    }

    /// The RSA-PSS-SHA-256 signature (MGF1-SHA-256, 32-byte salt) of `message`; nil when libcrypto fails.
    func pssSign(_ message: [UInt8]) -> [UInt8]? { RSAPrimitives.pssSign(message, key: privateKey) }
}

// MARK: - The OpenSSH key file

/// The parts of an armored `openssh-key-v1` file of one key, before any key type is read.
struct OpenSSHKeyBlob {
    var cipher: String
    var kdf: String
    var publicWire: [UInt8]
    /// The private section as stored (encrypted unless cipher is "none"). The caller wipes it.
    var privateSection: [UInt8]

    /// Decodes the armor, base64 and the container; refuses another armor, more than one key,
    /// truncation and trailing bytes.
    static func decode(_ bytes: [UInt8], source: String) throws(VaultError) -> OpenSSHKeyBlob {
        func refuse(_ why: String) -> VaultError { .malformedInput("\(source): \(why)") }
        let lines = SSHEd25519Identity.armorLines(bytes)
        guard let first = lines.first, first.elementsEqual(SSHEd25519Identity.begin.utf8), let last = lines.last,
              last.elementsEqual(SSHEd25519Identity.end.utf8), lines.count >= 3 else {
            throw refuse("not an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY----- … -----END OPENSSH PRIVATE KEY-----)")
        }
        guard var blob = base64Decode(Array(lines[1..<(lines.count - 1)].joined())) else { throw refuse("the key is not valid base64") }
        defer { wipe(&blob) }
        guard blob.starts(with: SSHEd25519Identity.magic) else { throw refuse("not an openssh-key-v1 key") }
        var reader = SSHReader(blob[SSHEd25519Identity.magic.count...])
        guard let cipher = reader.string(), let kdf = reader.string(), reader.string() != nil, let count = reader.uint32() else {
            throw refuse("the key file is truncated")
        }
        guard count == 1 else { throw refuse("the file holds \(count) keys; vaultfile reads files of one key") }
        guard let publicWire = reader.string(), let privateSection = reader.string(), reader.isAtEnd else {
            throw refuse("the key file is truncated or has bytes after its key")
        }
        return OpenSSHKeyBlob(cipher: String(decoding: cipher, as: UTF8.self), kdf: String(decoding: kdf, as: UTF8.self),
                              publicWire: Array(publicWire), privateSection: Array(privateSection))
    }
}

// MARK: - SSH mpints

extension SSHReader {
    /// A positive SSH `mpint` in its one canonical form, as its big-endian magnitude: non-empty,
    /// the sign bit clear, and a leading zero byte only where the next byte has its top bit set.
    /// Nil for a negative, zero-padded or truncated number.
    mutating func mpint() -> [UInt8]? {
        guard let bytes = string(), let first = bytes.first, first & 0x80 == 0 else { return nil }
        guard first == 0 else { return Array(bytes) }
        guard bytes.count >= 2, bytes[bytes.startIndex + 1] & 0x80 != 0 else { return nil }
        return Array(bytes.dropFirst())
    }
}

/// The SSH `mpint` body of the positive magnitude `magnitude`: a zero byte first when its top bit is set.
func mpintBytes(_ magnitude: [UInt8]) -> [UInt8] {
    guard let first = magnitude.first else { return [] }
    return first & 0x80 != 0 ? [0] + magnitude : magnitude
}

/// `value` with commas between groups of three digits (2,048), as the messages write numbers.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return value < 0 ? "-" + result : result
}
