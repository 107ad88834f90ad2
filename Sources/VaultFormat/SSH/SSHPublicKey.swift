import SecureMemory
import VaultModel

// MARK: - Public keys of every kept type

/// An ssh public key of a type `SSHKeyType` names, held as its wire blob (RFC 4253 §6.6): what
/// the agent lists, what `authorized_keys` holds, what a fingerprint hashes. Made only from a
/// blob that passed the checks of its type: an Ed25519 key of 32 bytes; an ECDSA point of the
/// named curve, uncompressed, on the curve and of the group's order; an RSA key of 2,048 to
/// 8,192 bits with e = 65,537, every mpint canonical.
public struct SSHPublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's type.
    public let type: SSHKeyType
    /// The wire blob: `string type ‖ …` as ssh sends it and the agent lists it.
    public let wireBytes: [UInt8]
    /// The key's size in bits (256 for Ed25519, the curve's for ECDSA, the modulus's for RSA).
    public let bits: Int

    /// Keys are equal when their blobs are.
    public static func == (lhs: SSHPublicKey, rhs: SSHPublicKey) -> Bool { lhs.wireBytes == rhs.wireBytes }
    /// Hashes the blob.
    public func hash(into hasher: inout Hasher) { hasher.combine(wireBytes) }

    init(type: SSHKeyType, wireBytes: [UInt8], bits: Int) {
        self.type = type
        self.wireBytes = wireBytes
        self.bits = bits
    }

    /// The key in the wire blob `wire`, checked as its type requires; `SSHKeyError.damaged` for
    /// a malformed blob, `.unsupported` for another type (DSA, sk-…, certificates) or size.
    public init(wire: [UInt8]) throws(SSHKeyError) {
        var reader = SSHReader(wire[...])
        guard let name = reader.string() else { throw .damaged("the ssh public key is truncated") }
        guard let type = SSHKeyType(rawValue: String(decoding: name, as: UTF8.self)) else {
            throw .unsupported("ssh keys of type \(printableName(name)) are not kept; vaultfile keeps ssh-ed25519, ecdsa-sha2-nistp256/384/521 and ssh-rsa keys")
        }
        switch type {
        case .ed25519:
            guard let key = reader.string(), key.count == 32, reader.isAtEnd else { throw .damaged("the ssh-ed25519 public key is not 32 bytes") }
            self.init(type: type, wireBytes: wire, bits: 256)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let curve = type.curve!
            guard let curveName = reader.string(), curveName.elementsEqual(curve.sshName.utf8) else {
                throw .damaged("the \(type.rawValue) public key names another curve")
            }
            guard let point = reader.string(), reader.isAtEnd else { throw .damaged("the \(type.rawValue) public key is truncated or has bytes after it") }
            try Self.checkPoint(Array(point), curve: curve, type: type)
            self.init(type: type, wireBytes: wire, bits: curve.bits)
        case .rsa:
            let rsa: SSHRSAPublicKey
            do throws(VaultError) { rsa = try SSHRSAPublicKey(wire: wire) } catch {
                throw Self.rsaRefusal(error)
            }
            self.init(type: type, wireBytes: rsa.wireBytes, bits: rsa.bits)
        }
    }

    /// Parses an `authorized_keys`-style line `TYPE BASE64 [COMMENT]`, returning the key and its comment.
    public static func parse(line: String) throws(SSHKeyError) -> (key: SSHPublicKey, comment: String) {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[1].utf8.count <= 16_384, let wire = base64Decode(Array(parts[1].utf8)) else {
            throw .damaged("not an ssh public key line (TYPE BASE64 [COMMENT])")
        }
        let key = try SSHPublicKey(wire: wire)
        guard parts[0] == key.type.rawValue else { throw .damaged("the line's type \(parts[0]) differs from its key's (\(key.type.rawValue))") }
        return (key, parts.count > 2 ? String(parts[2]).trimmingTrailingSpaces() : "")
    }

    /// `TYPE BASE64`, without a comment.
    public var description: String { type.rawValue + " " + base64Encode(wireBytes) }

    /// The `authorized_keys` line: `TYPE BASE64 COMMENT` (no comment: `TYPE BASE64`), as `ssh-keygen -y` prints it.
    public func authorizedKeysLine(comment: String) -> String { comment.isEmpty ? description : description + " " + comment }

    /// `SHA256:…` (unpadded Base64 of SHA-256 of the blob), as `ssh-keygen -l` prints it.
    public var fingerprint: String { "SHA256:" + base64Encode(SHA256.hash(wireBytes), padded: false) }

    // MARK: Checks

    /// Refuses an ECDSA point that is not uncompressed and of the curve's length, or that
    /// libcrypto's full public check refuses (off the curve, at infinity, outside the group).
    static func checkPoint(_ point: [UInt8], curve: SSHKeyType.Curve, type: SSHKeyType) throws(SSHKeyError) {
        guard point.count == curve.pointLength, point.first == 0x04 else {
            throw .damaged("the \(type.rawValue) public key's point is not an uncompressed point of \(curve.pointLength) bytes")
        }
        guard ECKeyHandle.make(curve: curve, point: point, scalar: nil) != nil else {
            throw .damaged("the \(type.rawValue) public key's point is not a valid point of \(curve.group)")
        }
    }

    /// SSHRSAPublicKey's refusal as this model's: sizes and exponents unsupported, the rest damaged.
    static func rsaRefusal(_ error: VaultError) -> SSHKeyError {
        let why = error.description
        return why.contains("-bit modulus") || why.contains("exponent") ? .unsupported(why) : .damaged(why)
    }
}

/// Up to 40 printable ASCII characters of a name read from a key, quoted, for a message.
func printableName(_ name: some Collection<UInt8>) -> String {
    "'" + String(decoding: name.prefix(40).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self) + "'"
}
