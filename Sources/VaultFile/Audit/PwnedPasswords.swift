#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Have I Been Pwned's Pwned Passwords, offline

/// A Pwned Passwords download, opened for lookups; nothing is fetched and nothing leaves the machine.
///
/// Either of its two offline forms, told apart by what the path names:
/// - a **file** of `HASH:COUNT` lines sorted by hash (what KeePassXC's `analyze --hibp` reads, about
///   40 GB): searched by interpolation and bisection with `pread`, a few hundred bytes a probe, never
///   read whole, in memory that does not grow with the file;
/// - a **folder** of the 1,048,576 range files `00000.txt` … `FFFFF.txt` of `SUFFIX:COUNT` lines (CRLF) that
///   the official downloader writes: one range file read per lookup.
///
/// The hash kind (SHA-1, 40 hexadecimal digits; NTLM, 32) is read from the list itself; a caller
/// that asks for one kind gets `hashMismatch` for the other. A count of 0 (the downloader's padding)
/// counts as not listed.
public final class PwnedPasswords {
    /// The path as given.
    public let path: String
    /// The hashes the list holds.
    public let hash: BreachHash
    /// Whether the path is a folder of range files (else a sorted file).
    public let isRangeFolder: Bool
    private let file: SortedHashFile?
    private let folder: RangeFolder?

    /// How much of the list lookups have read so far: `pread` calls and bytes.
    public var bytesRead: Int { file?.bytesRead ?? folder?.bytesRead ?? 0 }
    /// The number of reads lookups made so far.
    public var reads: Int { file?.reads ?? folder?.reads ?? 0 }

    /// Opens the list at `path`, checks its first line, and learns its hash kind (`asking` one
    /// kind refuses a list of the other).
    public init(path: String, asking: BreachHash? = nil) throws(BreachListError) {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else { throw .unreadable(path: path, operation: "opening", errno: errno) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            let folder = try RangeFolder(path: path)
            (self.folder, file, hash, isRangeFolder) = (folder, nil, folder.hash, true)
        case S_IFREG:
            let file = try SortedHashFile(path: path)
            (self.file, folder, hash, isRangeFolder) = (file, nil, file.hash, false)
        default:
            throw .notAFileOrFolder(path: path)
        }
        if let asking, asking != hash { throw .hashMismatch(path: path, found: hash, asked: asking) }
    }

    /// How many times the list says `password` was seen in breaches (0: not listed); nil when the
    /// password has no form of the list's hash (NTLM of bytes that are not UTF-8). The digest and
    /// its hexadecimal form are wiped before this returns.
    public func occurrences(of password: UnsafeRawBufferPointer) throws(BreachListError) -> Int? {
        var digest = [UInt8](repeating: 0, count: hash.digestLength)
        defer { wipe(&digest) }
        guard digest.withUnsafeMutableBytes({ hash.digest(of: password, into: $0) }) else { return nil }
        return try occurrences(ofDigest: digest)
    }

    /// How many times the list says the password of hash `digest` was seen (0: not listed).
    public func occurrences(ofDigest digest: [UInt8]) throws(BreachListError) -> Int {
        precondition(digest.count == hash.digestLength)
        var hex = Self.upperHex(digest)
        defer { wipe(&hex) }
        if let file { return try file.occurrences(of: hex) }
        return try folder!.occurrences(of: hex)
    }

    /// Upper-case hexadecimal ASCII of `bytes`, as the lists write hashes.
    static func upperHex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8](repeating: 0, count: bytes.count * 2)
        for (index, byte) in bytes.enumerated() {
            out[2 * index] = digits[Int(byte >> 4)]
            out[2 * index + 1] = digits[Int(byte & 0x0F)]
        }
        return out
    }

    // MARK: Lines

    /// `byte` as an upper-case hexadecimal digit, or nil when it is none.
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39, 0x41...0x46: return byte
        case 0x61...0x66: return byte - 0x20
        default: return nil
        }
    }

    /// Reads the line `HEX:COUNT` (CR LF or LF, or the end of the bytes) at the start of `line`:
    /// the hexadecimal digits (compared with `key`: -1, 0, 1 as the line's sorts before, equal or
    /// after), the count, and the line's length with its end; nil when it is not such a line with
    /// exactly `key.count` digits, or its count has more than 19 digits or does not fit in an
    /// `Int` (such a count is no real list's: the line is refused as malformed, not saturated).
    static func readLine(_ line: UnsafeRawBufferPointer, comparingWith key: [UInt8], atEnd: Bool)
        -> (order: Int, count: Int, length: Int)? {
        guard line.count > key.count, line[key.count] == UInt8(ascii: ":") else { return nil }
        var order = 0
        for index in 0..<key.count {
            guard let digit = hexDigit(line[index]) else { return nil }
            if order == 0 && digit != key[index] { order = digit < key[index] ? -1 : 1 }
        }
        var count = 0, index = key.count + 1
        while index < line.count, (0x30...0x39).contains(line[index]) {
            guard index - key.count <= 19 else { return nil }
            let (tens, overflowTens) = count.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = tens.addingReportingOverflow(Int(line[index] - 0x30))
            guard !overflowTens && !overflowSum else { return nil }
            count = sum
            index += 1
        }
        guard index > key.count + 1 else { return nil }
        if index < line.count && line[index] == UInt8(ascii: "\r") { index += 1 }
        if index < line.count && line[index] == UInt8(ascii: "\n") { return (order, count, index + 1) }
        return index == line.count && atEnd ? (order, count, index) : nil
    }
}
