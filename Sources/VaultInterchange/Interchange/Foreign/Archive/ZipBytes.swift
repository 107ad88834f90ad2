import SecureMemory
import VaultModel

// MARK: - Where a ZIP archive's bytes are

/// The bytes of a `ZipArchive`: the whole file in memory, or the import's file itself
/// (`ImportWindows`), read at an offset as the archive asks for a part of it (its end record, its
/// central directory, a local header, an entry's compressed bytes), so that a 1pux (2.4 MB at
/// 100,000 items) is never whole in memory while its items are read (issue 44's memory rule).
///
/// A file that no longer reads as it did when opened (shorter, a failed read) throws
/// `JSONStream.declined()` here; the caller then reads the file whole, whose reader says what is
/// wrong. Every buffer a part of the file is read into is wiped before it is freed (compressed
/// secrets).
final class ZipBytes {
    private enum Storage {
        case memory([UInt8])
        case file(ImportWindows)
    }

    private let storage: Storage
    /// The archive's length.
    let count: Int
    /// The last block read for `withBytes` from a file (local headers lie one after another).
    private var block: [UInt8] = []
    private var blockStart = 0
    /// The length of a block read for a small part of a file.
    private static let blockLength = 16 << 10

    /// An archive whose bytes are all in `bytes`.
    init(_ bytes: [UInt8]) {
        storage = .memory(bytes)
        count = bytes.count
    }

    /// An archive read from `windows`' file, of the size it had when it was opened.
    init(_ windows: ImportWindows) {
        storage = .file(windows)
        count = windows.byteCount
    }

    deinit { wipe(&block) }

    /// Whether the bytes are read from a file (each part read is a copy, wiped once used).
    var isFile: Bool {
        if case .file = storage { return true }
        return false
    }

    /// Calls `body` with the bytes of `range` (inside `0..<count`).
    func withBytes<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws(VaultError) -> Result) throws(VaultError) -> Result {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "a range inside the archive")
        switch storage {
        case .memory(let bytes):
            return try bytes.withUnsafeBufferPointer { (all) throws(VaultError) -> Result in try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[range]))) }
        case .file(let windows):
            if range.count <= Self.blockLength {
                // A small part through the block (the local headers of an archive's entries).
                if range.lowerBound < blockStart || range.upperBound > blockStart + block.count {
                    let length = min(Self.blockLength, count - range.lowerBound)
                    if block.count != length {
                        wipe(&block)
                        block = [UInt8](repeating: 0, count: length)
                    }
                    blockStart = range.lowerBound
                    try block.withUnsafeMutableBufferPointer { (buffer) throws(VaultError) in try windows.read(at: range.lowerBound, into: UnsafeMutableRawBufferPointer(buffer)) }
                }
                return try block.withUnsafeBufferPointer { (all) throws(VaultError) -> Result in
                    try body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[range.lowerBound - blockStart..<range.upperBound - blockStart])))
                }
            }
            var part = [UInt8](repeating: 0, count: range.count)
            defer { wipe(&part) }
            try part.withUnsafeMutableBufferPointer { (buffer) throws(VaultError) in try windows.read(at: range.lowerBound, into: UnsafeMutableRawBufferPointer(buffer)) }
            return try part.withUnsafeBufferPointer { (buffer) throws(VaultError) -> Result in try body(UnsafeRawBufferPointer(buffer)) }
        }
    }

    /// The bytes of `range`: shared with the archive in memory, a copy read from a file (the
    /// caller wipes it when `isFile`).
    func slice(_ range: Range<Int>) throws(VaultError) -> ArraySlice<UInt8> {
        switch storage {
        case .memory(let bytes):
            return bytes[range]
        case .file(let windows):
            var part = [UInt8](repeating: 0, count: range.count)
            do throws(VaultError) {
                try part.withUnsafeMutableBufferPointer { (buffer) throws(VaultError) in try windows.read(at: range.lowerBound, into: UnsafeMutableRawBufferPointer(buffer)) }
            } catch {
                wipe(&part)
                throw error
            }
            return part[...]
        }
    }

    /// Fills `buffer` with the bytes from `offset` on.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) {
        precondition(offset >= 0 && buffer.count <= count - offset, "a range inside the archive")
        switch storage {
        case .memory(let bytes):
            bytes.withUnsafeBytes { all in
                if buffer.count > 0 { buffer.baseAddress!.copyMemory(from: all.baseAddress! + offset, byteCount: buffer.count) }
            }
        case .file(let windows):
            try windows.read(at: offset, into: buffer)
        }
    }
}

extension ImportWindows {
    /// Fills `buffer` with the file's bytes from `offset` on (`ZipBytes`); throws
    /// `JSONStream.declined()` when the file ends before (it shrank since it was opened) and the
    /// read's own error (kept in `readError`) when a read fails.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) {
        var filled = 0
        while filled < buffer.count {
            let got = try next(at: offset + filled, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            guard got > 0 else { throw JSONStream.declined() }
            filled += got
        }
    }
}
