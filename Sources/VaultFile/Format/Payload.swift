import CSodium
import KDF

// MARK: - Payload: padding and the chunked secretstream

/// Encrypts and decrypts the payload: `crypto_secretstream_xchacha20poly1305`
/// in fixed 64 KiB chunks, the last one tagged FINAL.
///
/// The plaintext is `content length (u64) ‖ content ‖ zero padding`, padded
/// with PADMÉ so the file size reveals little about the contents.
enum Payload {
    /// Plaintext bytes per chunk; every chunk but the last is exactly this long.
    static let chunkLength = 65_536
    /// Ciphertext overhead per chunk (tag byte + 16-byte MAC).
    static var chunkOverhead: Int { Int(crypto_secretstream_xchacha20poly1305_abytes()) }
    /// The smallest padded plaintext, so that tiny vaults look alike.
    static let minimumPaddedLength = 1_024

    // MARK: Padding

    /// PADMÉ: rounds `length` up so that at most O(log log length) bits of it leak (overhead ≤ 12 %).
    static func paddedLength(_ length: Int) -> Int {
        let length = max(length, minimumPaddedLength)
        let exponent = Int.bitWidth - 1 - length.leadingZeroBitCount  // floor(log2 L)
        let bitsOfExponent = Int.bitWidth - exponent.leadingZeroBitCount  // floor(log2 E) + 1
        let lowBits = exponent - bitsOfExponent
        let mask = (1 << lowBits) - 1
        return (length + mask) & ~mask
    }

    // MARK: Sealing

    /// Encrypts the content that `writeContent` writes (exactly `contentLength` bytes) with its
    /// length prefix and padding under `key`; returns the stream header and the ciphertext.
    ///
    /// The plaintext is never assembled: it passes through one 64 KiB chunk buffer (wiped when
    /// released), each chunk encrypted as soon as it is full.
    static func seal(
        contentLength: Int, key: SecureBytes, writeContent: (inout SealingStream) -> Void
    ) -> (streamHeader: [UInt8], ciphertext: [UInt8]) {
        ensureSodiumInitialised()
        let total = paddedLength(8 + contentLength)
        let chunkCount = (total + chunkLength - 1) / chunkLength
        let ciphertextLength = total + chunkCount * chunkOverhead
        var streamHeader = [UInt8](repeating: 0, count: Int(crypto_secretstream_xchacha20poly1305_headerbytes()))
        let ciphertext = [UInt8](unsafeUninitializedCapacity: ciphertextLength) { output, initialized in
            var stream = SealingStream(key: key, streamHeader: &streamHeader, output: output, plaintextLength: total)
            stream.append(UInt64(contentLength))
            writeContent(&stream)
            precondition(stream.written == 8 + contentLength, "the content encoder wrote a length other than it announced")
            stream.finish()
            initialized = ciphertextLength
        }
        return (streamHeader, ciphertext)
    }

    /// The padded plaintext on its way into the ciphertext, one chunk at a time.
    struct SealingStream: ByteSink {
        private var state = crypto_secretstream_xchacha20poly1305_state()
        private let chunk = PlaintextBuffer(uninitializedCount: Payload.chunkLength)
        private var filled = 0
        private let output: UnsafeMutableBufferPointer<UInt8>
        private var outputOffset = 0
        private let plaintextLength: Int
        /// Plaintext bytes appended so far.
        private(set) var written = 0

