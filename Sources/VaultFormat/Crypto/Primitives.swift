import CSodium
import KDF
import SecureMemory

// MARK: - XChaCha20-Poly1305 (IETF) AEAD

/// XChaCha20-Poly1305 authenticated encryption, libsodium's `crypto_aead_xchacha20poly1305_ietf_*`.
///
/// Rejects keys other than 32 bytes and nonces other than 24 bytes before
/// calling libsodium, whose API takes the sizes on trust.
public enum XChaCha20Poly1305 {
    /// Key size in bytes.
    public static let keyLength = 32
    /// Nonce size in bytes.
    public static let nonceLength = 24
    /// Tag size in bytes.
    public static let tagLength = 16

    /// Why an AEAD call was refused.
    public enum Failure: CategorizedError, Equatable {
        /// The key is not 32 bytes.
        case invalidKeyLength(Int)
        /// The nonce is not 24 bytes.
        case invalidNonceLength(Int)
        /// The ciphertext is shorter than a tag, or it does not authenticate.
        case authenticationFailed

        public var description: String {
            switch self {
            case .invalidKeyLength(let length): return "the XChaCha20-Poly1305 key is \(length) bytes; it must be 32"
            case .invalidNonceLength(let length): return "the XChaCha20-Poly1305 nonce is \(length) bytes; it must be 24"
            case .authenticationFailed: return "XChaCha20-Poly1305 data fails authentication (modified, truncated or under another key)"
            }
        }

        /// A wrong size is the caller's bug; data that does not authenticate is damaged.
        public var category: ErrorCategory {
            switch self {
            case .invalidKeyLength, .invalidNonceLength: return .internalFailure
            case .authenticationFailed: return .damaged
            }
        }
    }

    /// Encrypts `plaintext`; returns ciphertext followed by the 16-byte tag.
    public static func seal(_ plaintext: [UInt8], key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8]) throws(Failure) -> [UInt8] {
        try checkSizes(key: key, nonce: nonce)
        ensureSodiumInitialised()
        var output = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var outputLength: UInt64 = 0
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
            &output, &outputLength, plaintext, UInt64(plaintext.count), associatedData, UInt64(associatedData.count),
            nil, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        return output
    }

    /// Decrypts and authenticates `ciphertext` (which ends with the tag) into guarded memory.
    public static func open(_ ciphertext: [UInt8], key: UnsafeRawBufferPointer, nonce: [UInt8], associatedData: [UInt8]) throws(Failure) -> SecureBytes {
        try checkSizes(key: key, nonce: nonce)
        guard ciphertext.count >= tagLength else { throw .authenticationFailed }
        ensureSodiumInitialised()
        let output = SecureBytes(count: ciphertext.count - tagLength)
        var outputLength: UInt64 = 0
        let status = output.withUnsafeMutableBytes { out in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), &outputLength, nil,
                ciphertext, UInt64(ciphertext.count), associatedData, UInt64(associatedData.count),
                nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else { throw .authenticationFailed }
        return output
    }

    private static func checkSizes(key: UnsafeRawBufferPointer, nonce: [UInt8]) throws(Failure) {
        guard key.count == keyLength, key.baseAddress != nil else { throw .invalidKeyLength(key.count) }
        guard nonce.count == nonceLength else { throw .invalidNonceLength(nonce.count) }
    }
}

// MARK: - Subkeys and MACs

/// Subkeys of the file key: libsodium's `crypto_kdf_derive_from_key` (BLAKE2b) with an 8-byte context.
package enum Subkey {
    /// The header MAC key: context `"vfheader"`, id 1.
    static let headerMAC = (context: "vfheader", id: UInt64(1))
    /// The payload stream key: context `"vfstream"`, id 1.
    static let payloadStream = (context: "vfstream", id: UInt64(1))
    /// The key of entry fingerprints for diffs: context `"vffprint"`, id 1.
    static let fingerprint = (context: "vffprint", id: UInt64(1))
    /// The file key's id, recorded when the key is retired (`RetiredKeys`): context `"vfkey-id"`, id 1.
    package static let keyID = (context: "vfkey-id", id: UInt64(1))

    /// Derives a 32-byte subkey of `fileKey` for `purpose`.
    package static func derive(from fileKey: SecureBytes, _ purpose: (context: String, id: UInt64)) -> SecureBytes {
        ensureSodiumInitialised()
        let context = Array(purpose.context.utf8).map { CChar(bitPattern: $0) }
        precondition(context.count == Int(crypto_kdf_contextbytes()), "contexts are 8 bytes")
        let subkey = SecureBytes(count: 32)
        subkey.withUnsafeMutableBytes { out in
            fileKey.withUnsafeBytes { key in
                _ = crypto_kdf_derive_from_key(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, purpose.id, context,
                    key.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return subkey
    }
}

/// HMAC-SHA256 (libsodium's `crypto_auth_hmacsha256_*`), any key length.
public enum HMACSHA256 {
    /// The 32-byte tag of `message` under `key`.
    public static func authenticate(_ message: ArraySlice<UInt8>, key: UnsafeRawBufferPointer) -> [UInt8] {
        ensureSodiumInitialised()
        var state = crypto_auth_hmacsha256_state()
        var tag = [UInt8](repeating: 0, count: 32)
        var emptyKey: UInt8 = 0
        withUnsafePointer(to: &emptyKey) { fallback in
            let keyPointer = key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback
            _ = crypto_auth_hmacsha256_init(&state, keyPointer, key.count)
        }
        message.withUnsafeBufferPointer { bytes in
            _ = crypto_auth_hmacsha256_update(&state, bytes.baseAddress, UInt64(bytes.count))
        }
        crypto_auth_hmacsha256_final(&state, &tag)
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        return tag
    }

    /// Whether `tag` (1 to 32 bytes) is the leading part of `message`'s tag, compared in constant time.
    public static func verify(_ tag: [UInt8], message: ArraySlice<UInt8>, key: UnsafeRawBufferPointer) -> Bool {
        let expected = authenticate(message, key: key)
        guard !tag.isEmpty, tag.count <= expected.count else { return false }
        return sodium_memcmp(tag, expected, tag.count) == 0
    }
}

/// An unkeyed BLAKE2b-256 checksum (`crypto_generichash`), for detecting accidental damage.
package enum Checksum {
    /// BLAKE2b-256 of `bytes`.
    package static func blake2b256(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        ensureSodiumInitialised()
        var out = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { buffer in
            _ = crypto_generichash(&out, 32, buffer.baseAddress, UInt64(buffer.count), nil, 0)
        }
        return out
    }
}

/// Whether two byte arrays of equal length are equal, in constant time.
func constantTimeEqual(_ a: [UInt8], _ b: some Collection<UInt8>) -> Bool {
    let b = Array(b)
    guard a.count == b.count else { return false }
    guard !a.isEmpty else { return true }
    return sodium_memcmp(a, b, a.count) == 0
}
