import CZlib
import SecureMemory
import VaultModel

// MARK: - DEFLATE inflated a window at a time

/// One DEFLATE stream inflated as its reader asks, a window at a time (a KDBX file's payload, whose
/// XML is read as it comes: `KDBXPayloadStream`), bounded by a declared size as `Inflate.inflate`
/// is: never more than `size` bytes come out, and the stream must end exactly there with nothing
/// after it. The caller has checked `size` against its limits (`Gzip.declaredSize`) before making
/// the stream. zlib's memory (its window holds the last 32 KiB inflated) is zeroed when freed.
///
/// `input` must stay valid and unchanged for the stream's life (the caller reads it inside the
/// scope that lends it).
final class InflateStream {
    /// Inflated bytes handed over so far.
    private(set) var produced = 0
    /// The bytes the stream must inflate to.
    let size: Int
    private let input: UnsafeBufferPointer<UInt8>
    private let what: String
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var fed = 0
    private var ended = false
    /// Input given to zlib at a time (its counts are 32-bit).
    private static let inputChunk = 1 << 30

    /// A stream over `input` (`wrapper` around it) that must inflate to exactly `size` bytes;
    /// `what` names it in messages.
    init(_ input: UnsafeBufferPointer<UInt8>, size: Int, wrapper: Inflate.Wrapper, what: String) throws(VaultError) {
        precondition(size >= 0, "the caller checks the declared size")
        (self.input, self.size, self.what) = (input, size, what)
        guard vaultfile_inflate_init(stream, wrapper.windowBits) == Z_OK else {
            stream.deallocate()
            throw .limitExceeded("\(what): zlib could not allocate its memory to inflate")
        }
    }

    deinit {
        inflateEnd(stream)  // its window and state, zeroed by vaultfile_zlib_free
        stream.deallocate()
    }

    /// Fills `target` with the next inflated bytes (all of it, unless fewer remain of `size`) and
    /// returns how many; 0 once the stream has ended exactly at `size` bytes with no input after
    /// it. Throws `.malformedInput` when the stream is damaged, ends early, holds more than `size`
    /// bytes or is followed by more input.
    func read(into target: UnsafeMutableBufferPointer<UInt8>) throws(VaultError) -> Int {
        guard !ended else { return 0 }
        let room = min(target.count, size - produced)
        guard room > 0 else {
            try finish()
            return 0
        }
        var written = 0
        while written < room {
            feed()
            stream.pointee.next_out = target.baseAddress! + written
            stream.pointee.avail_out = UInt32(room - written)
            let code = CZlib.inflate(stream, Z_NO_FLUSH)
            written = room - Int(stream.pointee.avail_out)
            switch code {
            case Z_STREAM_END:
                produced += written
                guard produced == size else { throw damaged("it inflates to \(produced) bytes, not the \(size) declared") }
                try endedExactly()
                return written
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && fed < input.count:
                continue  // the next chunk of input
            default:
                throw failure(code)
            }
        }
        produced += written
        return written
    }

    /// The stream ended at `size` bytes: nothing may follow it.
    private func endedExactly() throws(VaultError) {
        ended = true
        let consumed = Int(stream.pointee.total_in)
        guard consumed == input.count else { throw .malformedInput("\(what): not gzip data (\(input.count - consumed) bytes after its end)") }
    }

    /// Inflates to the end and throws what is wrong with the stream, if anything: once a reader
    /// of what it inflated has found something wrong, damage of the stream (the root cause) is
    /// said rather than what the reader made of it, as when everything was inflated first. What
    /// it inflates is zeroed and dropped; it stops at `size` bytes as `read` does.
    func drain() throws(VaultError) {
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        defer { SecureMemory.wipe(&scratch) }
        var failure: VaultError?
        scratch.withUnsafeMutableBufferPointer { buffer in
            do throws(VaultError) { while try read(into: buffer) > 0 {} } catch { failure = error }
        }
        if let failure { throw failure }
    }

    // MARK: Private

    /// Gives zlib the next chunk of input when it has taken the last.
    private func feed() {
        guard stream.pointee.avail_in == 0, fed < input.count, let base = input.baseAddress else { return }
        let count = min(Self.inputChunk, input.count - fed)
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base + fed)
        stream.pointee.avail_in = UInt32(count)
        fed += count
    }

    /// After `size` bytes: the stream must end there, with no input after it.
    private func finish() throws(VaultError) {
        var spare: UInt8 = 0
        while true {
            feed()
            let code = withUnsafeMutablePointer(to: &spare) { spare in
                stream.pointee.next_out = spare
                stream.pointee.avail_out = 1
                return CZlib.inflate(stream, Z_NO_FLUSH)
            }
            if stream.pointee.avail_out == 0 { throw damaged("it inflates to more than \(size) bytes, its declared size") }
            switch code {
            case Z_STREAM_END:
                try endedExactly()
                return
            case Z_OK:
                continue
            case Z_BUF_ERROR where stream.pointee.avail_in == 0 && fed < input.count:
                continue
            default:
                throw failure(code)
            }
        }
    }

    private func damaged(_ why: String) -> VaultError {
        ended = true
        return .malformedInput("\(what): the compressed data is damaged (\(why))")
    }

    /// What zlib's `code` (not the stream's end, nor progress) says.
    private func failure(_ code: Int32) -> VaultError {
        if code == Z_BUF_ERROR { return damaged("it ends early") }
        if code == Z_MEM_ERROR {
            ended = true
            return .limitExceeded("\(what): zlib ran out of memory inflating it")
        }
        let message = stream.pointee.msg.map { String(cString: $0) }
        return damaged(code == Z_NEED_DICT ? "it asks for a preset dictionary" : "zlib: \(message ?? "error \(code)")")
    }
}
