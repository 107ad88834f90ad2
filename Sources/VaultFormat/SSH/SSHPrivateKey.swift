import SecureMemory
import VaultModel

// MARK: - Private keys kept in the vault

/// An OpenSSH private key of a kept type (`SSHKeyType`), checked: the key an entry made with
/// `set --ssh-key` holds, which the agent signs with. Its private part lives in guarded memory
/// (`SecureBytes`: locked, fenced, zeroed when freed): Ed25519's 64-byte secret key, the ECDSA
/// scalar, the RSA numbers. libcrypto holds an ECDSA or RSA key only for the moment of one
/// operation (a check on reading, a signature), built from those bytes and freed right after with
/// the functions that clear its numbers; nothing private is kept in a Swift array beyond the call
/// that reads or writes it, and those arrays are wiped.
///
/// Read with `SSHKeyFile.read` (a whole key file, protected or not) or `parse(_:source:)` (an
/// unencrypted one, as entries hold them); written back with `openSSHText()`, the unencrypted
/// OpenSSH format ssh-keygen reads.
public final class SSHPrivateKey: Sendable {
    /// The private part, by type.
    enum Secret: Sendable {
        /// Ed25519's 64-byte secret key (seed ‖ public key).
        case ed25519(SecureBytes)
        /// An ECDSA key's scalar (and point).
        case ecdsa(ECDSAPrivateParts)
        /// An RSA key's private numbers (and modulus).
        case rsa(RSAPrivateNumbers)
    }

    /// The public key.
    public let publicKey: SSHPublicKey
    /// The key's comment (the file's own, often user@host; empty when there is none).
    public let comment: String
    let secret: Secret

    /// The key's type.
    public var type: SSHKeyType { publicKey.type }

    /// The `authorized_keys` line with this key's comment.
    public var authorizedKeysLine: String { publicKey.authorizedKeysLine(comment: comment) }

    init(publicKey: SSHPublicKey, comment: String, secret: Secret) {
        self.publicKey = publicKey
        self.comment = comment
        self.secret = secret
    }

    /// The longest comment kept, in bytes (ssh-keygen's own are a few dozen).
    public static let maxCommentLength = 1_024

    /// An unencrypted OpenSSH private key (`-----BEGIN OPENSSH PRIVATE KEY-----`, cipher "none"),
    /// as an entry made with `--ssh-key` holds it. A protected key is refused here
    /// (`SSHKeyFile.read` reads those). `source` names the key in messages.
    public static func parse(_ bytes: [UInt8], source: String) throws(SSHKeyError) -> SSHPrivateKey {
        switch try SSHKeyFile.read(bytes, source: source) {
        case .plain(let key): return key
        case .protected:
            throw .damaged("\(source): the key is protected by a passphrase; an ssh key entry holds an unencrypted key")
        }
    }

    /// `parse(_:source:)` of bytes in guarded memory (an entry's value).
    public static func parse(_ bytes: SecureBytes, source: String) throws(SSHKeyError) -> SSHPrivateKey {
        var copy = bytes.withUnsafeBytes { Array($0) }
        defer { wipe(&copy) }
        return try parse(copy, source: source)
    }

    // MARK: Reading the private section

