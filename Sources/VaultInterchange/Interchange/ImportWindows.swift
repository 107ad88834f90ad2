#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultModel

// MARK: - An import's file, a window at a time

/// An import's input file read a window at a time from its start, as often as a reader asks:
/// the CSV exports and enpass-json are scanned as read (`Interchange.read(windows:format:now:options:)`), so that
/// the file is never whole in memory beside the records made of it; a reader that declines the
/// stream at a repeated name reads it twice more (a plan of the names' numbers, then the build:
/// `ForeignBuilder.build(streaming:)`); one that declines it otherwise (an entry the record writer
/// refuses) reads it again whole (`readAll`).
///
/// The caller reads the file (`read`: up to the buffer's size at an offset, 0 at the end), so
/// that its own errors (a failed read, a file grown past the limit) come back as they were thrown
/// (`readError`). Each window is wiped once scanned, and the buffer when the reading ends.
public final class ImportWindows {
    /// The file's size when it was opened (room for the records is reserved from it).
    public let byteCount: Int
    /// The bytes of a window: 64 KiB (a test cuts smaller ones).
    let windowLength: Int
    private let read: (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Int
    /// The error `read` threw, which stopped the import: rethrow it rather than the error the
    /// library threw in its place.
    public private(set) var readError: (any Error)?

    /// A file of `byteCount` bytes read by `read`, which fills the start of the buffer it is given
    /// from the file's `offset` and returns how many bytes it read (0 at the end of the file).
    public convenience init(byteCount: Int, read: @escaping (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Int) {
        self.init(byteCount: byteCount, windowLength: 64 << 10, read: read)
    }

    /// `init(byteCount:read:)` with windows of `windowLength` bytes.
    init(byteCount: Int, windowLength: Int, read: @escaping (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Int) {
        precondition(windowLength > 0, "a window holds a byte")
        self.byteCount = byteCount
        self.windowLength = windowLength
        self.read = read
    }

    /// Up to `count` bytes from the start of the file (fewer when it is shorter): the head a
    /// format is told from (`FormatSniffer`).
    public func head(_ count: Int) throws(VaultError) -> [UInt8] {
        try bytes(from: 0, count: count)
    }

    /// Up to `count` bytes from the end of the file (a ZIP's central directory, `FormatSniffer.sniffZIP`).
    public func tail(_ count: Int) throws(VaultError) -> [UInt8] {
        let start = max(0, byteCount - count)
        return try bytes(from: start, count: byteCount - start)
    }

    /// Up to `count` bytes of the file from `start` (fewer at its end); wiped when a read fails.
    private func bytes(from start: Int, count: Int) throws(VaultError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0, failure: VaultError?
        bytes.withUnsafeMutableBytes { buffer in
            while filled < count {
                do throws(VaultError) {
                    let got = try next(at: start + filled, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                    if got == 0 { break }
                    filled += got
                } catch {
                    failure = error
                    break
                }
            }
        }
        if let failure {
            wipe(&bytes)
            throw failure
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    /// The whole file in one array, for a reader that needs it (the stream declined).
    public func readAll() throws(VaultError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        do {
            try forEachWindow { window in
                if bytes.capacity < bytes.count + window.count {
                    // The file grew: by hand, so that the old buffer is wiped before it is freed.
                    var larger: [UInt8] = []
                    larger.reserveCapacity(max(bytes.count * 2, bytes.count + window.count))
                    larger.append(contentsOf: bytes)
                    wipe(&bytes)
                    bytes = larger
                }
                bytes.append(contentsOf: window)
            }
        } catch {
            wipe(&bytes)
            throw error
        }
        return bytes
    }

    /// Reads at `offset` into `buffer`, keeping what `read` throws.
    func next(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) -> Int {
        do {
            let got = try read(offset, buffer)
            precondition((0...buffer.count).contains(got), "a read within the buffer")
            return got
        } catch {
            readError = error
            throw .malformedInput("reading the input failed")
        }
    }
}

extension ImportWindows {
    /// The file from its start as a `JSONStream`'s source (enpass-json read a window at a time):
    /// each call reads up to `room` more bytes into the window's free room (never past its
    /// capacity: the stream's window is never moved unwiped); false at the end of the file.
    func jsonSource() -> JSONStreamSource {
        var offset = 0
        return { (window, room) throws(VaultError) -> Bool in
            guard room > 0 else { return true }
            let before = window.count
            window.append(contentsOf: repeatElement(0, count: room))
            var got = 0, failure: VaultError?
            window.withUnsafeMutableBytes { buffer in
                do throws(VaultError) {
                    got = try self.next(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[before...]))
                } catch {
                    failure = error
                }
            }
            window.removeLast(room - got)  // zeros, never read
            if let failure { throw failure }
            offset += got
            return got > 0
        }
    }
}

extension ImportWindows: CSVSource {
    func forEachWindow(_ body: (UnsafeBufferPointer<UInt8>) throws(VaultError) -> Void) throws(VaultError) {
        let window = UnsafeMutableRawBufferPointer.allocate(byteCount: windowLength, alignment: 16)
        defer {
            wipe(window)
            window.deallocate()
        }
        var offset = 0
        while true {
            let got = try next(at: offset, into: window)
            if got == 0 { return }
            let bytes = UnsafeMutableRawBufferPointer(rebasing: window[..<got])
            try body(UnsafeBufferPointer(bytes.bindMemory(to: UInt8.self)))
            wipe(bytes)  // plaintext: not left for the next window to half cover
            offset += got
        }
    }

    var expectedRows: Int { 0 }
}
