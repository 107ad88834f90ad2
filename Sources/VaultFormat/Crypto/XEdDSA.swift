import CSodium
import SecureMemory

// MARK: - XEd25519 signatures

/// XEd25519 signatures made with an X25519 key pair: Signal's "The XEdDSA and VXEdDSA Signature
/// Schemes" (revision 1, 2016), over libsodium's Edwards25519 point and scalar functions.
///
/// Signing clamps the X25519 secret k, computes E = kB, and signs as the Edwards key A = E with its
/// sign bit cleared, using a = −k (mod q) when E's sign bit is 1 and a = k (mod q) otherwise;
/// the nonce is r = hash1(a ‖ M ‖ Z) (mod q), where hash1(X) = SHA-512(0xFE ‖ 0xFF×31 ‖ X) and Z
/// is 64 fresh random bytes (as in Signal's reference code and libxeddsa, the a hashed there is
/// the clamped k unreduced when E's sign bit is 0); h = SHA-512(R ‖ A ‖ M) (mod q), s = r + h·a. The signature R ‖ s is an ordinary Ed25519 signature under A, so
/// verification maps the Montgomery u-coordinate to A and calls libsodium's strict
/// `crypto_sign_verify_detached`. Checked byte for byte against libxeddsa (PyPI `xeddsa`), see
/// `Fixtures/vectors/xeddsa/`.
///
/// Every secret intermediate (the clamped and reduced scalars, a, the SHA-512 state, r, h·a) lives
/// in guarded memory and is wiped when signing returns. The choice between k and −k is a masked
/// select, not a branch. Not yet used by the vault format.
public enum XEdDSA {
    /// X25519 secret and public key size in bytes.
    public static let keyLength = 32
    /// Size of the random input Z in bytes.
    public static let randomLength = 64
    /// Signature size in bytes (R ‖ s).
    public static let signatureLength = 64

    /// Why a signature could not be made, or why a public key is refused.
    public enum Failure: CategorizedError, Equatable {
        /// A key is not 32 bytes.
        case invalidKeyLength(Int)
        /// Z is not 64 bytes.
        case invalidRandomLength(Int)
        /// The public key's u-coordinate, read as a 256-bit little-endian number, is p = 2^255 − 19
        /// or more (bit 255 set included): not a canonical field element.
        case publicKeyNotCanonical
        /// The public key has no Edwards point usable for signatures: u = p − 1 (u + 1 = 0), or
        /// the point does not decompress, is of small order or lies outside the prime-order subgroup.
        case publicKeyNotUsable
        /// libsodium refused a scalar multiplication (a zero scalar; not expected from a clamped key).
        case scalarMultiplicationFailed

        public var description: String {
            switch self {
            case .invalidKeyLength(let length): return "an XEd25519 key is \(length) bytes; it must be 32"
            case .invalidRandomLength(let length): return "the XEd25519 random input is \(length) bytes; it must be 64"
            case .publicKeyNotCanonical:
                return "the X25519 public key is not a canonical field element (2^255 - 19 or more), so it cannot verify signatures"
            case .publicKeyNotUsable:
                return "the X25519 public key has no Edwards point that can verify signatures (u = p - 1, off the curve or of small order)"
            case .scalarMultiplicationFailed: return "an Edwards25519 scalar multiplication failed while signing"
            }
        }

        /// A wrong size or a failed multiplication is the caller's bug; a refused public key came from outside.
        public var category: ErrorCategory {
            switch self {
            case .invalidKeyLength, .invalidRandomLength, .scalarMultiplicationFailed: return .internalFailure
            case .publicKeyNotCanonical, .publicKeyNotUsable: return .invalidInput
            }
        }
    }

    // MARK: - Signing

    /// Signs `message` with the X25519 secret `secret`, with 64 fresh random bytes from libsodium's CSPRNG as Z.
    public static func sign(message: [UInt8], secret: SecureBytes) throws(Failure) -> [UInt8] {
        ensureSodiumInitialised()
        let random = SecureBytes(count: randomLength)
        random.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return try sign(message: message, secret: secret, random: random)
    }

