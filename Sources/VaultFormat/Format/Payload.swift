import SecureMemory
import VaultModel

// MARK: - Payload: padding and framing into chunks

/// Frames the payload into a `SecretStream` (Crypto/SecretStream.swift) of fixed 64 KiB
/// chunks, the last one tagged FINAL, and checks that framing when opening.
///
/// The plaintext is `content length (u64) ‖ content ‖ zero padding`, padded
/// with PADMÉ so the file size reveals little about the contents.
package enum Payload {
    /// Plaintext bytes per chunk; every chunk but the last is exactly this long.
    package static let chunkLength = 65_536
    /// Ciphertext overhead per chunk (tag byte + 16-byte MAC).
    package static var chunkOverhead: Int { SecretStream.overhead }
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

    /// The ciphertext length for `contentLength` bytes of content: padded, then 17 bytes per chunk.
    static func ciphertextLength(contentLength: Int) -> Int {
        let total = paddedLength(8 + contentLength)
        return total + (total + chunkLength - 1) / chunkLength * chunkOverhead
    }

    /// The padded plaintext on its way into the ciphertext, one chunk at a time.
    ///
    /// Starts the secretstream (`streamHeader`), takes exactly the announced content, pads it,
    /// and writes each 64 KiB chunk to `output` as soon as it is encrypted. The plaintext passes
    /// through one chunk buffer (wiped when released) and is never assembled; the ciphertext is
    /// never held whole either. Appending cannot fail, so the first write error is kept and
    /// thrown by `finish()`; nothing more is written after it.
    struct SealingStream: ByteSink {
        /// The secretstream header, to be stored in the file header.
        var streamHeader: [UInt8] { stream.header }
        private var stream: SecretStream.Encryptor
        private let chunk: PlaintextBuffer
        private var filled = 0
        private var sealedChunk = [UInt8](repeating: 0, count: Payload.chunkLength + Payload.chunkOverhead)
        private let output: any SealedOutput
        private var failure: VaultError?
        private let contentLength: Int
        private let plaintextLength: Int
        /// Plaintext bytes appended so far, the length prefix included.
        private var written = 0

        /// Starts a stream for exactly `contentLength` bytes of content under `key`.
        ///
        /// Nothing reaches `output` before the first chunk is full, so the caller writes the
        /// file header (which holds `streamHeader`) first. Throws when the chunk buffer cannot be mapped.
        init(key: SecureBytes, contentLength: Int, output: any SealedOutput) throws(VaultError) {
            chunk = try PlaintextBuffer.forVault(uninitializedCount: Payload.chunkLength)
            self.output = output
            self.contentLength = contentLength
            plaintextLength = Payload.paddedLength(8 + contentLength)
            stream = SecretStream.Encryptor(key: key)
            append(UInt64(contentLength))
        }

        mutating func append(raw run: UnsafeRawBufferPointer) {
            precondition(written + run.count <= 8 + contentLength, "more content than announced")
            var taken = 0
            while taken < run.count {
                if filled == Payload.chunkLength { push(final: false) }
                // A whole chunk of the run that is not the last chunk of the plaintext is encrypted
                // where it lies (runs of stored records are most of a re-seal): no copy.
                if filled == 0 && run.count - taken >= Payload.chunkLength
                    && written + taken + Payload.chunkLength < plaintextLength {
                    push(UnsafeRawBufferPointer(rebasing: run[taken..<taken + Payload.chunkLength]), final: false)
                    taken += Payload.chunkLength
                    continue
                }
                let count = min(run.count - taken, Payload.chunkLength - filled)
                (chunk.bytes.baseAddress! + filled).copyMemory(from: run.baseAddress! + taken, byteCount: count)
                filled += count
                taken += count
            }
            written += run.count
        }

        /// Appends the zero padding, encrypts the last chunk (tagged FINAL), and throws the first
        /// write error if there was one.
        mutating func finish() throws(VaultError) {
            precondition(written == 8 + contentLength, "the content encoder wrote a length other than it announced")
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
            stream.wipe()
            if let failure { throw failure }
        }

        /// Encrypts the chunk buffer and empties it.
        private mutating func push(final: Bool) {
            let plaintext = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(chunk.bytes)[..<filled])
            filled = 0
            push(plaintext, final: final)
        }

        /// Encrypts `plaintext` as the next chunk and writes it to the output.
        private mutating func push(_ plaintext: UnsafeRawBufferPointer, final: Bool) {
            let length = plaintext.count + Payload.chunkOverhead
            guard failure == nil else { return }
            sealedChunk.withUnsafeMutableBytes { sealed in
                stream.push(plaintext, final: final, into: sealed)
                do throws(VaultError) {
                    try output.write(UnsafeRawBufferPointer(rebasing: sealed[..<length]))
                } catch {
                    failure = error
                }
            }
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
    ///
    /// With `history` (the header's flag) and a source that `readsEntriesOnly`, the chunks after
    /// the entries are authenticated but not kept (`HistorySkim`); `entriesEnd` then says where
    /// the kept entries end, and the plaintext holds nothing after that chunk.
    static func open(
        _ ciphertext: inout some CiphertextSource, streamHeader: [UInt8], key: SecureBytes, history: Bool = false
    ) throws(VaultError) -> (plaintext: PlaintextBuffer, content: Range<Int>, entriesEnd: Int?) {
        let fullChunk = chunkLength + chunkOverhead
        let total = ciphertext.count
        guard total > 0 else { throw .payloadDamaged(chunk: 0, reason: "the payload is missing (file truncated after the header)") }
        let chunkCount = (total + fullChunk - 1) / fullChunk
        let lastLength = total - (chunkCount - 1) * fullChunk
        // An empty final chunk is rejected: two encodings of one payload must not exist.
        guard lastLength > chunkOverhead else {
            throw .payloadDamaged(chunk: chunkCount - 1, reason: "the last chunk is \(lastLength) bytes, too short to hold data (truncated or extended)")
        }

        guard var stream = SecretStream.Decryptor(key: key, header: streamHeader) else {
            throw .payloadDamaged(chunk: 0, reason: "invalid stream header")
        }
        defer { stream.wipe() }

        // Not zero-filled first: decryption writes every byte, and the buffer is wiped when released.
        let plaintext = try PlaintextBuffer.forVault(uninitializedCount: total - chunkCount * chunkOverhead)
        // Raised chunk by chunk below: a payload that fails early (a damaged or hostile file of up
        // to 1 GiB) is wiped only as far as it was decrypted, instead of faulting in every page of
        // the buffer just to zero it (the two-thread run of `decrypt` keeps the same promise).
        plaintext.written = 0
        let out = plaintext.bytes.baseAddress!
        var skim: HistorySkim? = history && ciphertext.readsEntriesOnly && chunkCount > 1 ? try HistorySkim() : nil
        var chunk = 0
        while chunk < chunkCount {
            let isLast = chunk == chunkCount - 1
            let start = chunk * fullChunk
            let skimming = skim?.isSkimming == true
            // Skimmed chunks that hold no padding are authenticated without being decrypted, a
            // long run of them on two threads (Payload+EntriesOnly.swift).
            if skimming, let run = skim!.verifyOnlyRun(from: chunk, chunkCount: chunkCount) {
                try verify(run, stream: &stream, ciphertext: &ciphertext)
                chunk = run.upperBound
                continue
            }
            // Without a skim, every full chunk but the last is decrypted on two threads (Payload+EntriesOnly.swift).
            if skim == nil, chunk == 0, chunkCount - 1 >= parallelRunLength, ciphertext.readsInAnyOrder {
                try decrypt(0..<chunkCount - 1, stream: &stream, ciphertext: &ciphertext, into: plaintext)
                chunk = chunkCount - 1
                continue
            }
            let destination = skimming ? skim!.scratch.bytes.baseAddress! : out + chunk * chunkLength
            if !skimming { plaintext.written = min(plaintext.count, (chunk + 1) * chunkLength) }
            var pulled: SecretStream.Tag?
            try ciphertext.withBytes(start..<start + (isLast ? lastLength : fullChunk)) { input in
                pulled = stream.pull(input, into: destination)
            }
            try check(pulled, chunk: chunk, isLast: isLast, total: total)
            skim?.decrypted(chunk: chunk, length: (isLast ? lastLength : fullChunk) - chunkOverhead, isLast: isLast, in: plaintext)
            chunk += 1
        }
        if let skim, let entriesEnd = skim.entriesEnd {
            plaintext.written = skim.written
            return (plaintext, 8..<(try skim.finish(plaintext)), entriesEnd)
        }
        return (plaintext, 8..<(try contentEnd(of: UnsafeRawBufferPointer(plaintext.bytes))), nil)
    }

    /// Throws the damage a chunk's pull (or verification) result shows: not authentic, FINAL
    /// before the last chunk, no FINAL on the last, or a tag this format does not use.
    static func check(_ pulled: SecretStream.Tag?, chunk: Int, isLast: Bool, total: Int) throws(VaultError) {
        guard let tag = pulled else {
            throw .payloadDamaged(chunk: chunk, reason: "authentication failed (modified, reordered or truncated data)")
        }
        let isFinal = tag == .final
        if isFinal && !isLast {
            throw .payloadDamaged(chunk: chunk, reason: "the final chunk is followed by \(total - (chunk + 1) * (chunkLength + chunkOverhead)) more bytes")
        }
        if !isFinal && isLast {
            throw .payloadDamaged(chunk: chunk, reason: "the stream ends without its final chunk (truncated)")
        }
        if case .other(let unexpected) = tag {
            throw .payloadDamaged(chunk: chunk, reason: "unexpected chunk tag \(unexpected)")
        }
    }

    /// Checks the length prefix and the padding; returns where the content ends.
    private static func contentEnd(of plaintext: UnsafeRawBufferPointer) throws(VaultError) -> Int {
        guard plaintext.count >= 8 else { throw .contentsDamaged("the plaintext is shorter than its length field") }
        var reader = ByteReader(plaintext[...], reading: .plaintext)
        let length = try reader.read(UInt64.self, "content length")
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

#if compiler(>=6.2)
/// A type whose metatype may be used from another thread (SE-0470's `SendableMetatype`): a generic
/// function called in a `DispatchQueue.concurrentPerform` block uses its type parameter's there.
package typealias ConcurrentMetatype = SendableMetatype
#else
/// Before Swift 6.2 every metatype may be used from another thread: no constraint.
package typealias ConcurrentMetatype = Any
#endif

/// The payload's ciphertext as `Payload.open` reads it, one chunk at a time: the file's bytes
/// already in memory, or the vault file itself, so that a large vault is never held twice.
/// A source's type is used on the second thread of a two-thread read (`Payload.authenticate`
/// calls its generic reader there): its metatype must be safe to share (`ConcurrentMetatype`),
/// as the metatype of every type whose conformance is not isolated to an actor is.
package protocol CiphertextSource: ConcurrentMetatype {
    /// The length of the ciphertext, in bytes.
    var count: Int { get }
    /// Calls `body` with ciphertext bytes `range`, which lies within `count`. Ranges usually come
    /// in order; the entries-only read also reads MACs ahead and chunks from two threads, each
    /// through its own copy of the source.
    mutating func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError)
    /// Whether the reader wants the entries only (`get`): the history section of content version 2
    /// is then authenticated chunk by chunk but not kept (`Payload.open`).
    var readsEntriesOnly: Bool { get }
    /// Whether chunks may be read out of order, from two threads (`Payload.open`'s two-thread
    /// decryption); false for a source that must see the ciphertext whole and in order
    /// (`HashingCiphertext`: a signed vault's payload hash).
    var readsInAnyOrder: Bool { get }
}

extension CiphertextSource {
    /// Everything is kept unless the source says otherwise.
    package var readsEntriesOnly: Bool { false }
    /// Any order unless the source says otherwise.
    package var readsInAnyOrder: Bool { true }
}

/// Ciphertext already in memory.
package struct CiphertextBytes: CiphertextSource {
    /// The ciphertext.
    let bytes: ArraySlice<UInt8>

    /// The ciphertext's length.
    package var count: Int { bytes.count }

    /// Calls `body` with the bytes of `range`.
    package func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

// MARK: - Where sealed bytes go

/// Where a sealed vault's bytes go as they are produced: the temporary file of an atomic
/// write (`VaultStore`), or memory. A class, so that the sealing stream and its caller share it.
package protocol SealedOutput: AnyObject {
    /// Writes all of `bytes`, in order after what was written before, or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError)
    /// Overwrites bytes already written, from `offset` on (a signed seal writes its header last,
    /// over the room it kept at the start: docs/FORMAT.md "Signed seals"), or throws.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(VaultError)
}

extension SealedOutput {
    /// Writes all of `bytes`.
    package func write(_ bytes: [UInt8]) throws(VaultError) {
        var failure: VaultError?
        bytes.withUnsafeBytes { raw in
            do throws(VaultError) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Overwrites the bytes at `offset` with `bytes`.
    package func write(_ bytes: [UInt8], at offset: Int) throws(VaultError) {
        var failure: VaultError?
        bytes.withUnsafeBytes { raw in
            do throws(VaultError) { try write(raw, at: offset) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

/// Sealed bytes collected in memory.
final class SealedBytes: SealedOutput {
    private(set) var bytes: [UInt8] = []

    /// Room for `capacity` bytes, so that a sealed vault of known length is never regrown.
    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    func write(_ run: UnsafeRawBufferPointer) { bytes.append(contentsOf: run) }

    func write(_ run: UnsafeRawBufferPointer, at offset: Int) {
        precondition(offset + run.count <= bytes.count, "overwriting bytes not yet written")
        bytes.withUnsafeMutableBytes { stored in (stored.baseAddress! + offset).copyMemory(from: run.baseAddress!, byteCount: run.count) }
    }
}
