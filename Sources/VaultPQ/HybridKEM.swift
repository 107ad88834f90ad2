import Crypto
import SecureMemory

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// MARK: - ML-KEM-768 + X25519 (X-Wing) under HPKE, as age 1.3's mlkem768x25519 uses it

/// The hybrid post-quantum KEM of age's `mlkem768x25519` recipients: HPKE base mode (RFC 9180)
/// with the MLKEM768-X25519 KEM (X-Wing, KEM id 0x647a), HKDF-SHA256 and ChaCha20Poly1305.
///
/// Everything here is swift-crypto's (BoringSSL's ML-KEM and X-Wing): this target writes no KEM.
/// It is the one target that links swift-crypto, so that the rest of vaultfile keeps its own
/// primitives (libsodium, libcrypto) and only the post-quantum path pays for BoringSSL.
public enum HybridKEM {
    /// The bytes of an X-Wing public key: ML-KEM-768's encapsulation key (1,184) ‖ X25519's (32).
    public static let publicKeyLength = 1_216
    /// The bytes of ML-KEM-768's encapsulation key, the first part of a public key.
    public static let mlkemPublicKeyLength = 1_184
    /// The bytes of t̂ in the encapsulation key (three polynomials of 256 12-bit coefficients);
    /// the 32 bytes of the seed ρ follow.
    static let tHatLength = 1_152
    /// The bytes of an encapsulation (HPKE's `enc`): ML-KEM-768's ciphertext (1,088) ‖ X25519 share (32).
    public static let encapsulationLength = 1_120
    /// The bytes of an identity: the X-Wing seed, expanded with SHAKE256 into both private keys.
    public static let seedLength = 32
    /// The HPKE cipher suite: MLKEM768-X25519, HKDF-SHA256, ChaCha20Poly1305.
    static let suite = HPKE.Ciphersuite(kem: .XWingMLKEM768X25519, kdf: .HKDF_SHA256, aead: .chaChaPoly)

    /// Encrypts `plaintext` to `recipient` with a fresh encapsulation (HPKE single-shot, base mode,
    /// empty additional data): returns `enc` (1,120 bytes) and the ciphertext (plaintext + 16).
    public static func seal(_ plaintext: SecureBytes, to recipient: HybridPublicKey, info: [UInt8]) throws(HybridKEMError) -> (enc: [UInt8], ciphertext: [UInt8]) {
        do {
            let key = try XWingMLKEM768X25519.PublicKey(rawRepresentation: recipient.bytes)
            var sender = try HPKE.Sender(recipientKey: key, ciphersuite: suite, info: Data(info))
            var sealed = plaintext.withUnsafeBytes { buffer in Data(buffer) }
            defer { sealed.resetBytes(in: 0..<sealed.count) }
            let ciphertext = try sender.seal(sealed)
            let enc = [UInt8](sender.encapsulatedKey)
            guard enc.count == encapsulationLength else { throw HybridKEMError.encapsulationFailed }
            return (enc, [UInt8](ciphertext))
        } catch {
            throw .encapsulationFailed
        }
    }
}

// MARK: - Errors

/// Why a hybrid key or encapsulation was refused.
public enum HybridKEMError: Error, Equatable, Sendable {
    /// The public key is not 1,216 bytes.
    case publicKeyLength(Int)
    /// The ML-KEM-768 encapsulation key fails FIPS 203's modulus check (a coefficient ≥ q).
    case mlkemKeyInvalid
    /// The ML-KEM-768 encapsulation key's t̂ is all zero: it passes FIPS 203's checks, but an
    /// encapsulation to it hides nothing (v = e₂ + μ), so the slot opens with the X25519 key alone.
    case mlkemKeyZero
    /// The X25519 part is not the canonical encoding of a field element (its high bit is set, or
    /// it is at least 2²⁵⁵ − 19): X-Wing hashes the raw bytes, so no identity could open a wrap.
    case x25519KeyNotCanonical
    /// The X25519 part is a low-order point or an encapsulation to the key failed.
    case x25519KeyInvalid
    /// An identity seed is not 32 bytes.
    case seedLength(Int)
    /// Encapsulating to a key failed (checked keys never do).
    case encapsulationFailed
}

// MARK: - Public keys

/// A checked mlkem768x25519 public key (the bytes of an `age1pq1…` recipient).
public struct HybridPublicKey: Equatable, Hashable, Sendable {
    /// The 1,216 bytes: ML-KEM-768 encapsulation key ‖ X25519 public key.
    public let bytes: [UInt8]

