import CSodium
import SecureMemory

// MARK: - The primitives of age

/// ChaCha20-Poly1305 (RFC 7539, libsodium's `crypto_aead_chacha20poly1305_ietf_*`) and the HKDF
/// keys of the age format: the header MAC key, the payload key, and the wrap of a file key.
enum AgeCrypto {
    /// The size of an age file key.
    static let fileKeyLength = 16
    /// The size of a wrapped file key: the key and its tag.
    static let wrappedKeyLength = fileKeyLength + tagLength
    /// The Poly1305 tag size.
    static let tagLength = 16
    /// The ChaCha20-Poly1305 (IETF) nonce size.
    static let nonceLength = 12

    /// `HMAC-SHA-256(HKDF-SHA-256(ikm = file key, salt = empty, info = "header"), header)`.
    static func headerMAC(_ header: [UInt8], fileKey: SecureBytes) -> [UInt8] {
        let key = hkdf(fileKey, salt: [], info: "header")
        return key.withUnsafeBytes { HMACSHA256.authenticate(header[...], key: $0) }
    }

    /// HKDF-SHA-256 of `ikm` to 32 bytes.
    static func hkdf(_ ikm: SecureBytes, salt: [UInt8], info: String) -> SecureBytes {
        // 32 bytes is always within HKDF's range.
        ikm.withUnsafeBytes { try! HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: salt, info: Array(info.utf8)) }
    }

    /// ChaCha20-Poly1305 of `plaintext` under `key` with the all-zero nonce: a stanza's body.
    static func wrap(_ fileKey: SecureBytes, key: SecureBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: fileKey.count + tagLength)
        let nonce = [UInt8](repeating: 0, count: nonceLength)
        out.withUnsafeMutableBytes { output in
            fileKey.withUnsafeBytes { plaintext in
                key.withUnsafeBytes { key in
                    seal(into: output, plaintext, key: key, nonce: nonce)
                }
            }
        }
        return out
    }

    /// The file key in a stanza's `body` (checked to be exactly 32 bytes by the caller, before
    /// this runs), or nil when it does not authenticate under `key`.
    static func unwrap(_ body: [UInt8], key: SecureBytes) -> SecureBytes? {
        precondition(body.count == wrappedKeyLength, "the body's length is checked first")
        let fileKey = SecureBytes(count: fileKeyLength)
        let nonce = [UInt8](repeating: 0, count: nonceLength)
        let opened = fileKey.withUnsafeMutableBytes { output in
            body.withUnsafeBytes { ciphertext in key.withUnsafeBytes { open(into: output, ciphertext, key: $0, nonce: nonce) } }
        }
        return opened ? fileKey : nil
    }

    /// Encrypts `plaintext` into `output` (plaintext's length + 16: ciphertext, then tag).
    /// With `bulk` (a payload chunk), through OpenSSL's faster code, libsodium when it refuses.
    static func seal(into output: UnsafeMutableRawBufferPointer, _ plaintext: UnsafeRawBufferPointer,
                     key: UnsafeRawBufferPointer, nonce: [UInt8], bulk: BulkChaCha? = nil) {
        precondition(output.count == plaintext.count + tagLength && key.count == 32 && nonce.count == nonceLength)
        if let bulk, bulk.seal(into: output, plaintext, key: key, nonce: nonce) { return }
        ensureSodiumInitialised()
        var written: UInt64 = 0
        var empty: UInt8 = 0
        withUnsafeMutablePointer(to: &empty) { fallback in
            _ = crypto_aead_chacha20poly1305_ietf_encrypt(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(fallback), UInt64(plaintext.count),
                nil, 0, nil, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Decrypts `ciphertext` (at least a tag) into `output` (its length − 16); false when it
    /// does not authenticate (then `output` holds nothing of it: libsodium writes only after the
    /// check, and `bulk` wipes what OpenSSL wrote). With `bulk` (a payload chunk), through
    /// OpenSSL's faster code; when that fails, libsodium decides (a damaged chunk, or OpenSSL refused).
    static func open(into output: UnsafeMutableRawBufferPointer, _ ciphertext: UnsafeRawBufferPointer,
                     key: UnsafeRawBufferPointer, nonce: [UInt8], bulk: BulkChaCha? = nil) -> Bool {
        precondition(ciphertext.count >= tagLength && output.count == ciphertext.count - tagLength && key.count == 32)
        if let bulk, bulk.open(into: output, ciphertext, key: key, nonce: nonce) { return true }
        ensureSodiumInitialised()
        var written: UInt64 = 0
        var scratch: UInt8 = 0
        return withUnsafeMutablePointer(to: &scratch) { fallback in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, &written, nil,
                ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count), nil, 0,
                nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// A fresh 16-byte file key.
    static func generateFileKey() -> SecureBytes { randomSecret(count: fileKeyLength) }

    /// `count` bytes from libsodium's CSPRNG, in guarded memory.
    static func randomSecret(count: Int) -> SecureBytes {
        ensureSodiumInitialised()
        let bytes = SecureBytes(count: count)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return bytes
    }

    /// `count` public random bytes (a nonce, a salt).
    static func randomBytes(count: Int) -> [UInt8] {
        ensureSodiumInitialised()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