    /// Signs `message` with the X25519 secret `secret` (any 32 bytes; clamped first) and the
    /// 64-byte random input `random` (Z). Deterministic in its inputs: the same Z gives the same
    /// signature, which is what the vectors check; real signatures use the overload that draws Z.
    public static func sign(message: [UInt8], secret: SecureBytes, random: SecureBytes) throws(Failure) -> [UInt8] {
        guard secret.count == keyLength else { throw .invalidKeyLength(secret.count) }
        guard random.count == randomLength else { throw .invalidRandomLength(random.count) }
        ensureSodiumInitialised()
        let scratch = SecureBytes(count: Scratch.length)
        let signature = scratch.withUnsafeMutableBytes { raw in
            secret.withUnsafeBytes { secretBytes in
                random.withUnsafeBytes { randomBytes in
                    sign(message: message, secret: secretBytes, random: randomBytes, scratch: Scratch(raw))
                }
            }
        }
        guard let signature else { throw .scalarMultiplicationFailed }
        return signature
    }

    /// Where each secret intermediate lives inside one guarded buffer (wiped when it is freed).
    private struct Scratch {
        static let stateLength = MemoryLayout<crypto_hash_sha512_state>.size
        /// The SHA-512 state first (the buffer starts on a 64-byte boundary), then the scalars.
        static let length = stateLength + 64 + 5 * 32

        let state: UnsafeMutablePointer<crypto_hash_sha512_state>
        /// 64 bytes: the clamped k widened for reduction, then each hash output.
        let wide: UnsafeMutablePointer<UInt8>
        let reduced: UnsafeMutablePointer<UInt8>
        let negated: UnsafeMutablePointer<UInt8>
        let a: UnsafeMutablePointer<UInt8>
        let r: UnsafeMutablePointer<UInt8>
        /// 32 bytes: first the nonce's copy of a (see `sign`), then h·a.
        let product: UnsafeMutablePointer<UInt8>

        init(_ raw: UnsafeMutableRawBufferPointer) {
            state = raw.baseAddress!.bindMemory(to: crypto_hash_sha512_state.self, capacity: 1)
            let bytes = (raw.baseAddress! + Self.stateLength).bindMemory(to: UInt8.self, capacity: 64 + 5 * 32)
            wide = bytes
            reduced = bytes + 64
            negated = bytes + 96
            a = bytes + 128
            r = bytes + 160
            product = bytes + 192
        }
    }

    /// The prefix of hash1 (the spec's 2^256 − 1 − i for i = 1) as 32 little-endian bytes: 0xFE, then 0xFF×31.
    private static let hash1Prefix: [UInt8] = [0xFE] + [UInt8](repeating: 0xFF, count: 31)