    /// The key in a private section in the clear (unencrypted, or as the decryptor hands it):
    /// `check ‖ check ‖ key ‖ string comment ‖ padding 1 2 3 …`, padded to `blockSize` (8, or
    /// the cipher's 16), after the file's public blob `publicWire`. Refuses, naming `source`:
    /// check integers that differ, a private key whose type or public part differs from the
    /// file's public key, numbers that are not canonical or do not make one key, a point off the
    /// curve, a scalar out of range, a seed that does not derive its public key, a comment with
    /// control characters or over `maxCommentLength`, bad padding. The caller wipes `section`.
    static func fromPrivateSection(_ section: ArraySlice<UInt8>, publicWire: [UInt8], blockSize: Int, source: String) throws(SSHKeyError) -> SSHPrivateKey {
        func refuse(_ why: String) -> SSHKeyError { .damaged("\(source): \(why)") }
        let publicKey: SSHPublicKey
        do throws(SSHKeyError) { publicKey = try SSHPublicKey(wire: publicWire) } catch {
            switch error {
            case .unsupported(let why): throw .unsupported("\(source): \(why)")
            default: throw refuse(error.description)
            }
        }
        guard section.count % blockSize == 0 else { throw refuse("the private section is not a whole number of \(blockSize)-byte blocks") }
        var reader = SSHReader(section)
        guard let check1 = reader.uint32(), let check2 = reader.uint32() else { throw refuse("the private section is truncated") }
        guard check1 == check2 else { throw refuse("the key's check integers differ (damaged, or a wrong passphrase)") }
        guard let innerType = reader.string(), innerType.elementsEqual(publicKey.type.rawValue.utf8) else {
            throw refuse("the private key's type differs from the key's public key (\(publicKey.type.rawValue))")
        }
        let secret: Secret
        switch publicKey.type {
        case .ed25519: secret = try readEd25519(&reader, publicKey: publicKey, refuse: refuse)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521: secret = try readECDSA(&reader, publicKey: publicKey, refuse: refuse)
        case .rsa: secret = try readRSA(&reader, publicKey: publicKey, refuse: refuse)
        }
        guard let comment = reader.string() else { throw refuse("the private section is truncated (no comment)") }
        let padding = reader.rest
        guard padding.count < blockSize, padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) }) else {
            throw refuse("the private section's padding is malformed")
        }
        return SSHPrivateKey(publicKey: publicKey, comment: try checkedComment(comment, refuse: refuse), secret: secret)
    }

    /// The comment as text: UTF-8, at most `maxCommentLength` bytes, no control characters (it
    /// ends an `authorized_keys` line and is shown in listings).
    static func checkedComment(_ bytes: some Collection<UInt8>, refuse: (String) -> SSHKeyError) throws(SSHKeyError) -> String {
        guard bytes.count <= maxCommentLength else { throw refuse("the key's comment is \(bytes.count) bytes; vaultfile keeps at most \(maxCommentLength)") }
        guard let text = String(validating: Array(bytes), as: UTF8.self) else { throw refuse("the key's comment is not UTF-8") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw refuse("the key's comment holds control characters")
        }
        return text
    }

    /// `string pk ‖ string (seed ‖ pk)`: both copies of the public key equal the file's, and the seed derives it.
    private static func readEd25519(_ reader: inout SSHReader, publicKey: SSHPublicKey, refuse: (String) -> SSHKeyError) throws(SSHKeyError) -> Secret {
        let expected = publicKey.wireBytes.suffix(32)
        guard let innerPublic = reader.string(), let pair = reader.string() else { throw refuse("the ssh-ed25519 private key is truncated") }
        guard innerPublic.elementsEqual(expected), pair.count == 64, pair.suffix(32).elementsEqual(expected) else {
            throw refuse("the private key's public half differs from the key's public key")
        }
        var seed = Array(pair.prefix(32))
        defer { wipe(&seed) }
        guard let made = seed.withUnsafeBytes({ Ed25519Signing.keyPair(seed: $0) }), made.publicKey.elementsEqual(expected) else {
            throw refuse("the private key does not derive its public key")
        }
        return .ed25519(made.secretKey)
    }

    /// `string curve ‖ string Q ‖ mpint d`: the curve and point equal the file's; d canonical,
    /// above √order as OpenSSH requires (sshkey_ec_validate_private), and libcrypto's private and
    /// pairwise checks pass (d in [1, order − 1], Q = d·G).
    private static func readECDSA(_ reader: inout SSHReader, publicKey: SSHPublicKey, refuse: (String) -> SSHKeyError) throws(SSHKeyError) -> Secret {
        let curve = publicKey.type.curve!
        var expected = SSHReader(publicKey.wireBytes[...])
        _ = expected.string(); _ = expected.string()
        let point = Array(expected.string() ?? [])
        guard let curveName = reader.string(), curveName.elementsEqual(curve.sshName.utf8), let innerPoint = reader.string() else {
            throw refuse("the \(publicKey.type.rawValue) private key is truncated or names another curve")
        }
        guard innerPoint.elementsEqual(point) else { throw refuse("the private key's public half differs from the key's public key") }
        guard var scalar = reader.mpint() else { throw refuse("the private key's scalar is truncated or not canonical") }
        defer { wipe(&scalar) }
        let scalarBits = scalar.isEmpty ? 0 : (scalar.count - 1) * 8 + (8 - scalar[0].leadingZeroBitCount)
        guard scalar.count <= curve.scalarLength, scalarBits > curve.bits / 2 else {
            throw refuse("the private key's scalar is out of range for \(curve.group)")
        }
        // libcrypto checks the key and frees it at once: the scalar stays only in guarded memory.
        guard scalar.withUnsafeBytes({ ECKeyHandle.make(curve: curve, point: point, scalar: $0) }) != nil else {
            throw refuse("the private key's scalar does not make its public point on \(curve.group) (or is out of range)")
        }
        return .ecdsa(ECDSAPrivateParts(point: point, scalar: SecureBytes(copying: scalar)))
    }

    /// `mpint n ‖ mpint e ‖ mpint d ‖ mpint iqmp ‖ mpint p ‖ mpint q`: n and e equal the file's,
    /// every number canonical, and they make one key (n = p·q, iqmp·q ≡ 1 mod p, e·d ≡ 1 mod p−1 and q−1).
    private static func readRSA(_ reader: inout SSHReader, publicKey: SSHPublicKey, refuse: (String) -> SSHKeyError) throws(SSHKeyError) -> Secret {
        guard let rsa = try? SSHRSAPublicKey(wire: publicKey.wireBytes) else { throw refuse("the ssh-rsa public key is malformed") }
        guard let n = reader.mpint(), let e = reader.mpint() else { throw refuse("the private key's n or e is truncated or not canonical") }
        guard n == rsa.modulus, e == SSHRSAPublicKey.exponent else { throw refuse("the private key's public half differs from the key's public key") }
        guard var d = reader.mpint(), var iqmp = reader.mpint(), var p = reader.mpint(), var q = reader.mpint() else {
            throw refuse("the private key's numbers are truncated or not canonical")
        }
        defer { wipe(&d); wipe(&iqmp); wipe(&p); wipe(&q) }
        guard d.count <= n.count, p.count <= n.count, q.count <= n.count, iqmp.count <= n.count,
              RSAKeyHandle.privateKey(n: n, e: e, d: d, iqmp: iqmp, p: p, q: q) != nil else {
            throw refuse("the private key's numbers do not make one RSA key (n is not p·q, or d or iqmp is wrong)")
        }
        // Checked by libcrypto and freed at once: the numbers stay only in guarded memory.
        return .rsa(RSAPrivateNumbers(n: n, d: SecureBytes(copying: d), iqmp: SecureBytes(copying: iqmp),
                                      p: SecureBytes(copying: p), q: SecureBytes(copying: q)))
    }
}
