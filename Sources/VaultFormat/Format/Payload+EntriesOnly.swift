import Dispatch
import Synchronization
import SecureMemory
import VaultModel

// MARK: - Reading the entries of a vault with history, and only authenticating the rest

/// How `Payload.open` reads a format 1.2 vault for a reader that never looks at history (`get`):
/// every chunk is authenticated exactly as in a full read, but once the entries are all in the
/// plaintext buffer, the remaining chunks are not kept: those wholly inside the history section
/// are only authenticated (`SecretStream.Decryptor.verify`: Poly1305, no ChaCha20 over the
/// message), those that hold padding are decrypted into one reused 64 KiB scratch buffer, where
/// the padding is checked, and dropped. The big buffer is then written only up to
/// the entries' last chunk, and only that much is wiped: a history ten times the size of the
/// entries no longer costs fresh pages and a wipe of all of it (docs/PERFORMANCE.md).
///
/// It changes no check: the length prefix is read as `Payload.contentEnd` reads it (and when it is
/// wrong nothing is skimmed, so the same error follows), and the padding in the skimmed chunks is
/// checked for zeros as they pass. Where the entries end is found with `RecordLayout.skip` (`read`, the
/// decoder's own reader); `EntryCodec.decode` then reads the entries within that end only.
struct HistorySkim {
    /// Where the chunks after the entries' last one are decrypted.
    let scratch: PlaintextBuffer
    /// Where the entries end (a plaintext offset), once skimming started.
    private(set) var entriesEnd: Int?
    /// How many plaintext bytes the big buffer holds (from its start).
    private(set) var written = 0
    private var scanner: EntriesEndScanner?
    private var contentEnd: Int?
    private var nonZeroPadding = false

    /// A skim with its scratch buffer.
    init() throws(VaultError) {
        scratch = try PlaintextBuffer.forVault(uninitializedCount: Payload.chunkLength)
    }

    /// Whether the next chunk goes to `scratch` instead of its place in the plaintext.
    var isSkimming: Bool { entriesEnd != nil }

    /// The chunks from `chunk` on that lie wholly before the padding and are not the last: their
    /// plaintext is never looked at, and authenticating them is enough (`Payload.verify`); nil
    /// when `chunk` is not such a chunk.
    func verifyOnlyRun(from chunk: Int, chunkCount: Int) -> Range<Int>? {
        guard let contentEnd else { return nil }
        var end = chunk
        while end < chunkCount - 1 && (end + 1) * Payload.chunkLength <= contentEnd { end += 1 }
        return end > chunk ? chunk..<end : nil
    }

    /// Takes note of chunk `chunk` (`length` plaintext bytes), just authenticated: in `plaintext`
    /// while not skimming, else in `scratch`.
    mutating func decrypted(chunk: Int, length: Int, isLast: Bool, in plaintext: PlaintextBuffer) {
        let start = chunk * Payload.chunkLength
        if isSkimming {
            if let contentEnd, contentEnd < start + length {
                let from = max(contentEnd - start, 0)
                if !UnsafeRawBufferPointer(scratch.bytes)[from..<length].allSatisfy({ $0 == 0 }) { nonZeroPadding = true }
            }
            return
        }
        written = start + length
        let bytes = UnsafeRawBufferPointer(plaintext.bytes)
        if chunk == 0 {
            // The length prefix as `Payload.contentEnd` checks it; anything wrong: read it all, as always.
            guard bytes.count >= 8 else { return }
            let length = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[$1]) << (8 * UInt64($1)) }
            guard length <= UInt64(bytes.count - 8), Payload.paddedLength(8 + Int(length)) == bytes.count else { return }
            contentEnd = 8 + Int(length)
            scanner = EntriesEndScanner(contentEnd: 8 + Int(length))
        }
        guard !isLast, var found = scanner else { return }
        entriesEnd = found.advance(bytes, available: written)
        scanner = found
    }

    /// The content's end, once every chunk authenticated; the checks `Payload.contentEnd` makes
    /// on the padding, over the bytes kept and the bytes skimmed.
    func finish(_ plaintext: PlaintextBuffer) throws(VaultError) -> Int {
        guard let contentEnd else { preconditionFailure("skimming starts only after the length prefix was read") }
        if contentEnd < written, !UnsafeRawBufferPointer(plaintext.bytes)[contentEnd..<written].allSatisfy({ $0 == 0 }) {
            throw .contentsDamaged("non-zero padding")
        }
        if nonZeroPadding { throw .contentsDamaged("non-zero padding") }
        return contentEnd
    }
}

