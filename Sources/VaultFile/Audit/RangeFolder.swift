#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The folder of range files

/// A folder of Pwned Passwords range files as the official downloader writes them: `00000.txt`
/// to `FFFFF.txt`, each the `SUFFIX:COUNT` lines (CR LF) of the hashes that start with its name.
/// A lookup reads the one range file of its hash's first 5 digits (tens of KiB) into a buffer
/// reused from lookup to lookup.
final class RangeFolder {
    let path: String
    private(set) var hash: BreachHash
    private var buffer: [UInt8] = []
    private(set) var reads = 0
    private(set) var bytesRead = 0

    /// The largest range file read: the real ones are under 100 KiB (SHA-1) and 80 KiB (NTLM).
    static let largestRangeFile = 4 << 20

    init(path: String) throws(BreachListError) {
        self.path = path
        hash = .sha1
        // The kind from the first range file's first line: 35 digits of suffix for SHA-1, 27 for NTLM.
        let length = try rangeFile("00000")
        guard let colon = buffer[..<length].firstIndex(of: UInt8(ascii: ":")) else {
            throw .notAList(path: fileName("00000"), why: "its first line is not SUFFIX:COUNT")
        }
        switch colon {
        case 35: hash = .sha1
        case 27: hash = .ntlm
        default: throw .notAList(path: fileName("00000"), why: "its first line's suffix has \(colon) digits, not 35 (SHA-1) or 27 (NTLM)")
        }
    }

    /// The path of the range file of `prefix`.
    private func fileName(_ prefix: String) -> String { path + (path.hasSuffix("/") ? "" : "/") + prefix + ".txt" }

    /// Reads the range file of `prefix` (upper-case name, else lower-case) into the buffer.
    ///
    /// Errors name the folder, never the file: its 5 digits are the first 5 of a hash looked up.
    /// Only a regular file is read: it is opened with O_NONBLOCK (a FIFO would block the open, or
    /// the first read, for ever) and O_NOFOLLOW (the downloader writes no symbolic links; the
    /// folder itself may be one), and anything else is refused.
    private func rangeFile(_ prefix: String) throws(BreachListError) -> Int {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW
        var fd = open(fileName(prefix), flags)
        if fd < 0 && errno == ENOENT { fd = open(fileName(prefix.lowercased()), flags) }
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw .rangeFileMissing(folder: path)
            case ELOOP, ENXIO, ENODEV: throw .rangeFileNotRegular(folder: path)
            case let code: throw .unreadable(path: path, operation: "opening a range file of", errno: code)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, operation: "reading the status of a range file of", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .rangeFileNotRegular(folder: path) }
        let size = Int(info.st_size)
        guard size <= Self.largestRangeFile else { throw .rangeFileTooLarge(folder: path, limit: Self.largestRangeFile) }
        if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
        var filled = 0
        while filled < size {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, size - filled, off_t(filled)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, operation: "reading a range file of", errno: errno)
            }
            if got == 0 { break }
            filled += got
        }
        reads += 1
        bytesRead += filled
        return filled
    }

    /// The count on the line of `key`'s suffix in the range file of its first 5 digits, or 0.
    func occurrences(of key: [UInt8]) throws(BreachListError) -> Int {
        let prefix = String(decoding: key.prefix(5), as: UTF8.self)
        var suffix = Array(key.dropFirst(5))
        defer { wipe(&suffix) }
        let length = try rangeFile(prefix)
        // `withUnsafeBytes` rethrows untyped errors: the offset of a bad line is carried out of it.
        let (count, badLine) = buffer.withUnsafeBytes { whole -> (Int, Int?) in
            let bytes = UnsafeRawBufferPointer(rebasing: whole[..<length])
            var offset = 0
            while offset < bytes.count {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
                guard let line = PwnedPasswords.readLine(rest, comparingWith: suffix, atEnd: true) else { return (0, offset) }
                if line.order == 0 { return (line.count, nil) }
                offset += line.length
            }
            return (0, nil)
        }
        if badLine != nil { throw .malformedLine(path: path, inRangeFolder: true) }
        return count
    }
}
