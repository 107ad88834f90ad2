import Dispatch
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The payload: STREAM of ChaCha20-Poly1305 chunks

/// The payload of an age file: a 16-byte nonce, then the plaintext in chunks of 64 KiB, each
/// sealed with ChaCha20-Poly1305 under `HKDF-SHA-256(ikm = file key, salt = nonce, info =
/// "payload")` and the nonce `counter (11 bytes, big-endian) ‖ last-chunk flag`.
///
/// The whole payload is at hand, so the last chunk is the one that ends the bytes: every chunk
/// before it must open with the flag 0 and it with the flag 1. That refuses, as age does, a
/// payload cut at a chunk boundary (its new last chunk has flag 0), appended data, and two
/// final chunks.
enum AgePayload {
    /// The plaintext bytes of a full chunk.
    static let chunkLength = 64 * 1024
    /// The bytes of a full sealed chunk.
    static let sealedChunkLength = chunkLength + AgeCrypto.tagLength
    /// The size of the payload nonce.
    static let nonceLength = 16

    /// The payload of `plaintext` under `fileKey`, with a fresh nonce.
    static func seal(_ plaintext: UnsafeRawBufferPointer, fileKey: SecureBytes) -> [UInt8] {
        let chunks = max(1, (plaintext.count + chunkLength - 1) / chunkLength)
        var out: [UInt8] = []
        out.reserveCapacity(nonceLength + plaintext.count + chunks * AgeCrypto.tagLength)
        // The sink only appends: it cannot throw.
        try! seal(plaintext, fileKey: fileKey) { out.append(contentsOf: $0) }
        return out
    }

    /// Chunks sealed at a time by the streaming `seal`: 1 MiB of plaintext.
    static let batchChunks = 16

    /// Seals the payload of `plaintext` under `fileKey` (a fresh nonce) and hands it to `sink` in
    /// pieces of at most 1 MiB, in order: a large value needs no second buffer of its size.
    ///
    /// On one thread, through one OpenSSL context: at OpenSSL's speed 100 MiB take about 20 ms,
    /// and on a loaded machine the join of each batch split over threads cost more waiting than
    /// the split saved (bench/share.sh: docs/PERFORMANCE.md, issue 41).
    static func seal(_ plaintext: UnsafeRawBufferPointer, fileKey: SecureBytes, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let nonce = AgeCrypto.randomBytes(count: nonceLength)
        let key = AgeCrypto.hkdf(fileKey, salt: nonce, info: "payload")
        try nonce.withUnsafeBytes { try sink($0) }
        let chunks = max(1, (plaintext.count + chunkLength - 1) / chunkLength)
        var buffer = [UInt8](repeating: 0, count: min(chunks, batchChunks) * sealedChunkLength)
        let bulk = BulkChaCha(.seal)
        var first = 0
        while first < chunks {
            let last = min(first + batchChunks, chunks)
            let length = try buffer.withUnsafeMutableBytes { output in
                key.withUnsafeBytes { key in
                    for index in first..<last {
                        let start = index * chunkLength
                        let end = min(start + chunkLength, plaintext.count)
                        let input = UnsafeRawBufferPointer(rebasing: plaintext[start..<end])
                        let sealedStart = (index - first) * sealedChunkLength
                        let target = UnsafeMutableRawBufferPointer(rebasing: output[sealedStart..<(sealedStart + end - start + AgeCrypto.tagLength)])
                        AgeCrypto.seal(into: target, input, key: key, nonce: chunkNonce(index, last: index == chunks - 1), bulk: bulk)
                    }
                }
                let length = min(last * chunkLength, plaintext.count) - first * chunkLength + (last - first) * AgeCrypto.tagLength
                try sink(UnsafeRawBufferPointer(rebasing: output[0..<length]))
                return length
            }
            precondition(length > 0 || plaintext.count == 0)
            first = last
        }
    }

    /// The plaintext of `payload` (the bytes after the header), in guarded memory, or the first
    /// chunk that fails; nothing of a payload that fails is returned. Refuses a plaintext larger
    /// than `limit` before decrypting anything.
    static func open(_ payload: ArraySlice<UInt8>, fileKey: SecureBytes, limit: Int) throws(AgeFileError) -> SecureBytes {
        let layout = try Layout(payload, limit: limit)
        let plaintext = SecureBytes(count: layout.plaintextLength)
        // The chunks before a failing one are decrypted into `plaintext`, which is wiped as it goes.
        try plaintext.withUnsafeMutableBytes { (output) throws(AgeFileError) in try layout.open(payload, fileKey: fileKey, into: output) }
        return plaintext
    }