    /// Checks `bytes` as FIPS 203 §7.2 asks of an encapsulation key before use (the type check:
    /// exactly 1,184 bytes; the modulus check: every coefficient decodes below q and re-encodes to
    /// the same bytes, which BoringSSL's parser enforces) and the X25519 part by a trial
    /// encapsulation (a low-order point makes X-Wing's X25519 output all zero, which is refused).
    /// Two keys these checks let through are refused too: a t̂ of all zeros (an encapsulation to it
    /// carries the shared secret in the clear, so the slot would be only as strong as X25519) and a
    /// non-canonical X25519 key (X-Wing's combiner hashes the raw 32 bytes, while the holder's own
    /// public key is canonical: a wrap to it would open for no one).
    public init(validating bytes: [UInt8]) throws(HybridKEMError) {
        guard bytes.count == HybridKEM.publicKeyLength else { throw .publicKeyLength(bytes.count) }
        do {
            _ = try MLKEM768.PublicKey(rawRepresentation: bytes[0..<HybridKEM.mlkemPublicKeyLength])
        } catch {
            throw .mlkemKeyInvalid
        }
        // t̂ is the first 1,152 bytes (ByteEncode₁₂ of three polynomials); ρ, the last 32, may be anything.
        guard bytes[0..<HybridKEM.tHatLength].contains(where: { $0 != 0 }) else { throw .mlkemKeyZero }
        guard Self.isCanonicalX25519(bytes[HybridKEM.mlkemPublicKeyLength...]) else { throw .x25519KeyNotCanonical }
        do {
            _ = try XWingMLKEM768X25519.PublicKey(rawRepresentation: bytes).encapsulate()
        } catch {
            throw .x25519KeyInvalid
        }
        self.bytes = bytes
    }

    /// Whether 32 little-endian bytes are a canonical field element: below p = 2²⁵⁵ − 19, which
    /// also means the high bit is clear (RFC 7748 masks it, X-Wing's hash does not).
    static func isCanonicalX25519(_ point: ArraySlice<UInt8>) -> Bool {
        let bytes = Array(point)
        guard bytes.count == 32, bytes[31] & 0x80 == 0 else { return false }
        // The values from p to 2²⁵⁵ − 1: byte 31 is 0x7F, bytes 1…30 are 0xFF, byte 0 ≥ 0xED.
        let top = bytes[31] == 0x7F && bytes[1...30].allSatisfy { $0 == 0xFF } && bytes[0] >= 0xED
        return !top
    }

    /// A key this process derived itself from a seed (no check needed).
    init(trusted bytes: [UInt8]) { self.bytes = bytes }
}

// MARK: - Identities

/// An mlkem768x25519 identity: the 32-byte X-Wing seed (`AGE-SECRET-KEY-PQ-1…`) and the private
/// keys swift-crypto expands from it (SHAKE256(seed, 96): ML-KEM's d ‖ z, then X25519's key).
public final class HybridIdentity: @unchecked Sendable {
    /// The seed, in locked memory.
    public let seed: SecureBytes
    /// The public key the seed derives.
    public let publicKey: HybridPublicKey
    private let key: XWingMLKEM768X25519.PrivateKey

    /// The identity of a 32-byte seed.
    public init(seed: SecureBytes) throws(HybridKEMError) {
        guard seed.count == HybridKEM.seedLength else { throw .seedLength(seed.count) }
        do {
            let key = try seed.withUnsafeBytes { buffer in
                try XWingMLKEM768X25519.PrivateKey(seedRepresentation: Data(buffer), publicKey: nil)
            }
            self.key = key
            self.publicKey = HybridPublicKey(trusted: [UInt8](key.publicKey.rawRepresentation))
        } catch {
            throw .seedLength(seed.count)
        }
        self.seed = seed
    }

    /// A fresh identity from the system's random generator (BoringSSL's, as swift-crypto draws it).
    public static func generate() throws(HybridKEMError) -> HybridIdentity {
        do {
            let key = try XWingMLKEM768X25519.PrivateKey.generate()
            var raw = [UInt8](key.seedRepresentation)
            defer { for index in raw.indices { raw[index] = 0 } }
            return try HybridIdentity(seed: SecureBytes(copying: raw))
        } catch {
            throw .encapsulationFailed
        }
    }

    /// Opens an HPKE single-shot ciphertext sealed to this identity: `enc` must be exactly 1,120
    /// bytes (checked before decapsulating) and the ciphertext exactly `plaintextLength` + 16.
    /// Nil for every failure (wrong key, tampered enc or ciphertext, a low-order X25519 share),
    /// never a reason: a caller tries the next slot or stanza.
    public func open(enc: [UInt8], ciphertext: [UInt8], info: [UInt8], plaintextLength: Int) -> SecureBytes? {
        guard enc.count == HybridKEM.encapsulationLength, ciphertext.count == plaintextLength + 16 else { return nil }
        do {
            var recipient = try HPKE.Recipient(privateKey: key, ciphersuite: HybridKEM.suite, info: Data(info), encapsulatedKey: Data(enc))
            var opened = try recipient.open(Data(ciphertext))
            defer { opened.resetBytes(in: 0..<opened.count) }
            guard opened.count == plaintextLength else { return nil }
            return opened.withUnsafeBytes { buffer in SecureBytes(copying: buffer) }
        } catch {
            return nil
        }
    }
}
