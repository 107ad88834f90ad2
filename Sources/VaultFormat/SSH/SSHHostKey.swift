import SecureMemory
import VaultModel

// MARK: - Keys whose signatures are checked

/// A public key whose ssh signatures can be checked: an ssh server's host key as a client sends it
/// in `session-bind@openssh.com` (plain, or an OpenSSH certificate, PROTOCOL.certkeys), and every
/// key `SSHPublicKey` keeps. Wider than what the vault keeps, because a host key is the server's
/// choice and ssh already accepted it: ssh-rsa keys of 1,024 to 16,384 bits (OpenSSH's own floor
/// and ceiling) with any odd exponent from 3 to 2⁶⁴, besides ssh-ed25519 and ECDSA on P-256/384/521.
///
/// A certificate (`…-cert-v01@openssh.com`) is read whole and strictly, its CA's signature over it
/// verified (as OpenSSH's parser does; whether that CA is trusted is the client's business, as are
/// its principals and dates); signatures are then checked with the key it certifies, which is what
/// the server signs its key exchange with.
public struct SSHHostKey: Sendable {
    /// The certified key's plain wire blob (the key itself when it is not a certificate).
    public let plainKey: [UInt8]
    /// Whether the blob was a certificate.
    public let isCertificate: Bool
    /// The key's type.
    public let type: SSHKeyType
    private let material: Material

    /// What checks a signature.
    private enum Material: Sendable {
        case ed25519([UInt8])
        case ecdsa(ECKeyHandle)
        case rsa(RSAKeyHandle)
    }

    /// The smallest and largest RSA moduli taken, in bits (OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE
    /// and its largest bignum).
    public static let rsaBits = 1_024...16_384

    /// The suffix of OpenSSH certificate key types.
    static let certificateSuffix = "-cert-v01@openssh.com"

    /// `SHA256:…` of the plain key, as `ssh-keygen -l` prints it for the key and its certificate alike.
    public var fingerprint: String { "SHA256:" + base64Encode(SHA256.hash(plainKey), padded: false) }

    /// The key in `wire`; `.unsupported` for another type (DSA, sk-…, a certificate of one) or an
    /// RSA size outside `rsaBits`, `.damaged` for a malformed blob or a certificate whose CA
    /// signature does not verify.
    public init(wire: [UInt8]) throws(SSHKeyError) {
        var reader = SSHReader(wire[...])
        guard let nameBytes = reader.string() else { throw .damaged("the host key is truncated") }
        let name = String(decoding: nameBytes, as: UTF8.self)
        if name.hasSuffix(Self.certificateSuffix), let type = SSHKeyType(rawValue: String(name.dropLast(Self.certificateSuffix.count))) {
            try self.init(certificate: wire, type: type, reader: &reader)
            return
        }
        guard let type = SSHKeyType(rawValue: name) else { throw .unsupported("host keys of type \(printableName(nameBytes)) are not checked") }
        let material = try Self.material(type: type, reader: &reader)
        guard reader.isAtEnd else { throw .damaged("the \(type.rawValue) host key has bytes after it") }
        self.init(plainKey: wire, isCertificate: false, type: type, material: material)
    }

    private init(plainKey: [UInt8], isCertificate: Bool, type: SSHKeyType, material: Material) {
        self.plainKey = plainKey
        self.isCertificate = isCertificate
        self.type = type
        self.material = material
    }

    /// `string nonce ‖ key fields ‖ uint64 serial ‖ uint32 type ‖ string key id ‖ string principals
    /// ‖ uint64 valid after ‖ uint64 valid before ‖ string critical options ‖ string extensions ‖
    /// string reserved ‖ string signature key ‖ string signature`, the signature over every byte
    /// before it, by a plain (not certificate) key.
    private init(certificate wire: [UInt8], type: SSHKeyType, reader: inout SSHReader) throws(SSHKeyError) {
        let what = "the \(type.rawValue) certificate"
        guard reader.string() != nil else { throw .damaged("\(what) is truncated (nonce)") }
        let keyStart = wire.count - reader.rest.count
        let material = try Self.material(type: type, reader: &reader)
        let keyEnd = wire.count - reader.rest.count
        guard reader.raw(8) != nil, let certType = reader.uint32(), certType == 1 || certType == 2 else {
            throw .damaged("\(what) is truncated or of an unknown type (neither user nor host)")
        }
        guard reader.string() != nil, let principals = reader.string(), reader.raw(16) != nil,
              let critical = reader.string(), let extensions = reader.string(), reader.string() != nil,
              Self.isStringList(principals), Self.isStringList(critical, pairs: true), Self.isStringList(extensions, pairs: true) else {
            throw .damaged("\(what) is truncated or its principals, options or extensions are malformed")
        }
        guard let caBlob = reader.string() else { throw .damaged("\(what) is truncated (signature key)") }
        let signedLength = wire.count - reader.rest.count
        guard let signature = reader.string(), reader.isAtEnd else { throw .damaged("\(what) is truncated or has bytes after it") }
        let authority: SSHHostKey
        do throws(SSHKeyError) { authority = try SSHHostKey(wire: Array(caBlob)) } catch {
            throw .unsupported("\(what) is signed by a key vaultfile does not check: \(error.description)")
        }
        guard !authority.isCertificate else { throw .damaged("\(what) is signed by another certificate") }
        guard authority.verifies(signature: Array(signature), of: Array(wire[..<signedLength]), allowSHA1: true) else {
            throw .damaged("\(what)'s CA signature does not verify")
        }
        // The key fields come in the plain key's order (RSA too: e, then n).
        var plain: [UInt8] = []
        appendString(&plain, Array(type.rawValue.utf8))
        plain += wire[keyStart..<keyEnd]
        self.init(plainKey: plain, isCertificate: true, type: type, material: material)
    }