    /// The signing steps on raw pointers; nil when a scalar multiplication is refused.
    private static func sign(message: [UInt8], secret: UnsafeRawBufferPointer, random: UnsafeRawBufferPointer, scratch: Scratch) -> [UInt8]? {
        // k = clamp(secret), widened to 64 bytes; E = kB; k mod q.
        memcpy(scratch.wide, secret.baseAddress!, keyLength)
        scratch.wide[0] &= 248
        scratch.wide[31] &= 127
        scratch.wide[31] |= 64
        var edwardsKey = [UInt8](repeating: 0, count: 32)
        guard crypto_scalarmult_ed25519_base_noclamp(&edwardsKey, scratch.wide) == 0 else { return nil }
        crypto_core_ed25519_scalar_reduce(scratch.reduced, scratch.wide)

        // a = −k mod q when E's sign bit is 1, else k: masked selects, no branch. The nonce hashes
        // the 32 bytes of a as Signal's reference code (xed25519_sign) and libxeddsa do: −k
        // reduced, or the clamped k as it is (the spec writes k mod q; either gives a valid
        // signature, this one gives theirs byte for byte). s uses the reduced scalar in both cases.
        crypto_core_ed25519_scalar_negate(scratch.negated, scratch.reduced)
        let mask = 0 &- (edwardsKey[31] >> 7)
        for index in 0..<32 {
            scratch.product[index] = scratch.wide[index] ^ (mask & (scratch.wide[index] ^ scratch.negated[index]))
            scratch.a[index] = scratch.reduced[index] ^ (mask & (scratch.reduced[index] ^ scratch.negated[index]))
        }
        edwardsKey[31] &= 0x7F

        // r = hash1(a ‖ M ‖ Z) mod q; R = rB.
        crypto_hash_sha512_init(scratch.state)
        crypto_hash_sha512_update(scratch.state, hash1Prefix, 32)
        crypto_hash_sha512_update(scratch.state, scratch.product, 32)
        crypto_hash_sha512_update(scratch.state, message, UInt64(message.count))
        crypto_hash_sha512_update(scratch.state, random.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(randomLength))
        crypto_hash_sha512_final(scratch.state, scratch.wide)
        crypto_core_ed25519_scalar_reduce(scratch.r, scratch.wide)
        var commitment = [UInt8](repeating: 0, count: 32)
        guard crypto_scalarmult_ed25519_base_noclamp(&commitment, scratch.r) == 0 else { return nil }

        // h = SHA-512(R ‖ A ‖ M) mod q (public); s = r + h·a mod q.
        var challengeHash = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512_init(scratch.state)
        crypto_hash_sha512_update(scratch.state, commitment, 32)
        crypto_hash_sha512_update(scratch.state, edwardsKey, 32)
        crypto_hash_sha512_update(scratch.state, message, UInt64(message.count))
        crypto_hash_sha512_final(scratch.state, &challengeHash)
        var challenge = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_reduce(&challenge, challengeHash)
        crypto_core_ed25519_scalar_mul(scratch.product, challenge, scratch.a)
        var response = [UInt8](repeating: 0, count: 32)
        crypto_core_ed25519_scalar_add(&response, scratch.r, scratch.product)
        return commitment + response
    }

    // MARK: - Verifying

    /// Whether `signature` is a valid XEd25519 signature of `message` by the X25519 public key
    /// `publicKey` (its u-coordinate). False for any refusal: a size other than 64 and 32, a key
    /// `edwardsPublicKey(fromMontgomery:)` refuses, or a signature libsodium's strict
    /// `crypto_sign_verify_detached` refuses (s not below q, R or A of small order, non-canonical R).
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == signatureLength, let edwardsKey = try? edwardsPublicKey(fromMontgomery: publicKey) else { return false }
        ensureSodiumInitialised()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), edwardsKey) == 0
    }

    /// The Ed25519 public key with sign bit 0 of the X25519 public key `u`: y = (u − 1)/(u + 1) mod p.
    ///
    /// Refuses a u that is not 32 bytes, a u of p or more (bit 255 set included: no reduction),
    /// u = p − 1 (no y), and a y whose point libsodium's `crypto_core_ed25519_is_valid_point`
    /// refuses (not on the curve, small order, outside the prime-order subgroup: u = 0 and u = 1
    /// among them). Variable time; the key is public.
    public static func edwardsPublicKey(fromMontgomery u: [UInt8]) throws(Failure) -> [UInt8] {
        guard u.count == keyLength else { throw .invalidKeyLength(u.count) }
        guard let coordinate = Field25519(canonicalBytes: u) else { throw .publicKeyNotCanonical }
        let denominator = coordinate + .one
        guard denominator != .zero else { throw .publicKeyNotUsable }
        let y = (coordinate - .one) * denominator.inverse
        let encoded = y.bytes // sign bit 0: y < p < 2^255
        ensureSodiumInitialised()
        guard crypto_core_ed25519_is_valid_point(encoded) == 1 else { throw .publicKeyNotUsable }
        return encoded
    }
}