        init(key: SecureBytes, streamHeader: inout [UInt8], output: UnsafeMutableBufferPointer<UInt8>, plaintextLength: Int) {
            self.output = output
            self.plaintextLength = plaintextLength
            key.withUnsafeBytes { keyBytes in
                _ = crypto_secretstream_xchacha20poly1305_init_push(
                    &state, &streamHeader, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }

        mutating func append(raw run: UnsafeRawBufferPointer) {
            precondition(written + run.count <= plaintextLength, "more plaintext than the padded length")
            var taken = 0
            while taken < run.count {
                if filled == Payload.chunkLength { push(final: false) }
                let count = min(run.count - taken, Payload.chunkLength - filled)
                (chunk.bytes.baseAddress! + filled).copyMemory(from: run.baseAddress! + taken, byteCount: count)
                filled += count
                taken += count
            }
            written += run.count
        }

        /// Appends the zero padding and encrypts the last chunk, tagged FINAL.
        mutating func finish() {
            var padding = plaintextLength - written
            while padding > 0 {
                if filled == Payload.chunkLength { push(final: false) }
                let count = min(padding, Payload.chunkLength - filled)
                (chunk.bytes.baseAddress! + filled).initializeMemory(as: UInt8.self, repeating: 0, count: count)
                filled += count
                padding -= count
            }
            written = plaintextLength
            push(final: true)
            precondition(outputOffset == output.count, "the ciphertext is not filled exactly")
            sodium_memzero(&state, MemoryLayout.size(ofValue: state))
        }

        private mutating func push(final: Bool) {
            let tag = final ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
            _ = crypto_secretstream_xchacha20poly1305_push(
                &state, output.baseAddress! + outputOffset, nil,
                chunk.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(filled), nil, 0, tag)
            outputOffset += filled + Payload.chunkOverhead
            filled = 0
        }
    }

    // MARK: Opening

    /// Authenticates and decrypts every chunk of `ciphertext`, then returns the content.
    ///
    /// Nothing is returned before the whole stream has authenticated. Damage
    /// is reported with the chunk index: a chunk that fails to authenticate, a
    /// FINAL tag before the last chunk (data appended after the end), no FINAL
    /// tag on the last chunk (truncation), or a last chunk with no plaintext.
    /// Returns the whole padded plaintext (wiped when released) and where the content lies in it,
    /// so that the content is never moved or copied.
    static func open(_ ciphertext: inout some CiphertextSource, streamHeader: [UInt8], key: SecureBytes) throws(VaultError) -> (plaintext: PlaintextBuffer, content: Range<Int>) {
        ensureSodiumInitialised()
        let fullChunk = chunkLength + chunkOverhead
        let total = ciphertext.count
        guard total > 0 else { throw .payloadDamaged(chunk: 0, reason: "the payload is missing (file truncated after the header)") }
        let chunkCount = (total + fullChunk - 1) / fullChunk
        let lastLength = total - (chunkCount - 1) * fullChunk
        // An empty final chunk is rejected: two encodings of one payload must not exist.
        guard lastLength > chunkOverhead else {
            throw .payloadDamaged(chunk: chunkCount - 1, reason: "the last chunk is \(lastLength) bytes, too short to hold data (truncated or extended)")
        }

        var state = crypto_secretstream_xchacha20poly1305_state()
        defer { sodium_memzero(&state, MemoryLayout.size(ofValue: state)) }
        let initStatus = key.withUnsafeBytes { keyBytes in
            crypto_secretstream_xchacha20poly1305_init_pull(&state, streamHeader, keyBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard initStatus == 0 else { throw .payloadDamaged(chunk: 0, reason: "invalid stream header") }

        // Not zero-filled first: decryption writes every byte, and the buffer is wiped when released.
        let plaintext = PlaintextBuffer(uninitializedCount: total - chunkCount * chunkOverhead)
        let out = plaintext.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for chunk in 0..<chunkCount {
            let isLast = chunk == chunkCount - 1
            let start = chunk * fullChunk
            var status: Int32 = 0
            var tag: UInt8 = 0
            try ciphertext.withBytes(start..<start + (isLast ? lastLength : fullChunk)) { input in
                status = crypto_secretstream_xchacha20poly1305_pull(
                    &state, out + chunk * chunkLength, nil, &tag,
                    input.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(input.count), nil, 0)
            }
            guard status == 0 else {
                throw .payloadDamaged(chunk: chunk, reason: "authentication failed (modified, reordered or truncated data)")
            }
            let isFinal = tag == crypto_secretstream_xchacha20poly1305_tag_final()
            if isFinal && !isLast {
                throw .payloadDamaged(chunk: chunk, reason: "the final chunk is followed by \(total - (chunk + 1) * fullChunk) more bytes")
            }
            if !isFinal && isLast {
                throw .payloadDamaged(chunk: chunk, reason: "the stream ends without its final chunk (truncated)")
            }
            if tag != crypto_secretstream_xchacha20poly1305_tag_final() && tag != crypto_secretstream_xchacha20poly1305_tag_message() {
                throw .payloadDamaged(chunk: chunk, reason: "unexpected chunk tag \(tag)")
            }
        }
        return (plaintext, 8..<(try contentEnd(of: UnsafeRawBufferPointer(plaintext.bytes))))
    }

    /// Checks the length prefix and the padding; returns where the content ends.
    private static func contentEnd(of plaintext: UnsafeRawBufferPointer) throws(VaultError) -> Int {
        guard plaintext.count >= 8 else { throw .contentsDamaged("the plaintext is shorter than its length field") }
        var length: UInt64 = 0
        for index in 0..<8 { length |= UInt64(plaintext[index]) << (8 * UInt64(index)) }
        guard length <= UInt64(plaintext.count - 8) else {
            throw .contentsDamaged("the content length \(length) exceeds the plaintext (\(plaintext.count - 8) bytes)")
        }
        let end = 8 + Int(length)
        // Exactly one padded size per content length keeps the encoding canonical.
        guard plaintext.count == paddedLength(end) else {
            throw .contentsDamaged("the padding does not match the content length")
        }
        guard plaintext[end...].allSatisfy({ $0 == 0 }) else { throw .contentsDamaged("non-zero padding") }
        return end
    }
}

// MARK: - Where the ciphertext comes from

/// The payload's ciphertext as `Payload.open` reads it, one chunk at a time: the file's bytes
/// already in memory, or the vault file itself, so that a large vault is never held twice.
protocol CiphertextSource {
    /// The length of the ciphertext, in bytes.
    var count: Int { get }
    /// Calls `body` with ciphertext bytes `range`; the ranges come in order and lie within `count`.
    mutating func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError)
}

/// Ciphertext already in memory.
struct CiphertextBytes: CiphertextSource {
    let bytes: ArraySlice<UInt8>

    var count: Int { bytes.count }

    func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}