    // MARK: Checking a signature

    /// Whether `signature` (`string algorithm ‖ string blob`) is this key's signature of `data`:
    /// the algorithm one of the key's type (RSA: rsa-sha2-256, rsa-sha2-512, or ssh-rsa's SHA-1 only
    /// with `allowSHA1`), the encoding strict (nothing trailing; ECDSA mpints canonical and no
    /// longer than the order; an RSA signature of the modulus's length, or shorter and left-padded
    /// with zeros as OpenSSH accepts).
    public func verifies(signature: [UInt8], of data: [UInt8], allowSHA1: Bool = false) -> Bool {
        var reader = SSHReader(signature[...])
        guard let name = reader.string(), let algorithm = SSHSignatureAlgorithm(rawValue: String(decoding: name, as: UTF8.self)),
              algorithm.keyType == type, algorithm != .rsaSHA1 || allowSHA1, let body = reader.string(), reader.isAtEnd else { return false }
        switch material {
        case .ed25519(let key):
            return Ed25519Signing.verifies(Array(body), message: data, publicKey: key)
        case .ecdsa(let handle):
            let curve = type.curve!
            var numbers = SSHReader(body)
            guard let r = numbers.mpint(), let s = numbers.mpint(), numbers.isAtEnd, r.count <= curve.scalarLength, s.count <= curve.scalarLength else {
                return false
            }
            return handle.verifies(r: r, s: s, message: data, curve: curve)
        case .rsa(let handle):
            guard body.count <= handle.modulusBytes else { return false }
            let padded = [UInt8](repeating: 0, count: handle.modulusBytes - body.count) + body
            return handle.pkcs1Verifies(padded, message: data, digest: algorithm.rsaDigest!)
        }
    }

    // MARK: Reading the key fields

    /// The fields of a key of `type` after its name (ed25519: `string pk`; ECDSA: `string curve ‖
    /// string point`; RSA: `mpint e ‖ mpint n`), checked.
    private static func material(type: SSHKeyType, reader: inout SSHReader) throws(SSHKeyError) -> Material {
        switch type {
        case .ed25519:
            guard let key = reader.string(), key.count == 32 else { throw .damaged("the ssh-ed25519 host key is not 32 bytes") }
            return .ed25519(Array(key))
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let curve = type.curve!
            guard let curveName = reader.string(), curveName.elementsEqual(curve.sshName.utf8), let point = reader.string() else {
                throw .damaged("the \(type.rawValue) host key is truncated or names another curve")
            }
            guard point.count == curve.pointLength, point.first == 0x04,
                  let handle = ECKeyHandle.make(curve: curve, point: Array(point), scalar: nil) else {
                throw .damaged("the \(type.rawValue) host key's point is not a valid point of \(curve.group)")
            }
            return .ecdsa(handle)
        case .rsa:
            guard let e = reader.mpint(), let n = reader.mpint() else { throw .damaged("the ssh-rsa host key's numbers are truncated or not canonical") }
            let bits = (n.count - 1) * 8 + (8 - n[0].leadingZeroBitCount)
            guard rsaBits.contains(bits) else {
                throw .unsupported("the ssh-rsa host key has a \(grouped(bits))-bit modulus; vaultfile checks RSA host keys of "
                                   + "\(grouped(rsaBits.lowerBound)) to \(grouped(rsaBits.upperBound)) bits")
            }
            guard n.last! & 1 == 1, e.last! & 1 == 1, e.count <= 8, e != [1] else {
                throw .damaged("the ssh-rsa host key's modulus or exponent is not an RSA key's (even, 1, or over 64 bits)")
            }
            guard let handle = RSAKeyHandle.publicKey(n: n, e: e) else { throw .damaged("libcrypto refuses the ssh-rsa host key") }
            return .rsa(handle)
        }
    }

    /// Whether `bytes` is a sequence of SSH strings (with `pairs`, an even number of them: names and data).
    private static func isStringList(_ bytes: ArraySlice<UInt8>, pairs: Bool = false) -> Bool {
        var reader = SSHReader(bytes)
        var count = 0
        while !reader.isAtEnd {
            guard reader.string() != nil else { return false }
            count += 1
        }
        return !pairs || count % 2 == 0
    }
}
