import CLibCrypto
import CSodium
import SecureMemory

// MARK: - The primitives of KeePass's KDBX files

/// The hashes and ciphers a KDBX 3.1 or 4 database is made of: SHA-256 and SHA-512 (libsodium),
/// HMAC-SHA-256 with a 64-byte key (libsodium's state API), AES-KDF and AES-256-CBC (OpenSSL),
/// ChaCha20 with a 96-bit nonce and Salsa20 (libsodium). Every output that holds key material is
/// the caller's to wipe.
public enum KDBXCrypto {
    /// SHA-256 of the concatenation of `parts`.
    public static func sha256(_ parts: [ArraySlice<UInt8>]) -> [UInt8] {
        ensureSodiumInitialised()
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        for part in parts { part.withUnsafeBufferPointer { _ = crypto_hash_sha256_update(&state, $0.baseAddress, UInt64($0.count)) } }
        var digest = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256_final(&state, &digest)
        sodium_memzero(&state, MemoryLayout<crypto_hash_sha256_state>.size)
        return digest
    }

    /// SHA-256 of a stream fed in parts (a KeePass key file too large to hold: hashed as it is read).
    public struct SHA256Stream {
        private var state = crypto_hash_sha256_state()

        /// A hash of nothing yet.
        public init() {
            ensureSodiumInitialised()
            crypto_hash_sha256_init(&state)
        }

        /// Adds `bytes` to what is hashed.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            _ = crypto_hash_sha256_update(&state, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        /// The digest (the caller's to wipe); the state is wiped.
        public mutating func finish() -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            crypto_hash_sha256_final(&state, &digest)
            sodium_memzero(&state, MemoryLayout<crypto_hash_sha256_state>.size)
            return digest
        }
    }

    /// SHA-512 of the concatenation of `parts`.
    public static func sha512(_ parts: [ArraySlice<UInt8>]) -> [UInt8] {
        ensureSodiumInitialised()
        var state = crypto_hash_sha512_state()
        crypto_hash_sha512_init(&state)
        for part in parts { part.withUnsafeBufferPointer { _ = crypto_hash_sha512_update(&state, $0.baseAddress, UInt64($0.count)) } }
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512_final(&state, &digest)
        sodium_memzero(&state, MemoryLayout<crypto_hash_sha512_state>.size)
        return digest
    }

    /// HMAC-SHA-256 of the concatenation of `parts` under `key` (any length).
    public static func hmacSHA256(key: [UInt8], _ parts: [ArraySlice<UInt8>]) -> [UInt8] {
        ensureSodiumInitialised()
        var state = crypto_auth_hmacsha256_state()
        _ = crypto_auth_hmacsha256_init(&state, key, key.count)
        for part in parts { part.withUnsafeBufferPointer { _ = crypto_auth_hmacsha256_update(&state, $0.baseAddress, UInt64($0.count)) } }
        var tag = [UInt8](repeating: 0, count: 32)
        crypto_auth_hmacsha256_final(&state, &tag)
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        return tag
    }

    /// Whether `a` and `b` are equal, compared in constant time (for tags and hashes).
    public static func equal(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return b.withUnsafeBufferPointer { sodium_memcmp(a, $0.baseAddress!, a.count) == 0 }
    }

    /// KeePass's AES-KDF: `key` (32 bytes) encrypted `rounds` times with AES-256-ECB under `seed`
    /// (32 bytes), in place. False when a size is wrong or OpenSSL refuses.
    public static func aesKDF(seed: [UInt8], key: inout [UInt8], rounds: UInt64) -> Bool {
        guard seed.count == 32, key.count == 32 else { return false }
        return vaultfile_aes_kdf(seed, &key, rounds) == 1
    }

    /// `data` encrypted in place with ChaCha20 (RFC 8439: 96-bit nonce, block counter from 0),
    /// KDBX 4's outer cipher. Its own inverse. False when a size is wrong.
    public static func chacha20(_ data: inout [UInt8], key: [UInt8], nonce: [UInt8]) -> Bool {
        guard key.count == 32, nonce.count == 12 else { return false }
        guard !data.isEmpty else { return true }
        let count = data.count
        data.withUnsafeMutableBufferPointer { buffer in
            _ = crypto_stream_chacha20_ietf_xor_ic(buffer.baseAddress!, buffer.baseAddress!, UInt64(count), nonce, 0, key)
        }
        return true
    }

    /// The bytes of `data` in `range` encrypted in place with ChaCha20 (RFC 8439), its block
    /// counter starting at `counter`: a piece of a longer stream that starts at byte `counter` × 64
    /// (the KDBX export encrypts its file block by block). False when a size or the range is wrong.
    public static func chacha20(_ data: inout [UInt8], range: Range<Int>, key: [UInt8], nonce: [UInt8], counter: UInt32) -> Bool {
        guard key.count == 32, nonce.count == 12, range.lowerBound >= 0, range.upperBound <= data.count else { return false }
        guard !range.isEmpty else { return true }
        data.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + range.lowerBound
            _ = crypto_stream_chacha20_ietf_xor_ic(start, start, UInt64(range.count), nonce, counter, key)
        }
        return true
    }

    /// `ciphertext` decrypted with AES-256-CBC and its PKCS#7 padding removed (checked); nil
    /// when a size is wrong or the padding is not PKCS#7 (a wrong key, almost always).
    public static func aes256CBCDecrypt(_ ciphertext: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        cbc(ciphertext, key: key, iv: iv, encrypt: false)
    }

    /// `plaintext` padded with PKCS#7 and encrypted with AES-256-CBC; nil when a size is wrong.
    public static func aes256CBCEncrypt(_ plaintext: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        cbc(plaintext, key: key, iv: iv, encrypt: true)
    }

    private static func cbc(_ input: ArraySlice<UInt8>, key: [UInt8], iv: [UInt8], encrypt: Bool) -> [UInt8]? {
        guard key.count == 32, iv.count == 16, input.count < Int(Int32.max) - 32, encrypt || input.count % 16 == 0,
              let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0, tail: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out -> Bool in
            input.withUnsafeBufferPointer { source -> Bool in
                guard EVP_CipherInit_ex(context, EVP_aes_256_cbc(), nil, key, iv, encrypt ? 1 : 0) == 1 else { return false }
                if !source.isEmpty {
                    guard EVP_CipherUpdate(context, out.baseAddress, &written, source.baseAddress, Int32(source.count)) == 1 else { return false }
                }
                return EVP_CipherFinal_ex(context, out.baseAddress! + Int(written), &tail) == 1
            }
        }
        guard ok else { wipe(&output); return nil }
        output.removeSubrange(Int(written + tail)...)
        return output
    }
}

