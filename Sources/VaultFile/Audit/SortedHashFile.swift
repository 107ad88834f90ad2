#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The file sorted by hash

/// A Pwned Passwords file of `HASH:COUNT` lines sorted by hash, searched in place.
///
/// Each lookup narrows a byte range that must hold the line: a probe reads a few hundred bytes
/// with `pread`, skips to the next line start and compares that line's hash. Hashes are uniform,
/// so a probe is placed where the hash would lie (interpolation); when that does not halve the
/// range, the next probe bisects, so no file takes more than twice the probes of bisection. Once
/// the range is a few KiB it is read and scanned. The buffer is one 16 KiB allocation whatever the
/// file's size. Every line probed is checked against the bounds found so far, so a file that is
/// not sorted by hash (the one ordered by prevalence) is refused, not searched wrongly.
final class SortedHashFile {
    let path: String
    let size: Int
    private(set) var hash: BreachHash
    private let fd: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 << 10, alignment: 16)
    private(set) var reads = 0
    private(set) var bytesRead = 0

    /// The range below which a lookup reads and scans instead of probing.
    static let window = 4096
    /// The longest line a list may have: 40 digits, a colon, 20 digits of count, CR LF.
    static let longestLine = 128

    init(path: String) throws(BreachListError) {
        self.path = path
        // O_NONBLOCK: a FIFO swapped in after the caller's stat must not hang the open (it is
        // refused below); reads of a regular file ignore the flag.
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            buffer.deallocate()
            throw .unreadable(path: path, operation: "opening", errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            buffer.deallocate()
            throw .unreadable(path: path, operation: "reading the status of", errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            buffer.deallocate()
            throw .notAFileOrFolder(path: path)
        }
        size = Int(info.st_size)
        hash = .sha1
        do throws(BreachListError) {
            let first = try read(at: 0, count: Self.longestLine)
            guard let colon = first.firstIndex(of: UInt8(ascii: ":")) else {
                throw .notAList(path: path, why: "its first line is not HASH:COUNT")
            }
            switch colon {
            case 40: hash = .sha1
            case 32: hash = .ntlm
            default: throw .notAList(path: path, why: "its first line's hash has \(colon) digits, not 40 (SHA-1) or 32 (NTLM)")
            }
            let zeros = [UInt8](repeating: UInt8(ascii: "0"), count: colon)
            guard PwnedPasswords.readLine(first, comparingWith: zeros, atEnd: first.count == size) != nil else {
                throw .notAList(path: path, why: "its first line is not HASH:COUNT")
            }
        } catch {
            // Every property is set by now: `deinit` runs, closes and deallocates.
            throw error
        }
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// Reads up to `count` bytes from `offset` into the buffer (fewer at the end of the file).
    private func read(at offset: Int, count: Int) throws(BreachListError) -> UnsafeRawBufferPointer {
        let wanted = min(count, buffer.count, max(size - offset, 0))
        var filled = 0
        while filled < wanted {
            let got = pread(fd, buffer.baseAddress! + filled, wanted - filled, off_t(offset + filled))
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, operation: "reading", errno: errno)
            }
            if got == 0 { break }
            filled += got
        }
        reads += 1
        bytesRead += filled
        return UnsafeRawBufferPointer(rebasing: buffer[..<filled])
    }

    // MARK: Lookup

    /// The count on the line of `key` (upper-case hexadecimal), or 0 when no line has it.
    func occurrences(of key: [UInt8]) throws(BreachListError) -> Int {
        var low = 0, high = size
        var lowKey: [UInt8]?, highKey: [UInt8]?
        var interpolating = true
        while high - low > Self.window {
            let span = high - low
            var probe = (low + high) / 2
            if interpolating, let guess = Self.interpolate(key, low: low, high: high, lowKey: lowKey, highKey: highKey) { probe = guess }
            probe = min(max(probe, low + 1), high - 1)
            guard let (start, line) = try line(atOrAfter: probe, before: high, key: key) else {
                high = probe
                interpolating = high - low <= span / 2
                continue
            }
            let found = Array(line.bytes)
            if let lowKey, found.lexicographicallyPrecedes(lowKey) { throw .notSorted(path: path) }
            if let highKey, highKey.lexicographicallyPrecedes(found) { throw .notSorted(path: path) }
            switch line.order {
            case 0: return line.count
            case ..<0: (low, lowKey) = (start + line.length, found)
            default: (high, highKey) = (start, found)
            }
            interpolating = high - low <= span / 2
        }
        return try scan(key, from: low, before: high, after: lowKey, until: highKey)
    }

    /// Where a uniform spread of hashes would put `key` between the lines at `low` and `high`.
    private static func interpolate(_ key: [UInt8], low: Int, high: Int, lowKey: [UInt8]?, highKey: [UInt8]?) -> Int? {
        let target = Double(prefixValue(key)), from = Double(lowKey.map(prefixValue) ?? 0)
        let to = Double(highKey.map(prefixValue) ?? UInt64.max)
        guard to > from, target >= from, target <= to else { return nil }
        return low + Int((target - from) / (to - from) * Double(high - low))
    }

    /// The first 16 hexadecimal digits of `key` as a number.
    private static func prefixValue(_ key: [UInt8]) -> UInt64 {
        var value: UInt64 = 0
        for digit in key.prefix(16) { value = value << 4 | UInt64(digit <= 0x39 ? digit - 0x30 : digit - 0x37) }
        return value
    }

    /// The first line that starts at or after `offset` and before `limit`, with its hash, its
    /// order against `key`, its count and its length; nil when none starts there.
    private func line(atOrAfter offset: Int, before limit: Int, key: [UInt8])
        throws(BreachListError) -> (Int, (bytes: ArraySlice<UInt8>, order: Int, count: Int, length: Int))? {
        let bytes = try read(at: offset - 1, count: 2 * Self.longestLine + 1)
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            if offset - 1 + bytes.count >= size { return nil }
            throw .malformedLine(path: path, inRangeFolder: false)
        }
        let start = offset + newline
        guard start < limit, start < size else { return nil }
        var rest = UnsafeRawBufferPointer(rebasing: bytes[(newline + 1)...])
        if rest.count < Self.longestLine && start + rest.count < size { rest = try read(at: start, count: Self.longestLine) }
        guard let line = PwnedPasswords.readLine(rest, comparingWith: key, atEnd: start + rest.count >= size) else {
            throw .malformedLine(path: path, inRangeFolder: false)
        }
        return (start, (rest[..<key.count].map { PwnedPasswords.hexDigit($0)! }[...], line.order, line.count, line.length))
    }

    /// Reads the lines that start in `from..<before` and looks for `key` among them. Every line of
    /// the window is read, so that its order is checked (against the bounds too) whatever the answer.
    private func scan(_ key: [UInt8], from: Int, before: Int, after lowKey: [UInt8]?, until highKey: [UInt8]?) throws(BreachListError) -> Int {
        let bytes = try read(at: from, count: before - from + Self.longestLine)
        var offset = 0
        var previous = lowKey
        var answer = 0
        while from + offset < before && offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            guard let line = PwnedPasswords.readLine(rest, comparingWith: key, atEnd: from + bytes.count >= size) else {
                throw .malformedLine(path: path, inRangeFolder: false)
            }
            let found = rest[..<key.count].map { PwnedPasswords.hexDigit($0)! }
            if let previous, found.lexicographicallyPrecedes(previous) { throw .notSorted(path: path) }
            if let highKey, highKey.lexicographicallyPrecedes(found) { throw .notSorted(path: path) }
            if line.order == 0 { answer = line.count }
            previous = found
            offset += line.length
        }
        return answer
    }
}
