import CSodium
import SecureMemory

// MARK: - libsodium's secretstream

/// `crypto_secretstream_xchacha20poly1305`: a sequence of chunks under one key, each
/// authenticated and tagged MESSAGE or FINAL, which cannot be reordered, dropped, truncated or
/// extended unnoticed. The payload's framing and padding (Format/Payload.swift) sit on top.
///
/// The states hold key material: call `wipe()` when done with them.
enum SecretStream {
    /// The stream header's length (24 bytes).
    static var headerLength: Int { Int(crypto_secretstream_xchacha20poly1305_headerbytes()) }
    /// What each chunk's ciphertext adds to its plaintext: the tag byte and the 16-byte MAC.
    static var overhead: Int { Int(crypto_secretstream_xchacha20poly1305_abytes()) }

    /// The tag of a chunk.
    enum Tag: Equatable {
        /// An ordinary chunk.
        case message
        /// The last chunk of the stream.
        case final
        /// A tag this format does not use (libsodium's PUSH or REKEY), by its value.
        case other(UInt8)

        init(_ raw: UInt8) {
            switch raw {
            case crypto_secretstream_xchacha20poly1305_tag_message(): self = .message
            case crypto_secretstream_xchacha20poly1305_tag_final(): self = .final
            default: self = .other(raw)
            }
        }
    }

    /// The Poly1305 MAC at the end of each chunk.
    static let macLength = 16

