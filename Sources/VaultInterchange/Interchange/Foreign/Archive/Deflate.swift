import CZlib
import SecureMemory
import VaultModel

// MARK: - gzip through the system zlib (the KDBX export's payload)

/// The gzip member of a KDBX export's payload (RFC 1952), made of raw deflate streams
/// (`RawDeflater`) with the system zlib, whose memory is zeroed before it is freed
/// (`vaultfile_zlib_free`).
enum Deflate {}

// MARK: - Raw deflate in pieces, joined into one gzip member

/// A raw deflate stream (RFC 1951, no header) fed piece by piece, its output kept in wiped
/// chunks (`ChunkedBytes`: compressed XML is the entries' text), with the CRC-32 and length of what it
/// was fed. The KDBX export compresses its XML as it is written, and its inner header (which
/// names the attachments the XML met) afterwards, then joins the two into one gzip member
/// (`gzipMember`): the whole XML is never held. zlib's state lives at a fixed address (it
/// points back to it), allocated here, and is zeroed when freed (`vaultfile_zlib_free`).
final class RawDeflater {
    /// The compressed bytes so far.
    let output: ChunkedBytes
    /// The CRC-32 of the bytes fed.
    private(set) var crc = crc32(0, nil, 0)
    /// How many bytes were fed.
    private(set) var length = 0
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var scratch = [UInt8](repeating: 0, count: 1 << 16)

    /// A stream at zlib's `level`, its output room `capacity` bytes before it first grows.
    init(level: Int32 = 6, capacity: Int) throws(VaultError) {
        output = ChunkedBytes(chunk: capacity)
        guard vaultfile_deflate_init_raw(stream, level) == Z_OK else {
            stream.deallocate()
            throw .limitExceeded("zlib could not allocate its memory to compress")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        wipe(&scratch)
    }

    /// How a piece ends.
    enum Flush {
        /// More follows.
        case none
        /// The stream ends here on a byte boundary, leaving nothing to refer back to, with no
        /// final block: another raw stream may follow it (zlib's `Z_FULL_FLUSH`).
        case full
        /// The last block (`Z_FINISH`).
        case finish
    }

    /// Compresses `bytes`, ended as `flush` says.
    func add(_ bytes: [UInt8], flush: Flush) throws(VaultError) {
        let failure: VaultError? = bytes.withUnsafeBytes { buffer in
            do throws(VaultError) { try add(buffer, flush: flush) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Compresses the bytes at `bytes`, ended as `flush` says.
    func add(_ bytes: UnsafeRawBufferPointer, flush ending: Flush) throws(VaultError) {
        let flush = switch ending {
        case .none: Z_NO_FLUSH
        case .full: Z_FULL_FLUSH
        case .finish: Z_FINISH
        }
        let input = bytes.baseAddress?.assumingMemoryBound(to: Bytef.self)
        if let input, !bytes.isEmpty { crc = crc32_z(crc, input, bytes.count) }
        length += bytes.count
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input)
        stream.pointee.avail_in = uInt(bytes.count)
        var code: Int32
        repeat {
            let room = scratch.count
            code = scratch.withUnsafeMutableBufferPointer { target in
                stream.pointee.next_out = target.baseAddress
                stream.pointee.avail_out = uInt(room)
                return deflate(stream, flush)
            }
            guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
                throw .limitExceeded("zlib could not compress the export (error \(code))")
            }
            let produced = room - Int(stream.pointee.avail_out)
            scratch.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<produced])) }
        } while stream.pointee.avail_out == 0
        guard flush != Z_FINISH || code == Z_STREAM_END else { throw .limitExceeded("zlib did not finish the compressed stream") }
    }
}

extension Deflate {
    /// The three pieces of one gzip member (RFC 1952) made of `first` (ended by a full flush) and
    /// then `second` (finished): a header (no name, no time, OS unknown), the two raw streams one
    /// after the other (a valid deflate stream: the first ends byte-aligned with no final block,
    /// the second refers to nothing before it), and the trailer (CRC-32 of both inputs, their
    /// length modulo 2³²). As zlib's examples/gzjoin.c joins members.
    static func gzipMember(_ first: RawDeflater, _ second: RawDeflater) -> (header: [UInt8], trailer: [UInt8]) {
        let crc = crc32_combine(first.crc, second.crc, off_t(second.length))
        let total = UInt32(truncatingIfNeeded: first.length + second.length)
        return ([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF],
                KDBXBytes.le32(UInt32(truncatingIfNeeded: crc)) + KDBXBytes.le32(total))
    }
}

// MARK: - Bytes in chunks

/// Bytes appended in chunks of a fixed size that never move: growing costs no copy of what is held
/// and no buffer twice the size (a doubling buffer held the old and the new at once, and wiped room
/// it had never used). Each chunk is a `WipedBuffer`, zeroed when released.
final class ChunkedBytes {
    /// The chunks, all full but the last.
    private var chunks: [WipedBuffer] = []
    private let chunkSize: Int
    /// The number of bytes held.
    private(set) var count = 0

    /// An empty store of chunks of `chunk` bytes (at least 4 KiB).
    init(chunk: Int) { chunkSize = max(chunk, 4096) }

    /// Appends a run of bytes.
    func append(contentsOf run: UnsafeBufferPointer<UInt8>) {
        var taken = 0
        while taken < run.count {
            if chunks.isEmpty || chunks[chunks.count - 1].count == chunkSize { chunks.append(WipedBuffer(capacity: chunkSize)) }
            let last = chunks[chunks.count - 1]
            let size = min(run.count - taken, chunkSize - last.count)
            last.append(contentsOf: UnsafeBufferPointer(rebasing: run[taken..<(taken + size)]))
            taken += size
        }
        count += run.count
    }

    /// Appends the bytes at `range` of what is held to `out`.
    func copy(_ range: Range<Int>, to out: inout [UInt8]) {
        var position = range.lowerBound
        while position < range.upperBound {
            let (chunk, offset) = position.quotientAndRemainder(dividingBy: chunkSize)
            let size = min(range.upperBound - position, chunkSize - offset)
            chunks[chunk].withBytes { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[offset..<(offset + size)])) }
            position += size
        }
    }

    /// Everything held, as one array (tests, small outputs).
    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        copy(0..<count, to: &out)
        return out
    }
}
