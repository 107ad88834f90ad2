import CLibCrypto
import SecureMemory

// MARK: - ECDSA and RSA private numbers in guarded memory

/// An ECDSA key's private scalar in guarded memory (locked, fenced, zeroed when freed), beside its
/// public point. libcrypto gets the key only for one operation (`withHandle`): the `EVP_PKEY` is
/// built from these bytes, used, and freed at once, and libcrypto clears the scalar's `BIGNUM`s
/// when it frees them (`EC_KEY_free`, `BN_CTX_free`, the secure block of the parameters).
struct ECDSAPrivateParts: Sendable {
    /// The uncompressed public point (04 ‖ x ‖ y).
    let point: [UInt8]
    /// The scalar, a big-endian magnitude.
    let scalar: SecureBytes

    /// The parts of a key libcrypto holds (a key just made), copied out into guarded memory.
    init?(handle: ECKeyHandle, curve: SSHKeyType.Curve) {
        guard let point = handle.point(curve: curve), let scalar = handle.scalar(curve: curve) else { return nil }
        self.point = point
        self.scalar = scalar
    }

    /// Parts already checked (`ECKeyHandle.make` passed on them).
    init(point: [UInt8], scalar: SecureBytes) {
        self.point = point
        self.scalar = scalar
    }

    /// Runs `body` with the key built in libcrypto from these parts (unchecked: they were checked
    /// when read or made), freed when `body` returns; nil when libcrypto fails.
    func withHandle<R>(curve: SSHKeyType.Curve, _ body: (ECKeyHandle) -> R?) -> R? {
        scalar.withUnsafeBytes { scalar in
            guard let handle = ECKeyHandle.make(curve: curve, point: point, scalar: scalar, checked: false) else { return nil }
            return withExtendedLifetime(handle) { body(handle) }
        }
    }
}

/// An RSA key's private numbers (d, iqmp, p, q; big-endian magnitudes) in guarded memory, beside
/// its public modulus (the exponent is always 65,537). libcrypto gets the key only for one
/// operation (`withHandle`), which rebuilds it with the consistency checks of `vaultfile_rsa_key`
/// (n = p·q, iqmp, d against e: a few multiplications, far below one signature's cost) and frees it
/// right after: `RSA_free` clears every private `BIGNUM`, the Montgomery contexts and the
/// blinding, `BN_CTX_free` its temporaries.
struct RSAPrivateNumbers: Sendable {
    /// The modulus.
    let n: [UInt8]
    /// The private exponent, the CRT coefficient q⁻¹ mod p, and the two primes.
    let d: SecureBytes, iqmp: SecureBytes, p: SecureBytes, q: SecureBytes

    /// The numbers of a key libcrypto holds (a key just made), copied out into guarded memory.
    init?(handle: RSAKeyHandle) {
        guard let n = handle.publicNumber("n"), let d = handle.number("d"), let iqmp = handle.number("rsa-coefficient1"),
              let p = handle.number("rsa-factor1"), let q = handle.number("rsa-factor2") else { return nil }
        self.init(n: n, d: d, iqmp: iqmp, p: p, q: q)
    }

    /// Numbers already checked (`RSAKeyHandle.privateKey` passed on them).
    init(n: [UInt8], d: SecureBytes, iqmp: SecureBytes, p: SecureBytes, q: SecureBytes) {
        self.n = n
        self.d = d
        self.iqmp = iqmp
        self.p = p
        self.q = q
    }

    /// Runs `body` with the key built in libcrypto from these numbers, freed when `body` returns;
    /// nil when libcrypto fails.
    func withHandle<R>(_ body: (RSAKeyHandle) -> R?) -> R? {
        let e = SSHRSAPublicKey.exponent
        return d.withUnsafeBytes { d in
            iqmp.withUnsafeBytes { iqmp in
                p.withUnsafeBytes { p in
                    q.withUnsafeBytes { q in
                        guard let key = vaultfile_rsa_key(n, n.count, e, e.count, Self.bytes(d), d.count, Self.bytes(iqmp), iqmp.count,
                                                          Self.bytes(p), p.count, Self.bytes(q), q.count) else { return nil }
                        let handle = RSAKeyHandle(key)
                        return withExtendedLifetime(handle) { body(handle) }
                    }
                }
            }
        }
    }

    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