    /// `input` XORed into `output` with the keystream of a chunk's message under `state` (its key
    /// and 12-byte nonce, from block 2 on, as libsodium's push and pull use it).
    static func keystream(_ state: inout crypto_secretstream_xchacha20poly1305_state, bulk: BulkChaCha,
                          into output: UnsafeMutableRawPointer, _ input: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: &state.k) { key in
            withUnsafeBytes(of: &state.nonce) { nonce in
                if bulk.xor(into: output, input, key: key.baseAddress!, nonce: nonce.baseAddress!, counter: 2) { return }
                _ = crypto_stream_chacha20_ietf_xor_ic(
                    output.assumingMemoryBound(to: UInt8.self), input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
                    nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), 2, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    // MARK: Encrypting

    /// The encrypting end of a stream (`init_push`, `push`).
    struct Encryptor {
        /// The stream header: random, and needed (with the key) to decrypt.
        let header: [UInt8]
        private var state = crypto_secretstream_xchacha20poly1305_state()

        /// Starts a stream under `key` (32 bytes) with a fresh random header.
        init(key: SecureBytes) {
            ensureSodiumInitialised()
            var header = [UInt8](repeating: 0, count: SecretStream.headerLength)
            var started = crypto_secretstream_xchacha20poly1305_state()
            key.withUnsafeBytes { keyBytes in
                _ = crypto_secretstream_xchacha20poly1305_init_push(
                    &started, &header, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            self.header = header
            state = started
            sodium_memzero(&started, MemoryLayout.size(ofValue: started))
        }

        /// Encrypts `plaintext` as the next chunk into the start of `ciphertext`, which holds at
        /// least `plaintext.count + SecretStream.overhead` bytes; `final` tags it as the last.
        ///
        /// What libsodium's push does, in two steps: the message encrypted with the keystream push
        /// uses (block counter 2) through OpenSSL's faster ChaCha20 (`BulkChaCha`; libsodium's when
        /// OpenSSL refuses), then the tag byte, the MAC over that ciphertext and the state moved on
        /// (`vaultfile_secretstream_push_mac` in the CSodium shim). Tied to libsodium's push byte for
        /// byte by `CryptoBuildingBlockTests.test_secretStreamPush_*`.
        mutating func push(_ plaintext: UnsafeRawBufferPointer, final: Bool, into ciphertext: UnsafeMutableRawBufferPointer) {
            precondition(ciphertext.count >= plaintext.count + SecretStream.overhead, "the ciphertext buffer is too small")
            // libsodium's push refuses a message past this length; the hand-written MAC step must too.
            precondition(UInt64(plaintext.count) <= UInt64(crypto_secretstream_xchacha20poly1305_messagebytes_max()), "a secretstream message too long")
            let tag = final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
            let output = ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if !plaintext.isEmpty { SecretStream.keystream(&state, bulk: keystream, into: output + 1, plaintext) }
            vaultfile_secretstream_push_mac(&state, output, UInt64(plaintext.count), tag)
        }

        /// The OpenSSL context of `push`'s keystream.
        private let keystream = BulkChaCha(.keystream)

        /// Zeroes the state and the key the keystream context holds.
        mutating func wipe() {
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
            keystream.forget()
        }
    }

    // MARK: Decrypting

    /// The decrypting end of a stream (`init_pull`, `pull`).
    struct Decryptor {
        private var state = crypto_secretstream_xchacha20poly1305_state()

        /// Starts decrypting the stream with `header` under `key`; nil when libsodium refuses the header.
        init?(key: SecureBytes, header: [UInt8]) {
            ensureSodiumInitialised()
            guard header.count == SecretStream.headerLength else { return nil }
            let status = key.withUnsafeBytes { keyBytes in
                crypto_secretstream_xchacha20poly1305_init_pull(&state, header, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            guard status == 0 else {
                wipe()
                return nil
            }
        }

        /// Authenticates and decrypts the next chunk, writing `ciphertext.count - overhead` bytes at
        /// `plaintext`; returns the chunk's tag, or nil when it does not authenticate.
        ///
        /// What libsodium's pull does, in two steps: `verify` (the MAC, checked before a byte is
        /// written, and the state moved on), then the message decrypted with the keystream pull
        /// uses (the chunk's key and nonce, block counter 2) through OpenSSL's faster ChaCha20
        /// (`BulkChaCha`), or libsodium's when OpenSSL refuses. Tied to libsodium's pull byte for
        /// byte by `CryptoBuildingBlockTests.test_secretStreamPull_*`.
        mutating func pull(_ ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer) -> Tag? {
            // The key and nonce of this chunk, before `verify` moves the state on.
            var chunkState = state
            defer { sodium_memzero(&chunkState, MemoryLayout.size(ofValue: chunkState)) }
            guard let tag = verify(ciphertext) else { return nil }
            let message = UnsafeRawBufferPointer(rebasing: ciphertext[1..<(ciphertext.count - SecretStream.macLength)])
            guard !message.isEmpty else { return tag }
            SecretStream.keystream(&chunkState, bulk: keystream, into: plaintext, message)
            return tag
        }

        /// The OpenSSL context of `pull`'s keystream, used by one thread at a time: a copy that
        /// pulls on another thread takes its own (`withOwnKeystream`).
        private var keystream = BulkChaCha(.keystream)

        /// A copy of this decryptor (the same state) with a keystream context of its own, to pull
        /// on another thread.
        func withOwnKeystream() -> Decryptor {
            var copy = self
            copy.keystream = BulkChaCha(.keystream)
            return copy
        }

        /// Authenticates the next chunk as `pull` does and advances the same way, without
        /// decrypting it (`vaultfile_secretstream_verify` in the CSodium shim): for a chunk whose
        /// plaintext would be dropped. Returns the chunk's tag, or nil when it does not authenticate.
        mutating func verify(_ ciphertext: UnsafeRawBufferPointer) -> Tag? {
            var tag: UInt8 = 0
            let status = vaultfile_secretstream_verify(
                &state, &tag, ciphertext.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(ciphertext.count))
            return status == 0 ? Tag(tag) : nil
        }

        /// Moves the state past `chunks` chunks without reading them, as that many pulls would
        /// (`vaultfile_secretstream_skip`): `inonceXOR` is the XOR of the first 8 bytes of their
        /// MACs. Only for chunks that carry no REKEY tag, fewer than the counter's 2³² − 1.
        mutating func skip(inonceXOR: [UInt8], chunks: UInt32) {
            precondition(inonceXOR.count == 8, "eight bytes of the MACs")
            let status = vaultfile_secretstream_skip(&state, inonceXOR, chunks)
            precondition(status == 0, "a payload has far fewer chunks than the counter counts")
        }

        /// Zeroes the state and the key the keystream context holds.
        mutating func wipe() {
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
            keystream.forget()
        }
    }
}
