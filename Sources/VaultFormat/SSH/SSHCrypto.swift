import CLibCrypto
import CSodium
import SecureMemory

// MARK: - EC keys in libcrypto

/// An EC key held by libcrypto (an `EVP_PKEY` on P-256, P-384 or P-521), public or private.
/// Released with `EVP_PKEY_free`, which clears the scalar. Read-only after creation, so shared
/// between threads as libcrypto allows for operations on one key.
final class ECKeyHandle: @unchecked Sendable {
    /// The `EVP_PKEY *`.
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// The key on `curve` with the uncompressed point `point` and, when given, the scalar
    /// `scalar` (a big-endian magnitude); nil unless libcrypto's full public, private and
    /// pairwise checks pass (`vaultfile_ec_key`). With `checked` false (a key checked when it was
    /// read, rebuilt for one signature) the checks are skipped.
    static func make(curve: SSHKeyType.Curve, point: [UInt8], scalar: UnsafeRawBufferPointer?, checked: Bool = true) -> ECKeyHandle? {
        let made: OpaquePointer? = curve.group.withCString { group in
            if let scalar {
                return vaultfile_ec_key(group, point, point.count, scalar.baseAddress?.assumingMemoryBound(to: UInt8.self), scalar.count, checked ? 1 : 0)
            }
            return vaultfile_ec_key(group, point, point.count, nil, 0, 1)
        }
        return made.map(ECKeyHandle.init)
    }

    /// A new key on `curve` (`EVP_PKEY_Q_keygen`).
    static func generate(curve: SSHKeyType.Curve) -> ECKeyHandle? {
        curve.group.withCString { vaultfile_generate_key($0, 0) }.map(ECKeyHandle.init)
    }

    /// The uncompressed public point.
    func point(curve: SSHKeyType.Curve) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: curve.pointLength)
        let length = vaultfile_ec_public_point(pointer, &out, out.count)
        return length == curve.pointLength ? out : nil
    }

    /// The private scalar's magnitude in guarded memory (for re-encoding the key only).
    func scalar(curve: SSHKeyType.Curve) -> SecureBytes? { pkeyNumber(pointer, "priv", capacity: curve.scalarLength) }

    /// The ECDSA signature of `message` (hashed with the curve's digest) as (r, s), each a
    /// magnitude of the scalar's length; nil when libcrypto fails.
    func sign(_ message: [UInt8], curve: SSHKeyType.Curve) -> (r: [UInt8], s: [UInt8])? {
        var r = [UInt8](repeating: 0, count: curve.scalarLength), s = r
        let ok = curve.digest.withCString { vaultfile_ecdsa_sign(pointer, $0, message, message.count, &r, &s, curve.scalarLength) }
        return ok == 1 ? (r, s) : nil
    }

    /// Whether (r, s) is this key's ECDSA signature of `message`.
    func verifies(r: [UInt8], s: [UInt8], message: [UInt8], curve: SSHKeyType.Curve) -> Bool {
        curve.digest.withCString { vaultfile_ecdsa_verify(pointer, $0, message, message.count, r, r.count, s, s.count) } == 1
    }
}

// MARK: - RSA for ssh

extension RSAKeyHandle {
    /// A new RSA key of `bits` bits, e = 65,537 (`EVP_PKEY_Q_keygen`).
    static func generate(bits: Int) -> RSAKeyHandle? { vaultfile_generate_key(nil, UInt32(bits)).map(RSAKeyHandle.init) }

    /// The private number `name` ("d", "rsa-factor1", …) in guarded memory; nil when absent.
    func number(_ name: String) -> SecureBytes? { pkeyNumber(pointer, name, capacity: modulusBytes) }

    /// The public number `name` ("n", "e") as a magnitude.
    func publicNumber(_ name: String) -> [UInt8]? { number(name)?.withUnsafeBytes { Array($0) } }

    /// The PKCS#1 v1.5 signature of `message` over `digest` ("SHA256", "SHA512", "SHA1"), blinded
    /// (libcrypto 3 always blinds RSA private operations); exactly the modulus's length.
    func pkcs1Sign(_ message: [UInt8], digest: String) -> [UInt8]? {
        var signature = [UInt8](repeating: 0, count: modulusBytes)
        var length = signature.count
        let ok = digest.withCString { vaultfile_rsa_pkcs1(pointer, 1, $0, message, message.count, &signature, &length) }
        guard ok == 1, length == modulusBytes else { return nil }
        return signature
    }

    /// Whether `signature` (exactly the modulus's length) is this key's PKCS#1 v1.5 signature of `message`.
    func pkcs1Verifies(_ signature: [UInt8], message: [UInt8], digest: String) -> Bool {
        guard signature.count == modulusBytes else { return false }
        var copy = signature
        var length = copy.count
        return digest.withCString { vaultfile_rsa_pkcs1(pointer, 0, $0, message, message.count, &copy, &length) } == 1
    }
}

/// The big number `name` of `key` as a big-endian magnitude in guarded memory (at most `capacity` bytes).
private func pkeyNumber(_ key: OpaquePointer, _ name: String, capacity: Int) -> SecureBytes? {
    let buffer = SecureBytes(count: capacity)
    let length = buffer.withUnsafeMutableBytes { out in
        name.withCString { vaultfile_pkey_number(key, $0, out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count) }
    }
    guard length > 0 else { return nil }
    return buffer.slice(0..<Int(length))
}

// MARK: - Ed25519 signatures (libsodium)

/// Ed25519 signing and verification with libsodium's `crypto_sign_*`.
enum Ed25519Signing {
    /// The 64-byte secret key (seed ‖ public key) of `seed`, with its public key.
    static func keyPair(seed: UnsafeRawBufferPointer) -> (secretKey: SecureBytes, publicKey: [UInt8])? {
        guard seed.count == 32 else { return nil }
        ensureSodiumInitialised()
        var publicKey = [UInt8](repeating: 0, count: 32)
        let secretKey = SecureBytes(count: 64)
        let status = secretKey.withUnsafeMutableBytes { sk in
            crypto_sign_seed_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self), seed.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return status == 0 ? (secretKey, publicKey) : nil
    }

    /// The detached signature of `message` by the 64-byte `secretKey`.
    static func sign(_ message: [UInt8], secretKey: SecureBytes) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        secretKey.withUnsafeBytes { sk in
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`.
    static func verifies(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32 else { return false }
        ensureSodiumInitialised()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}