    /// `open`, the plaintext in an ordinary array that `prepare` may advise first (huge pages),
    /// for a caller that keeps it in an array anyway (`receive`: an entry's value is one) and
    /// wipes it after use: no guarded buffer of the whole plaintext, and no copy out of it. A
    /// chunk that fails wipes what was decrypted before the error is thrown.
    static func openIntoArray(_ payload: ArraySlice<UInt8>, fileKey: SecureBytes, limit: Int,
                              prepare: (UnsafeMutableRawBufferPointer) -> Void = { _ in }) throws(AgeFileError) -> [UInt8] {
        let layout = try Layout(payload, limit: limit)
        var failure: AgeFileError?
        let plaintext = [UInt8](unsafeUninitializedCapacity: layout.plaintextLength) { buffer, initialized in
            let output = UnsafeMutableRawBufferPointer(buffer)
            prepare(output)
            do throws(AgeFileError) {
                try layout.open(payload, fileKey: fileKey, into: output)
                initialized = output.count
            } catch {
                wipe(output)
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return plaintext
    }

    /// A payload's shape, checked before any key is used: its chunks, and the plaintext's length.
    struct Layout {
        /// How many sealed chunks follow the nonce.
        let chunks: Int
        /// The plaintext's length: the sealed bytes less a tag per chunk.
        let plaintextLength: Int

        /// Checks `payload`'s nonce, its chunks' lengths (age's one encoding) and `limit`.
        init(_ payload: ArraySlice<UInt8>, limit: Int) throws(AgeFileError) {
            guard payload.count >= nonceLength else {
                throw .missingNonce
            }
            let sealed = payload.count - nonceLength
            guard sealed > 0 else { throw .payloadDamaged(chunk: 0, why: "the payload holds no chunk (a file always ends with a final one)") }
            let full = sealed / sealedChunkLength
            let rest = sealed % sealedChunkLength
            chunks = full + (rest == 0 ? 0 : 1)
            guard rest == 0 || rest >= AgeCrypto.tagLength else {
                throw .payloadDamaged(chunk: chunks - 1, why: "the last chunk is shorter than its 16-byte tag (truncated)")
            }
            plaintextLength = sealed - chunks * AgeCrypto.tagLength
            guard plaintextLength <= limit else { throw .plaintextTooLarge(limit: limit) }
            // "The final chunk MUST NOT be empty unless the whole payload is empty": one encoding per payload.
            if chunks > 1, rest == AgeCrypto.tagLength {
                throw .payloadDamaged(chunk: chunks - 1, why: "the last chunk is empty, which only an empty payload may have")
            }
        }

        /// Authenticates and decrypts every chunk of `payload` into `output` (`plaintextLength`
        /// bytes), or throws the first chunk that fails (the chunks before it are then in `output`).
        func open(_ payload: ArraySlice<UInt8>, fileKey: SecureBytes, into output: UnsafeMutableRawBufferPointer) throws(AgeFileError) {
            precondition(output.count == plaintextLength, "the output is the plaintext's length")
            let key = AgeCrypto.hkdf(fileKey, salt: Array(payload.prefix(nonceLength)), info: "payload")
            let chunks = chunks
            let sealed = payload.dropFirst(nonceLength)
            // The index of the first chunk that fails, or nil (closures over buffers rethrow untyped errors: return instead).
            let failed: Int? = key.withUnsafeBytes { key in
                sealed.withUnsafeBytes { input -> Int? in
                    inParallel(chunks: chunks) { range in
                        let bulk = BulkChaCha(.open)
                        for index in range {
                            let start = index * sealedChunkLength
                            let end = min(start + sealedChunkLength, input.count)
                            let outStart = index * chunkLength
                            let target = UnsafeMutableRawBufferPointer(rebasing: output[outStart..<(outStart + end - start - AgeCrypto.tagLength)])
                            guard AgeCrypto.open(into: target, UnsafeRawBufferPointer(rebasing: input[start..<end]), key: key,
                                                 nonce: chunkNonce(index, last: index == chunks - 1), bulk: bulk) else { return index }
                        }
                        return nil
                    }
                }
            }
            if let failed {
                let why = failed == chunks - 1 ? "it does not authenticate as the final chunk (damaged, truncated or extended)"
                    : "it does not authenticate (damaged, or a final chunk followed by more data)"
                throw .payloadDamaged(chunk: failed, why: why)
            }
        }
    }

    /// Runs `body` over `0..<chunks` split into consecutive runs, one per processor (up to 4) for
    /// payloads of 2 MiB and more: chunks are independent, so opening a large file (`receive`) takes
    /// a fraction of the time, with one join. Returns the smallest index a run reported (its first
    /// failure), or nil.
    static func inParallel(chunks: Int, _ body: (Range<Int>) -> Int?) -> Int? {
        let processors = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let runs = chunks >= 32 ? min(processors, 4, chunks / 16) : 1
        guard runs > 1 else { return body(0..<chunks) }
        let results = UnsafeMutableBufferPointer<Int>.allocate(capacity: runs)
        defer { results.deallocate() }
        results.initialize(repeating: -1)
        withoutActuallyEscaping(body) { body in
            // Each run writes its own slot of `results` and its own chunks of the buffers `body`
            // holds: nothing is shared between the threads but what they only read.
            let shared = ParallelRuns(body: body, results: results)
            DispatchQueue.concurrentPerform(iterations: runs) { run in
                shared.results[run] = shared.body((chunks * run / runs)..<(chunks * (run + 1) / runs)) ?? -1
            }
        }
        return results.filter { $0 >= 0 }.min()
    }

    /// The 12-byte nonce of chunk `index`: an 11-byte big-endian counter, then 1 for the last chunk, else 0.
    static func chunkNonce(_ index: Int, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: AgeCrypto.nonceLength)
        var counter = UInt64(index)
        for position in stride(from: 10, through: 3, by: -1) {
            nonce[position] = UInt8(counter & 0xFF)
            counter >>= 8
        }
        nonce[11] = last ? 1 : 0
        return nonce
    }
}

/// The work of `AgePayload.inParallel` handed to its threads.
private struct ParallelRuns: @unchecked Sendable {
    // @unchecked: each thread calls `body` on its own range and writes its own slot of `results`.
    let body: (Range<Int>) -> Int?
    let results: UnsafeMutableBufferPointer<Int>
}