// MARK: - Where the entries of content version 2 end

/// Walks the entries of content version 2 (docs/FORMAT.md §7.1) as the plaintext arrives, one
/// whole record at a time, with the decoder's reader and no checks; it says where the entries end
/// once it has read them all. It gives up (and the whole payload is kept) on anything the decoder
/// would refuse before that: another content version, an entry count over the limit, or records
/// running past the content.
struct EntriesEndScanner {
    /// Where the content ends (8 + the length prefix): the walk never reads past it.
    let contentEnd: Int
    /// The next record's offset in the plaintext, once the content header was read.
    private var next: Int?
    private var remaining = 0
    private var gaveUp = false

    /// A walk of content that ends at `contentEnd`.
    init(contentEnd: Int) { self.contentEnd = contentEnd }

    /// Reads every whole record within `plaintext[..<available]`; returns where the entries end
    /// once the last one was read, else nil.
    mutating func advance(_ plaintext: UnsafeRawBufferPointer, available: Int) -> Int? {
        guard !gaveUp else { return nil }
        let limit = min(available, contentEnd)
        // Version (1), versions kept (1), byte budget (4), trash limit (2), entry count (4).
        let headerEnd = 8 + 12
        if next == nil {
            guard limit >= headerEnd else { return nil }
            let count = (16..<20).reduce(0) { $0 | Int(plaintext[$1]) << (8 * ($1 - 16)) }
            guard plaintext[8] == EntryCodec.historyVersion, count <= VaultLimits.maxEntries else {
                gaveUp = true
                return nil
            }
            next = headerEnd
            remaining = count
        }
        guard var offset = next, offset <= limit else { return nil }
        var reader = RecordReader(plaintext[offset..<limit], reading: .contents)
        while remaining > 0 {
            // A record cut by the end of what is decrypted is read again once the next chunk is in.
            do { try RecordLayout.skip(&reader, entry: 0) } catch { break }
            offset = reader.offset
            remaining -= 1
        }
        next = offset
        return remaining == 0 ? offset : nil
    }
}

// MARK: - Authenticating a run of chunks, on two threads when long

extension Payload {
    /// Runs this long or longer are split between two threads.
    static let parallelRunLength = 32

    /// Authenticates the full, non-final chunks `run` (their plaintext is not wanted) with `stream`
    /// positioned at the run's first chunk, and leaves it positioned after the last; throws the
    /// damage of the first chunk, in stream order, that fails.
    static func verify(_ run: Range<Int>, stream: inout SecretStream.Decryptor, ciphertext: inout some CiphertextSource) throws(VaultError) {
        try authenticate(run, stream: &stream, ciphertext: &ciphertext, decryptingInto: nil)
    }

    /// `verify`, and each chunk's plaintext decrypted to its place in `plaintext`: a full read of
    /// a large payload (`Payload.open` without a history skim) on two threads. Each chunk is
    /// authenticated before a byte of it is written, as a pull in order does. On success
    /// `plaintext.written` reaches the run's end; on a failure it covers what was decrypted before
    /// the failing chunk, and what the other half wrote past it is wiped here, so that a payload
    /// that fails early (a damaged or hostile file of up to 1 GiB) faults in no page it never wrote.
    static func decrypt(_ run: Range<Int>, stream: inout SecretStream.Decryptor, ciphertext: inout some CiphertextSource,
                        into plaintext: PlaintextBuffer) throws(VaultError) {
        try authenticate(run, stream: &stream, ciphertext: &ciphertext, decryptingInto: plaintext)
    }

