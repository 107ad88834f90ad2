import CLibCrypto
import SecureMemory

// MARK: - ChaCha20 and ChaCha20-Poly1305 over bulk data, through OpenSSL

/// One thread's OpenSSL context for ChaCha20 (the keystream XORed in, RFC 8439's 96-bit nonce)
/// or ChaCha20-Poly1305, for bulk data only: age's 64 KiB payload chunks (`AgePayload`) and the
/// message of a secretstream chunk (`SecretStream`). OpenSSL's AVX2 and AVX-512 code runs about
/// three times as fast as libsodium 1.0.18's here (C in CLibCrypto/chacha_shim.h;
/// docs/PERFORMANCE.md, issue 41). Same bytes either way (`CryptoBuildingBlockTests`).
///
/// Not shared between threads: each run of a parallel loop makes its own. Should OpenSSL ever
/// refuse (no context, a failed call), the caller falls back to libsodium: every function says so
/// by returning false. The context's key is cleansed when the context is freed.
final class BulkChaCha {
    /// What the context is set up for.
    enum Mode {
        /// `xor`: the ChaCha20 keystream from a block counter on.
        case keystream
        /// `seal`: ChaCha20-Poly1305 encryption.
        case seal
        /// `open`: ChaCha20-Poly1305 decryption.
        case open
    }

    private let context: OpaquePointer?
    private let mode: Mode
    /// Whether the keystream comes from OpenSSL's ChaCha20 core without EVP
    /// (`vaultfile_chacha20_xor_core`): no EVP context is made then, so that a command whose only
    /// use of libcrypto is the keystream (a `set`, an `import`) never builds EVP's provider and name
    /// tables (docs/PERFORMANCE.md, "1pux: an import without ArgumentParser or EVP").
    private let core: Bool

    /// A context for `mode`; one that OpenSSL refused makes every call return false.
    init(_ mode: Mode) {
        self.mode = mode
        core = mode == .keystream && vaultfile_chacha20_core_available() == 1
        guard !core else {
            context = nil
            return
        }
        var made = EVP_CIPHER_CTX_new()
        if let context = made, !Self.setUp(context, for: mode) {
            EVP_CIPHER_CTX_free(context)
            made = nil
        }
        context = made
    }

    /// A context as one OpenSSL refused: every call returns false, so the callers take libsodium's
    /// code (for the tests of that fallback).
    init(refused mode: Mode) {
        self.mode = mode
        context = nil
        core = false
    }

    deinit { if let context { EVP_CIPHER_CTX_free(context) } }

    /// Cleanses the key the context holds (OpenSSL keeps the last one given until the next call or
    /// the context's end, in ordinary heap) and sets the context up again for its mode; a context
    /// OpenSSL then refuses makes the next calls return false (the callers fall back to libsodium).
    func forget() {
        guard let context else { return }
        EVP_CIPHER_CTX_reset(context)
        _ = Self.setUp(context, for: mode)
    }

    /// Sets `context` up for `mode`; false when OpenSSL refused.
    private static func setUp(_ context: OpaquePointer, for mode: Mode) -> Bool {
        let ready = switch mode {
        case .keystream: vaultfile_chacha20_setup(context)
        case .seal: vaultfile_aead_setup(context, 1)
        case .open: vaultfile_aead_setup(context, 0)
        }
        return ready == 1
    }

    /// `input` XORed with the keystream of `key` (32 bytes) and `nonce` (12) from block `counter`
    /// on, into `output` (as long as `input`); false when OpenSSL refused (nothing to trust in `output`).
    func xor(into output: UnsafeMutableRawPointer, _ input: UnsafeRawBufferPointer, key: UnsafeRawPointer,
             nonce: UnsafeRawPointer, counter: UInt32) -> Bool {
        precondition(mode == .keystream, "a keystream context")
        if core {
            return vaultfile_chacha20_xor_core(output.assumingMemoryBound(to: UInt8.self), Self.bytes(input), input.count,
                                               key.assumingMemoryBound(to: UInt8.self), nonce.assumingMemoryBound(to: UInt8.self), counter) == 1
        }
        guard let context else { return false }
        return vaultfile_chacha20_xor(context, output.assumingMemoryBound(to: UInt8.self), Self.bytes(input), input.count,
                                      key.assumingMemoryBound(to: UInt8.self), nonce.assumingMemoryBound(to: UInt8.self), counter) == 1
    }

    /// ChaCha20-Poly1305 of `plaintext` into `output` (its length + 16: ciphertext, then tag);
    /// false when OpenSSL refused.
    func seal(into output: UnsafeMutableRawBufferPointer, _ plaintext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8]) -> Bool {
        precondition(mode == .seal && output.count == plaintext.count + 16 && key.count == 32 && nonce.count == 12)
        guard let context else { return false }
        return vaultfile_aead_seal(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), Self.bytes(plaintext), plaintext.count,
                                   key.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce) == 1
    }

    /// The plaintext of `ciphertext` (at least its 16-byte tag) into `output` (its length − 16);
    /// false when it does not authenticate or OpenSSL refused. OpenSSL writes the plaintext before
    /// it checks the tag: on false the output is wiped here, and the caller decides with libsodium.
    func open(into output: UnsafeMutableRawBufferPointer, _ ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8]) -> Bool {
        precondition(mode == .open && ciphertext.count >= 16 && output.count == ciphertext.count - 16 && key.count == 32 && nonce.count == 12)
        guard let context else { return false }
        let opened = vaultfile_aead_open(context, output.baseAddress?.assumingMemoryBound(to: UInt8.self), Self.bytes(ciphertext),
                                         ciphertext.count, key.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce) == 1
        if !opened { wipe(output) }
        return opened
    }

    /// The first byte of `buffer`, or nil for an empty one (the C side reads nothing then).
    private static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) }
    }
}