// MARK: - The inner stream of protected values

/// The key stream that XORs a KDBX file's protected values (`Protected="True"`), in document
/// order: KDBX 4's ChaCha20 (key and nonce from SHA-512 of the inner key) or KDBX 3.1's Salsa20
/// (key SHA-256 of the inner key, KeePass's fixed nonce).
public final class KDBXInnerStream {
    /// KeePass's stream IDs.
    public enum Kind: UInt32, Sendable {
        /// Salsa20 (KDBX 3.1's default).
        case salsa20 = 2
        /// ChaCha20 (KDBX 4's default).
        case chacha20 = 3
    }

    private let kind: Kind
    private var key: [UInt8]
    private var nonce: [UInt8]
    private var block = [UInt8](repeating: 0, count: 64)
    private var used = 64
    private var counter: UInt64 = 0

    /// The stream of `kind` from the inner key of the file (any length, 32 or 64 bytes in practice).
    public init(kind: Kind, innerKey: [UInt8]) {
        self.kind = kind
        switch kind {
        case .chacha20:
            var digest = KDBXCrypto.sha512([innerKey[...]])
            key = Array(digest[0..<32])
            nonce = Array(digest[32..<44])
            wipe(&digest)
        case .salsa20:
            key = KDBXCrypto.sha256([innerKey[...]])
            nonce = [0xE8, 0x30, 0x09, 0x4B, 0x97, 0x20, 0x5D, 0x2A]
        }
    }

    deinit {
        wipe(&key)
        wipe(&block)
    }

    /// `bytes` XORed with the next `bytes.count` bytes of the stream.
    public func apply(_ bytes: inout [UInt8]) {
        for index in bytes.indices {
            if used == 64 { refill() }
            bytes[index] ^= block[used]
            used += 1
        }
    }

    private func refill() {
        let (kind, nonce, key, counter) = (self.kind, self.nonce, self.key, self.counter)
        block.withUnsafeMutableBufferPointer { out in
            for index in out.indices { out[index] = 0 }
            switch kind {
            case .chacha20:
                _ = crypto_stream_chacha20_ietf_xor_ic(out.baseAddress!, out.baseAddress!, 64, nonce, UInt32(truncatingIfNeeded: counter), key)
            case .salsa20:
                _ = crypto_stream_salsa20_xor_ic(out.baseAddress!, out.baseAddress!, 64, nonce, counter, key)
            }
        }
        self.counter += 1
        used = 0
    }
}
