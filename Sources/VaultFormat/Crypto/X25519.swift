import CSodium
import SecureMemory

// MARK: - X25519 (RFC 7748)

/// X25519 key agreement, libsodium's `crypto_scalarmult` (checked against RFC 7748 §5.2 and §6.1).
///
/// Secret keys are any 32 bytes (X25519 clamps them); public keys are 32-byte u-coordinates.
public enum X25519 {
    /// Secret and public key size in bytes.
    public static let keyLength = 32

    /// Why a scalar multiplication failed.
    public enum Failure: CategorizedError, Equatable {
        /// A key is not 32 bytes.
        case invalidKeyLength(Int)
        /// The shared secret is all zeros: the public key is a low-order point (RFC 7748 §6.1
        /// says to check; age aborts). Such a point yields one secret for every private key.
        case lowOrderPoint

        public var description: String {
            switch self {
            case .invalidKeyLength(let length): return "an X25519 key is \(length) bytes; it must be 32"
            case .lowOrderPoint:
                return "the X25519 public key is a low-order point: it gives every private key the same shared secret, "
                    + "so anyone could open what is wrapped to it"
            }
        }

        /// A wrong size is the caller's bug; a low-order point is a key that came from outside.
        public var category: ErrorCategory {
            switch self {
            case .invalidKeyLength: return .internalFailure
            case .lowOrderPoint: return .invalidInput
            }
        }
    }

    /// A fresh secret key from libsodium's CSPRNG, in guarded memory.
    public static func generateSecretKey() -> SecureBytes {
        randomBytesIntoGuardedMemory(count: keyLength)
    }

    /// The public key of `secretKey` (`crypto_scalarmult_base`).
    public static func publicKey(of secretKey: SecureBytes) throws(Failure) -> [UInt8] {
        guard secretKey.count == keyLength else { throw .invalidKeyLength(secretKey.count) }
        ensureSodiumInitialised()
        var output = [UInt8](repeating: 0, count: keyLength)
        let status = secretKey.withUnsafeBytes { crypto_scalarmult_base(&output, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        guard status == 0 else { throw .lowOrderPoint }
        return output
    }

    /// The shared secret of `secretKey` and `publicKey` (`crypto_scalarmult`), in guarded memory.
    ///
    /// Refuses an all-zero result: libsodium returns -1 for it, and the result is checked again
    /// with `sodium_is_zero`, so the refusal does not rest on one library version's behaviour.
    public static func sharedSecret(secretKey: SecureBytes, publicKey: some Collection<UInt8>) throws(Failure) -> SecureBytes {
        let publicKey = Array(publicKey)
        guard secretKey.count == keyLength else { throw .invalidKeyLength(secretKey.count) }
        guard publicKey.count == keyLength else { throw .invalidKeyLength(publicKey.count) }
        ensureSodiumInitialised()
        let shared = SecureBytes(count: keyLength)
        let status = shared.withUnsafeMutableBytes { out in
            secretKey.withUnsafeBytes { secret in
                crypto_scalarmult(out.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                  secret.baseAddress!.assumingMemoryBound(to: UInt8.self), publicKey)
            }
        }
        let allZero = shared.withUnsafeBytes { sodium_is_zero($0.baseAddress!.assumingMemoryBound(to: UInt8.self), keyLength) == 1 }
        guard status == 0, !allZero else { throw .lowOrderPoint }
        return shared
    }

    /// Whether `publicKey` is a low-order point (of order 1, 2, 4 or 8, on the curve or its
    /// twist, in any encoding): one whose product with every clamped secret key is all zeros, so
    /// that a wrap to it is open to anyone. Checked with one fixed secret key: a clamped key is a
    /// multiple of 8, which sends exactly the low-order points to zero; a 32-byte key of another
    /// kind of point gives a non-zero product under every key. A key that is not 32 bytes is not one.
    public static func isLowOrder(_ publicKey: [UInt8]) -> Bool {
        guard publicKey.count == keyLength else { return false }
        let probe = SecureBytes(copying: [UInt8](repeating: 0x2A, count: keyLength))
        do {
            _ = try sharedSecret(secretKey: probe, publicKey: publicKey)
            return false
        } catch {
            return error == .lowOrderPoint
        }
    }

    private static func randomBytesIntoGuardedMemory(count: Int) -> SecureBytes {
        let bytes = SecureBytes(count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return bytes
    }
}

// MARK: - Ed25519 keys as X25519 keys

/// The birational map from Ed25519 keys to X25519 keys (libsodium's
/// `crypto_sign_ed25519_pk_to_curve25519` and `_sk_to_curve25519`), for ssh-ed25519 recipients.
public enum Ed25519 {
    /// Public key size in bytes.
    public static let publicKeyLength = 32
    /// Seed size in bytes (the secret an OpenSSH key stores before its public half).
    public static let seedLength = 32

    /// The X25519 public key of an Ed25519 public key; nil when libsodium refuses it (not a
    /// point on the curve, or of small order). The return value is always checked: a refused
    /// key leaves the output undefined.
    public static func x25519PublicKey(_ publicKey: [UInt8]) -> [UInt8]? {
        guard publicKey.count == publicKeyLength else { return nil }
        ensureSodiumInitialised()
        var output = [UInt8](repeating: 0, count: X25519.keyLength)
        guard crypto_sign_ed25519_pk_to_curve25519(&output, publicKey) == 0 else { return nil }
        return output
    }

    /// The Ed25519 public key derived from `seed` (`crypto_sign_seed_keypair`).
    public static func publicKey(fromSeed seed: SecureBytes) -> [UInt8]? {
        guard seed.count == seedLength else { return nil }
        ensureSodiumInitialised()
        var publicKey = [UInt8](repeating: 0, count: publicKeyLength)
        let secretKey = SecureBytes(count: Int(crypto_sign_secretkeybytes()))
        let status = secretKey.withUnsafeMutableBytes { sk in
            seed.withUnsafeBytes { crypto_sign_seed_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        }
        return status == 0 ? publicKey : nil
    }

    /// The X25519 secret key of the Ed25519 key made from `seed`: SHA-512 of the seed, first
    /// half (`crypto_sign_ed25519_sk_to_curve25519` on the 64-byte secret key `seed ‖ public key`).
    public static func x25519SecretKey(fromSeed seed: SecureBytes) -> SecureBytes? {
        guard seed.count == seedLength else { return nil }
        ensureSodiumInitialised()
        var publicKey = [UInt8](repeating: 0, count: publicKeyLength)
        let secretKey = SecureBytes(count: Int(crypto_sign_secretkeybytes()))
        let output = SecureBytes(count: X25519.keyLength)
        let status = secretKey.withUnsafeMutableBytes { sk -> Int32 in
            let made = seed.withUnsafeBytes { crypto_sign_seed_keypair(&publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
            guard made == 0 else { return made }
            return output.withUnsafeMutableBytes {
                crypto_sign_ed25519_sk_to_curve25519($0.baseAddress!.assumingMemoryBound(to: UInt8.self), sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return status == 0 ? output : nil
    }
}

// MARK: - SHA-256

/// SHA-256 (`crypto_hash_sha256`), for key fingerprints only.
enum SHA256 {
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        ensureSodiumInitialised()
        var output = [UInt8](repeating: 0, count: 32)
        _ = crypto_hash_sha256(&output, bytes, UInt64(bytes.count))
        return output
    }
}