    /// The work of `verify` and `decrypt`.
    ///
    /// A long run is split in two: the state at the second half's first chunk follows from the
    /// state at the run's start and the MACs stored in the first half (each pull XORs its MAC into
    /// the inner nonce and counts; a REKEY tag would change the key, but the first half then
    /// reports that tag, which comes first). Each half reads through its own copy of the source
    /// and decrypts through its own copy of the state (with its own keystream context). When the
    /// first half fails, the second stops at its next chunk; when the second fails, the first
    /// goes on, since a failure in it comes first in stream order and is the one reported.
    private static func authenticate(_ run: Range<Int>, stream: inout SecretStream.Decryptor, ciphertext: inout some CiphertextSource,
                                     decryptingInto plaintext: PlaintextBuffer?) throws(VaultError) {
        let total = ciphertext.count
        guard run.count >= parallelRunLength else {
            var reached = run.lowerBound
            defer { if let plaintext { plaintext.written = max(plaintext.written, reached * chunkLength) } }
            let never = Atomic<Bool>(false)
            try inOrder(run, stream: &stream, ciphertext: &ciphertext, total: total, into: plaintext, reached: &reached, stop: never)
            return
        }
        let middle = run.lowerBound + run.count / 2
        let fullChunk = chunkLength + chunkOverhead
        var macs = [UInt8](repeating: 0, count: 8)
        for chunk in run.lowerBound..<middle {
            let macStart = (chunk + 1) * fullChunk - 16
            try ciphertext.withBytes(macStart..<macStart + 8) { mac in
                for index in 0..<8 { macs[index] ^= mac[index] }
            }
        }
        // Each thread has its own state and its own copy of the source; nothing is shared but the
        // file (pread), the plaintext buffer (each thread writes its own chunks of it), the stop
        // flag, and the failure and progress slots, each written by one thread only, read after both end.
        nonisolated(unsafe) var firstStream = stream
        nonisolated(unsafe) var secondStream = stream.withOwnKeystream()
        secondStream.skip(inonceXOR: macs, chunks: UInt32(middle - run.lowerBound))
        nonisolated(unsafe) var firstSource = ciphertext
        nonisolated(unsafe) var secondSource = ciphertext
        nonisolated(unsafe) var firstFailure: VaultError?
        nonisolated(unsafe) var secondFailure: VaultError?
        nonisolated(unsafe) var firstReached = run.lowerBound
        nonisolated(unsafe) var secondReached = middle
        let firstFailed = Atomic<Bool>(false), never = Atomic<Bool>(false)
        defer {
            firstStream.wipe()
            secondStream.wipe()
        }
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            do throws(VaultError) {
                if half == 0 {
                    try inOrder(run.lowerBound..<middle, stream: &firstStream, ciphertext: &firstSource, total: total, into: plaintext,
                                reached: &firstReached, stop: never)
                } else {
                    try inOrder(middle..<run.upperBound, stream: &secondStream, ciphertext: &secondSource, total: total, into: plaintext,
                                reached: &secondReached, stop: firstFailed)
                }
            } catch {
                if half == 0 {
                    firstFailure = error
                    firstFailed.store(true, ordering: .releasing)
                } else {
                    secondFailure = error
                }
            }
        }
        if let firstFailure {
            if let plaintext {
                // What the second half decrypted lies past the failure: wiped now, and the buffer's
                // wipe then covers only the chunks before the failing one.
                wipe(UnsafeMutableRawBufferPointer(rebasing: plaintext.bytes[middle * chunkLength..<secondReached * chunkLength]))
                plaintext.written = max(plaintext.written, firstReached * chunkLength)
            }
            throw firstFailure
        }
        if let plaintext { plaintext.written = max(plaintext.written, secondReached * chunkLength) }
        if let secondFailure { throw secondFailure }
        stream = secondStream
    }

    /// One thread's part: each chunk of `run` verified, or pulled into its place in `plaintext`;
    /// `reached` is the chunk after the last one that authenticated. It ends early (without an
    /// error: the other half's is reported) before the next chunk once `stop` is set.
    private static func inOrder(
        _ run: Range<Int>, stream: inout SecretStream.Decryptor, ciphertext: inout some CiphertextSource, total: Int,
        into plaintext: PlaintextBuffer?, reached: inout Int, stop: borrowing Atomic<Bool>
    ) throws(VaultError) {
        let fullChunk = chunkLength + chunkOverhead
        let output = plaintext?.bytes.baseAddress
        for chunk in run {
            if stop.load(ordering: .acquiring) { return }
            var authenticated: SecretStream.Tag?
            try ciphertext.withBytes(chunk * fullChunk..<(chunk + 1) * fullChunk) { input in
                if let output {
                    authenticated = stream.pull(input, into: output + chunk * chunkLength)
                } else {
                    authenticated = stream.verify(input)
                }
            }
            try check(authenticated, chunk: chunk, isLast: false, total: total)
            reached = chunk + 1
        }
    }
}
