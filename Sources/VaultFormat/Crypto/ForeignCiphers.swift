import CLibCrypto
import CSodium
import KDF
import SecureMemory

// MARK: - Ciphers of other tools' files (import only)

/// AES-256 in counter mode (OpenSSL's `EVP_aes_256_ctr`), as ansible-vault's `VaultAES256` uses it:
/// the whole 16-byte IV is the initial counter block, incremented as one 128-bit big-endian number.
/// Decryption only: vaultfile reads such files, it never writes them.
public enum AES256CTR {
    /// Key size in bytes.
    public static let keyLength = 32
    /// IV (initial counter block) size in bytes.
    public static let ivLength = 16

    /// The keystream XORed into `ciphertext`, into guarded memory; nil when the sizes are wrong
    /// or OpenSSL refuses (which it does not for valid sizes).
    public static func decrypt(_ ciphertext: ArraySlice<UInt8>, key: UnsafeRawBufferPointer, iv: UnsafeRawBufferPointer) -> SecureBytes? {
        guard key.count == keyLength, iv.count == ivLength, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let output = SecureBytes(count: max(ciphertext.count, 1))
        let ok = output.withUnsafeMutableBytes { out -> Bool in
            guard EVP_DecryptInit_ex(context, EVP_aes_256_ctr(), nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                     iv.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 1 else { return false }
            var written: Int32 = 0
            let updated = ciphertext.withUnsafeBufferPointer { input in
                ciphertext.isEmpty ? 1 : EVP_DecryptUpdate(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                                                           input.baseAddress, Int32(input.count))
            }
            var tail: Int32 = 0
            guard updated == 1, Int(written) == ciphertext.count,
                  EVP_DecryptFinal_ex(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self) + Int(written), &tail) == 1 else { return false }
            return true
        }
        guard ok else { return nil }
        return ciphertext.isEmpty ? SecureBytes(count: 0) : output
    }
}

/// AES-256-GCM with any IV length (OpenSSL's `EVP_aes_256_gcm`), as sops uses it: a 32-byte IV
/// (Go's `NewGCMWithNonceSize(…, 32)`, hashed to the counter by GHASH as GCM specifies for IVs
/// other than 12 bytes) and a 16-byte tag. Decryption only.
public enum AES256GCM {
    /// Key size in bytes.
    public static let keyLength = 32
    /// Tag size in bytes.
    public static let tagLength = 16
    /// The longest IV accepted (sops writes 32 bytes; GCM allows up to 2^64 bits, no reader needs more).
    public static let maxIVLength = 256

    /// The plaintext of `ciphertext` in guarded memory when `tag` authenticates it with
    /// `associatedData`; nil when it does not, or when a size is wrong.
    public static func open(_ ciphertext: [UInt8], tag: [UInt8], key: UnsafeRawBufferPointer, iv: [UInt8], associatedData: [UInt8]) -> SecureBytes? {
        guard key.count == keyLength, tag.count == tagLength, (1...maxIVLength).contains(iv.count),
              ciphertext.count < Int(Int32.max), associatedData.count < Int(Int32.max),
              let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let output = SecureBytes(count: max(ciphertext.count, 1))
        var tagCopy = tag
        let ok = output.withUnsafeMutableBytes { out -> Bool in
            let outPointer = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
                  EVP_DecryptInit_ex(context, nil, nil, key.baseAddress!.assumingMemoryBound(to: UInt8.self), iv) == 1 else { return false }
            var written: Int32 = 0
            if !associatedData.isEmpty {
                guard EVP_DecryptUpdate(context, nil, &written, associatedData, Int32(associatedData.count)) == 1 else { return false }
            }
            written = 0
            if !ciphertext.isEmpty {
                guard EVP_DecryptUpdate(context, outPointer, &written, ciphertext, Int32(ciphertext.count)) == 1 else { return false }
            }
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tagCopy) == 1 else { return false }
            var tail: Int32 = 0
            // The tag is checked here, in constant time, by OpenSSL: until then nothing is returned.
            return EVP_DecryptFinal_ex(context, outPointer + Int(written), &tail) == 1
        }
        guard ok else { return nil }
        return ciphertext.isEmpty ? SecureBytes(count: 0) : output
    }
}

/// SHA-512 (libsodium's `crypto_hash_sha512`), fed piece by piece: sops' MAC is over its values.
public final class SHA512Hasher {
    private var state = crypto_hash_sha512_state()

    /// A fresh hash.
    public init() {
        ensureSodiumInitialised()
        crypto_hash_sha512_init(&state)
    }

    deinit { sodium_memzero(&state, MemoryLayout<crypto_hash_sha512_state>.size) }

    /// Adds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        crypto_hash_sha512_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    /// The 64-byte digest (call once).
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512_final(&state, &digest)
        return digest
    }
}

/// Key derivation of other tools' files (ansible-vault's PBKDF2-HMAC-SHA256).
public enum ForeignKeyDerivation {
    /// PBKDF2-HMAC-SHA256 of `password` and `salt` (KDF's implementation), `outputLength` bytes in
    /// guarded memory; nil when the parameters are outside KDF's documented ranges.
    public static func pbkdf2SHA256(password: SecureBytes, salt: [UInt8], iterations: UInt32, outputLength: Int) -> SecureBytes? {
        password.withUnsafeBytes { bytes in
            try? PBKDF2.deriveKey(password: bytes, salt: salt, parameters: PBKDF2Parameters(iterations: iterations), outputLength: outputLength)
        }
    }
}

/// Standard, padded Base64 (RFC 4648 §4) of other tools' files: sops' `ENC[…]` values.
public enum ForeignBase64 {
    /// The bytes of `text`; nil for anything but padded standard Base64 (an empty text included).
    public static func decode(_ text: Substring) -> [UInt8]? { base64Decode(Array(text.utf8)) }
}
