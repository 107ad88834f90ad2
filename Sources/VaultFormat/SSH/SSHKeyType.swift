// MARK: - The key types kept in the vault

/// The OpenSSH key types `set --ssh-key` keeps and the agent serves, by their wire names.
public enum SSHKeyType: String, Sendable, CaseIterable, Hashable {
    /// Ed25519 (RFC 8709), signed with libsodium.
    case ed25519 = "ssh-ed25519"
    /// ECDSA on NIST P-256 with SHA-256 (RFC 5656).
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    /// ECDSA on NIST P-384 with SHA-384.
    case ecdsaP384 = "ecdsa-sha2-nistp384"
    /// ECDSA on NIST P-521 with SHA-512.
    case ecdsaP521 = "ecdsa-sha2-nistp521"
    /// RSA of 2,048 to 8,192 bits, e = 65,537 (signatures rsa-sha2-256/512, SHA-1 only on request).
    case rsa = "ssh-rsa"

    /// The short name of `ssh-keygen -t` (`ed25519`, `ecdsa`, `rsa`).
    public var family: String {
        switch self {
        case .ed25519: "ed25519"
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: "ecdsa"
        case .rsa: "rsa"
        }
    }

    /// Whether this is one of the three ECDSA types.
    public var isECDSA: Bool { curve != nil }

    /// The ECDSA curve's parameters; nil for Ed25519 and RSA.
    var curve: Curve? {
        switch self {
        case .ecdsaP256: Curve(sshName: "nistp256", group: "P-256", digest: "SHA256", bits: 256)
        case .ecdsaP384: Curve(sshName: "nistp384", group: "P-384", digest: "SHA384", bits: 384)
        case .ecdsaP521: Curve(sshName: "nistp521", group: "P-521", digest: "SHA512", bits: 521)
        case .ed25519, .rsa: nil
        }
    }

    /// The ECDSA type of `bits` (256, 384, 521), as `ssh-keygen -t ecdsa -b` names them.
    public static func ecdsa(bits: Int) -> SSHKeyType? {
        allCases.first { $0.curve?.bits == bits }
    }

    /// A NIST curve as OpenSSH and libcrypto name it.
    struct Curve {
        /// OpenSSH's identifier inside the key (`nistp256`).
        let sshName: String
        /// libcrypto's group name (`P-256`).
        let group: String
        /// The digest of RFC 5656 §6.2.1 for the curve's size.
        let digest: String
        /// The size of the field and of the group order in bits.
        let bits: Int
        /// One coordinate's (and one scalar's) length in bytes.
        var scalarLength: Int { (bits + 7) / 8 }
        /// The uncompressed point's length: 04 ‖ x ‖ y.
        var pointLength: Int { 1 + 2 * scalarLength }
    }
}

// MARK: - Signature algorithms

/// The algorithm names of SSH signatures this key model makes (`string name ‖ string blob`).
public enum SSHSignatureAlgorithm: String, Sendable, CaseIterable, Hashable {
    /// Ed25519.
    case ed25519 = "ssh-ed25519"
    /// ECDSA P-256 with SHA-256.
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    /// ECDSA P-384 with SHA-384.
    case ecdsaP384 = "ecdsa-sha2-nistp384"
    /// ECDSA P-521 with SHA-512.
    case ecdsaP521 = "ecdsa-sha2-nistp521"
    /// RSA PKCS#1 v1.5 with SHA-256 (RFC 8332).
    case rsaSHA256 = "rsa-sha2-256"
    /// RSA PKCS#1 v1.5 with SHA-512 (RFC 8332).
    case rsaSHA512 = "rsa-sha2-512"
    /// RSA PKCS#1 v1.5 with SHA-1 (RFC 4253): made only when a caller asks for it by name.
    case rsaSHA1 = "ssh-rsa"

    /// The key type that makes signatures of this algorithm.
    public var keyType: SSHKeyType {
        switch self {
        case .ed25519: .ed25519
        case .ecdsaP256: .ecdsaP256
        case .ecdsaP384: .ecdsaP384
        case .ecdsaP521: .ecdsaP521
        case .rsaSHA256, .rsaSHA512, .rsaSHA1: .rsa
        }
    }

    /// libcrypto's digest name for RSA (`SHA256`, `SHA512`, `SHA1`); nil for the others.
    var rsaDigest: String? {
        switch self {
        case .rsaSHA256: "SHA256"
        case .rsaSHA512: "SHA512"
        case .rsaSHA1: "SHA1"
        default: nil
        }
    }
}

// MARK: - The agent's signature flags

/// The flags of an ssh-agent SIGN_REQUEST (draft-miller-ssh-agent §4.5.1, PROTOCOL.agent).
public enum SSHAgentSignFlags {
    /// `SSH_AGENT_RSA_SHA2_256`: an RSA key signs with rsa-sha2-256.
    public static let rsaSHA2_256: UInt32 = 0x02
    /// `SSH_AGENT_RSA_SHA2_512`: an RSA key signs with rsa-sha2-512.
    public static let rsaSHA2_512: UInt32 = 0x04
    /// Every flag this key model knows; any other bit makes `algorithm(for:flags:allowSHA1:)` refuse.
    public static let known: UInt32 = rsaSHA2_256 | rsaSHA2_512

    /// The algorithm a key of `type` signs with under `flags`, as OpenSSH's ssh-agent picks it:
    /// for RSA, SHA2-256 when its flag is set (also with SHA2-512's), else SHA2-512 when that
    /// flag is, else SHA-1 `ssh-rsa` — refused unless `allowSHA1`; the flags mean nothing to the
    /// other types. Unknown bits (the obsolete `SSH_AGENT_OLD_SIGNATURE` 0x01 among them) are refused.
    public static func algorithm(for type: SSHKeyType, flags: UInt32, allowSHA1: Bool) throws(SSHKeyError) -> SSHSignatureAlgorithm {
        guard flags & ~known == 0 else {
            throw .signingRefused("the signature request carries unknown flags (0x\(String(flags & ~known, radix: 16)))")
        }
        switch type {
        case .ed25519: return .ed25519
        case .ecdsaP256: return .ecdsaP256
        case .ecdsaP384: return .ecdsaP384
        case .ecdsaP521: return .ecdsaP521
        case .rsa:
            if flags & rsaSHA2_256 != 0 { return .rsaSHA256 }
            if flags & rsaSHA2_512 != 0 { return .rsaSHA512 }
            guard allowSHA1 else {
                throw .signingRefused("the request asks for an ssh-rsa signature over SHA-1, which is refused (ask for rsa-sha2-256 or rsa-sha2-512)")
            }
            return .rsaSHA1
        }
    }
}
