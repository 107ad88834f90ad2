import CZlib
import SecureMemory
import VaultModel

// MARK: - DEFLATE through the system zlib, bounded by a declared size

/// Decompresses DEFLATE data with the system zlib (Debian's zlib1g; linked statically into the
/// release and portable binaries): the 1pux reader's ZIP entries (raw deflate) and KeePass's
/// gzip-compressed attachments (one gzip member).
///
/// The caller always knows how long the output must be (a ZIP entry's declared size, a gzip
/// member's length field) and has checked that size against its limits before calling: the
/// output is one buffer of exactly that size, filled in chunks, and zlib is never given room past
/// it. Inflated bytes beyond the declared size, or a stream that ends before filling it, is damage.
/// zlib's own memory (its window holds the last 32 KiB inflated) is zeroed before it is freed, and
/// the output is wiped when the stream turns out to be damaged.
enum Inflate {
    /// The container around the DEFLATE stream.
    enum Wrapper {
        /// Raw deflate (RFC 1951), as a ZIP entry stores it: zlib's windowBits −15.
        case raw
        /// One gzip member (RFC 1952): zlib reads its header and checks its CRC-32 and length (windowBits 15 + 16).
        case gzip

        var windowBits: Int32 { self == .raw ? -15 : 15 + 16 }
    }

    /// Output given to zlib at a time.
    private static let outputChunk = 1 << 16
    /// Input given to zlib at a time (its counts are 32-bit).
    private static let inputChunk = 1 << 30

    /// The `size` bytes that the stream at the start of `input` inflates to, and how many bytes of
    /// `input` the stream took (for gzip, its trailer included). Throws `.malformedInput` when the
    /// stream is damaged, ends before `size` bytes or holds more than `size` bytes.
    static func inflate(_ input: ArraySlice<UInt8>, size: Int, wrapper: Wrapper, what: String) throws(VaultError) -> (output: [UInt8], consumed: Int) {
        precondition(size >= 0, "the caller checks the declared size")
        var output = [UInt8](repeating: 0, count: size)
        var stream = z_stream()
        guard vaultfile_inflate_init(&stream, wrapper.windowBits) == Z_OK else {
            throw .limitExceeded("\(what): zlib could not allocate its memory to inflate")
        }
        let outcome = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in run(&stream, source, target) }
        }
        let consumed = Int(stream.total_in)
        inflateEnd(&stream)  // its window and state, zeroed by vaultfile_zlib_free
        func damaged(_ why: String) -> VaultError {
            wipe(&output)
            return .malformedInput("\(what): the compressed data is damaged (\(why))")
        }
        switch outcome {
        case .finished(let produced) where produced == size:
            return (output, consumed)
        case .finished(let produced):
            throw damaged("it inflates to \(produced) bytes, not the \(size) declared")
        case .longer:
            throw damaged("it inflates to more than \(size) bytes, its declared size")
        case .endsEarly:
            throw damaged("it ends early")
        case .zlibError(let code, let message):
            if code == Z_MEM_ERROR {
                wipe(&output)
                throw .limitExceeded("\(what): zlib ran out of memory inflating it")
            }
            throw damaged(code == Z_NEED_DICT ? "it asks for a preset dictionary" : "zlib: \(message ?? "error \(code)")")
        }
    }

    // MARK: The loop

    /// How a stream ended.
    private enum Outcome {
        /// The stream's end, after `produced` bytes.
        case finished(produced: Int)
        /// Output beyond the buffer.
        case longer
        /// The input ran out before the stream's end.
        case endsEarly
        /// zlib refused the data; its message when it gave one (a static string of zlib's).
        case zlibError(code: Int32, message: String?)
    }

    /// Runs `stream` over `source` into `target`, then into one spare byte: any byte written
    /// there is more than the declared size.
    private static func run(_ stream: inout z_stream, _ source: UnsafeBufferPointer<UInt8>,
                            _ target: UnsafeMutableBufferPointer<UInt8>) -> Outcome {
        var fed = 0, produced = 0
        var spare: UInt8 = 0
        return withUnsafeMutablePointer(to: &spare) { spare in
            while true {
                if stream.avail_in == 0, fed < source.count, let base = source.baseAddress {
                    let count = min(inputChunk, source.count - fed)
                    stream.next_in = UnsafeMutablePointer(mutating: base + fed)
                    stream.avail_in = UInt32(count)
                    fed += count
                }
                let full = produced == target.count
                let room = full ? 1 : min(outputChunk, target.count - produced)
                stream.next_out = full ? spare : target.baseAddress! + produced
                stream.avail_out = UInt32(room)
                let code = CZlib.inflate(&stream, Z_NO_FLUSH)
                let written = room - Int(stream.avail_out)
                if full && written > 0 { return .longer }
                produced += written
                switch code {
                case Z_STREAM_END:
                    return .finished(produced: produced)
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0 && fed < source.count:
                    continue  // the next chunk of input
                case Z_BUF_ERROR:
                    return .endsEarly
                default:
                    return .zlibError(code: code, message: stream.msg.map { String(cString: $0) })
                }
            }
        }
    }
}

// MARK: - CRC-32

/// CRC-32 (ISO-HDLC, as ZIP and gzip use it), zlib's `crc32_z`.
enum CRC32 {
    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in UInt32(vaultfile_crc32(0, buffer.baseAddress, buffer.count)) }
    }
}

// MARK: - gzip

/// gzip members (RFC 1952), as KeePass compresses attachments (`Compressed="True"`).
enum Gzip {
    /// The uncompressed size the gzip member `bytes` declares (its last four bytes, ISIZE), once
    /// its header, that size (at most `limit`) and its ratio (above 1 MiB, at most `ZipArchive.maxRatio`
    /// times the member's size) are checked: nothing is inflated.
    static func declaredSize(_ bytes: [UInt8], limit: Int, what: String) throws(VaultError) -> Int {
        func damaged(_ why: String) -> VaultError { .malformedInput("\(what): not gzip data (\(why))") }
        guard bytes.count >= 18, bytes[0] == 0x1F, bytes[1] == 0x8B else { throw damaged("no gzip header") }
        guard bytes[2] == 8 else { throw damaged("a compression method other than deflate") }
        let end = bytes.count - 4
        let size = Int((0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[end + $1]) << (8 * UInt32($1)) })
        guard size <= limit else {
            throw .limitExceeded("\(what) declares \(size) bytes uncompressed, more than the \(limit) allowed; refused before inflating")
        }
        if size > ZipArchive.ratioFloor && size / bytes.count > ZipArchive.maxRatio {
            throw .limitExceeded("\(what) would inflate \(size / bytes.count) times over (a gzip bomb?); refused before inflating "
                                 + "(the limit is \(ZipArchive.maxRatio) times for data above 1 MiB)")
        }
        return size
    }

    /// The decompressed bytes of the gzip member `bytes`, checked by zlib against its CRC-32 and
    /// length. The length field (the last four bytes) is the declared size, checked first
    /// (`declaredSize`): a member above `limit` or inflating too many times over is refused
    /// before anything is inflated, and the inflater stops at that size.
    static func decompress(_ bytes: [UInt8], limit: Int, what: String) throws(VaultError) -> [UInt8] {
        let size = try declaredSize(bytes, limit: limit, what: what)
        var (output, consumed) = try Inflate.inflate(bytes[...], size: size, wrapper: .gzip, what: what)
        guard consumed == bytes.count else {
            wipe(&output)
            throw .malformedInput("\(what): not gzip data (\(bytes.count - consumed) bytes after its end)")
        }
        return output
    }
}
