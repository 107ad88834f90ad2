import CZlib
import SecureMemory
import VaultModel

// MARK: - A ZIP entry read a piece at a time

/// The bytes of one entry of a `ZipArchive`, inflated a piece at a time into the caller's
/// buffer (`JSONStream`'s window), so that a large entry (1pux's `export.data`, about 13 times
/// its compressed size) is never held whole. From an archive read from a file (`ZipBytes`), the
/// compressed bytes are read `blockLength` at a time into a buffer wiped when the reader goes.
///
/// Bounded as `ZipArchive.contents(of:)` is: never more than the declared size is produced (zlib
/// is never given room past it), and the end is checked: the stream ends exactly at the declared
/// size and its CRC-32 matches, else `read` throws. It throws `JSONStream.declined()`-style
/// errors without detail: its caller reads the entry again whole (`contents(of:)`), whose message
/// says what is wrong. zlib's memory is zeroed before it is freed (`vaultfile_inflate_init`).
final class ZipEntryReader {
    private let archive: ZipArchive
    private let entry: ZipArchive.Entry
    /// Where the entry's compressed bytes start in the archive.
    private let start: Int
    private var stream = z_stream()
    private var streaming = false
    /// Compressed bytes given to zlib so far.
    private var fed = 0
    /// Bytes produced so far, and their running CRC-32.
    private var produced = 0
    private var crc: UInt32 = 0
    private var finished = false
    /// From a file: the compressed bytes read last (from `blockStart` in the entry), not all fed yet.
    private var block: [UInt8] = []
    private var blockStart = 0
    /// The compressed bytes read from a file at a time.
    static let blockLength = 64 << 10

    /// A reader of `entry` of `archive` (stored or deflated, not encrypted).
    init(_ entry: ZipArchive.Entry, of archive: ZipArchive) throws(VaultError) {
        guard entry.flags & 1 == 0, entry.method == 0 || entry.method == 8 else { throw JSONStream.declined() }
        guard entry.method == 8 || entry.size == entry.compressedSize else { throw JSONStream.declined() }
        (self.archive, self.entry, self.start) = (archive, entry, entry.dataStart)
        if entry.method == 8 {
            guard vaultfile_inflate_init(&stream, -15) == Z_OK else { throw JSONStream.declined() }
            streaming = true
        }
    }

    deinit {
        if streaming { inflateEnd(&stream) }
        wipe(&block)
    }

    /// Appends at most `room` more bytes of the entry to `window`; false once the entry has
    /// ended (at its declared size, its CRC-32 checked).
    func read(into window: inout [UInt8], room: Int) throws(VaultError) -> Bool {
        guard !finished else { return false }
        let wanted = min(room, entry.size - produced)
        guard wanted > 0 || produced == entry.size else { return true }
        let before = window.count
        window.append(contentsOf: repeatElement(0, count: wanted))
        let written: Int
        if entry.method == 0 {
            written = wanted
            let at = start + produced
            try window.withUnsafeMutableBufferPointer { (target) throws(VaultError) in
                try archive.source.read(at: at, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: target[before..<before + wanted])))
            }
        } else {
            written = try inflate(into: &window, at: before, count: wanted)
        }
        window.withUnsafeBufferPointer { buffer in
            crc = UInt32(vaultfile_crc32(UInt(crc), buffer.baseAddress! + before, written))
        }
        if written < wanted {
            // Never longer than the window's free room: the zeros left are dropped.
            window.removeLast(wanted - written)
        }
        produced += written
        if produced == entry.size {
            guard try ended(), crc == entry.crc else { throw JSONStream.declined() }
            finished = true
        }
        return true
    }

    /// Calls `body` with the compressed bytes from `fed` on that are at hand (in memory, the rest
    /// of the entry; from a file, the rest of the block read, the next block once it is used up)
    /// and how many there are.
    private func withInput<Result>(_ body: (UnsafePointer<UInt8>, Int) throws(VaultError) -> Result) throws(VaultError) -> Result {
        let compressed = entry.compressedSize
        guard archive.source.isFile else {
            return try archive.source.withBytes(start + fed..<start + compressed) { (input) throws(VaultError) -> Result in
                try body(input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)!, input.count)
            }
        }
        if fed >= blockStart + block.count && fed < compressed {
            let length = min(Self.blockLength, compressed - fed)
            if block.count != length {
                wipe(&block)
                block = [UInt8](repeating: 0, count: length)
            }
            blockStart = fed
            let at = start + fed
            try block.withUnsafeMutableBufferPointer { (buffer) throws(VaultError) in try archive.source.read(at: at, into: UnsafeMutableRawBufferPointer(buffer)) }
        }
        let offset = fed - blockStart
        return try block.withUnsafeBufferPointer { (buffer) throws(VaultError) -> Result in
            try body(buffer.baseAddress.map { $0 + offset } ?? UnsafePointer(bitPattern: 1)!, max(0, buffer.count - offset))
        }
    }

    /// Inflates up to `count` bytes into `window` from `offset`; how many were written.
    private func inflate(into window: inout [UInt8], at offset: Int, count: Int) throws(VaultError) -> Int {
        try window.withUnsafeMutableBufferPointer { target throws(VaultError) -> Int in
            var written = 0
            while written < count {
                let code = try withInput { (input, available) throws(VaultError) -> Int32 in
                    stream.next_in = UnsafeMutablePointer(mutating: input)
                    stream.avail_in = UInt32(min(available, 1 << 30))
                    stream.next_out = target.baseAddress! + offset + written
                    stream.avail_out = UInt32(count - written)
                    let availableIn = Int(stream.avail_in), room = Int(stream.avail_out)
                    let code = CZlib.inflate(&stream, Z_NO_FLUSH)
                    fed += availableIn - Int(stream.avail_in)
                    written += room - Int(stream.avail_out)
                    stream.next_in = nil
                    stream.next_out = nil
                    return code
                }
                switch code {
                case Z_OK: continue
                case Z_STREAM_END:
                    // Ended before its declared size: damage (told by contents(of:)).
                    guard produced + written == entry.size else { throw JSONStream.declined() }
                    return written
                default: throw JSONStream.declined()
                }
            }
            return written
        }
    }

    /// Whether the deflate stream ends here (with no byte more), as `Inflate` checks it.
    private func ended() throws(VaultError) -> Bool {
        guard entry.method == 8 else { return true }
        var spare: UInt8 = 0
        while true {
            let (code, past) = try withInput { (input, available) throws(VaultError) -> (Int32, Bool) in
                withUnsafeMutablePointer(to: &spare) { spare in
                    stream.next_in = UnsafeMutablePointer(mutating: input)
                    stream.avail_in = UInt32(min(available, 1 << 30))
                    stream.next_out = spare
                    stream.avail_out = 1
                    let availableIn = Int(stream.avail_in)
                    let code = CZlib.inflate(&stream, Z_NO_FLUSH)
                    fed += availableIn - Int(stream.avail_in)
                    stream.next_in = nil
                    stream.next_out = nil
                    return (code, stream.avail_out == 0)
                }
            }
            if past { return false }  // a byte past the declared size
            switch code {
            case Z_STREAM_END: return true
            case Z_OK: continue
            default: return false
            }
        }
    }
}
