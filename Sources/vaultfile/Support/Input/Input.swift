import SecureMemory
import VaultInterchange
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Reading values

/// Reads values from descriptors and files, binary-safe and through the value size limit.
///
/// A file named `-` is standard input, wherever a user names a file to read (`--value-file`,
/// import's file, `inject --in`, `batch --script`, `--password-file`); `./-` names a file called
/// `-`. Standard input is read at most once: a second reader would get nothing and store an empty
/// value, so it fails naming the first (`CLIError.standardInputTaken`).
enum Input {
    /// Reads until end of file; refuses more than the largest value a vault holds. `purpose`
    /// names what standard input is read for, should something else want it too.
    static func readAll(_ fd: Int32, what: String, purpose: String = "the input", limit: Int = VaultLimits.maxValueLength) throws -> [UInt8] {
        if fd == STDIN_FILENO { try claimStandardInput(for: purpose) }
        var bytes: [UInt8] = []
        // A regular file (a redirect, --value-file) says its size: it is read straight into one
        // buffer of that size (huge pages advised when large: a 100 MiB `receive` or `set` faults in
        // 50 pages, not 25,600), no chunk copied twice; what follows (nothing, unless the file grew)
        // goes through the loop below.
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            let position = lseek(fd, 0, SEEK_CUR)
            let left = Int(info.st_size) - Int(max(position, 0))
            if left > 0 && left <= limit { bytes = try readDirectly(fd, count: left, what: what) }
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        defer { wipe(&chunk) }
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError.inputFailed("reading \(what) failed: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= limit else {
                wipe(&bytes)
                throw CLIError.inputTooLarge(what: what, limit: limit)
            }
            if bytes.capacity < bytes.count + count {
                // Grow by hand so the old buffer can be wiped before it is freed.
                var larger = [UInt8]()
                larger.reserveCapacity(max(bytes.count * 2, bytes.count + count))
                larger.append(contentsOf: bytes)
                wipe(&bytes)
                bytes = larger
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Up to `count` bytes of `fd` read straight into a new array of that capacity (fewer at the
    /// end of the file); on a failed read the bytes read so far are wiped before the error.
    private static func readDirectly(_ fd: Int32, count: Int, what: String) throws -> [UInt8] {
        var failure: Int32?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            SecretMapping.adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            var filled = 0
            while filled < count {
                let got = Glibc.read(fd, buffer.baseAddress! + filled, count - filled)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    wipe(UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<filled]))
                    filled = 0
                    break
                }
                if got == 0 { break }
                filled += got
            }
            initialized = filled
        }
        if let failure { throw CLIError.inputFailed("reading \(what) failed: \(String(cString: strerror(failure)))") }
        return bytes
    }

    /// Reads a whole file; `-` is standard input.
    static func readFile(_ path: String) throws -> [UInt8] { try readFile(path, purpose: "the file '-'") }

    /// Reads a whole file; `-` is standard input, read for `purpose` (e.g. "the value").
    static func readFile(_ path: String, purpose: String, limit: Int = VaultLimits.maxValueLength) throws -> [UInt8] {
        if path == standardInputName { return try readAll(STDIN_FILENO, what: "standard input", purpose: purpose, limit: limit) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.io(operation: "opening", path: path, errno: errno) }
        defer { close(fd) }
        return try readAll(fd, what: path, limit: limit)
    }

    // MARK: An import's file, a window at a time

    /// The file an import reads (`-`: standard input): a regular file no larger than `limit` is
    /// left to be read a window at a time (`windows`; `bytes` then holds its first `head` bytes,
    /// enough to tell its format); anything else (standard input, a pipe, a file over the limit,
    /// which is refused as `readFile` refuses it) is read whole into `bytes`.
    static func importFile(_ path: String, head: Int,
                           limit: Int = VaultLimits.maxValueLength) throws -> (bytes: [UInt8], windows: ImportWindows?) {
        if path == standardInputName { return (try readAll(STDIN_FILENO, what: "standard input", purpose: "the file '-'", limit: limit), nil) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.io(operation: "opening", path: path, errno: errno) }
        let file = OpenFile(fd)
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) <= limit else {
            return (try readAll(fd, what: path, limit: limit), nil)
        }
        let windows = ImportWindows(byteCount: Int(info.st_size)) { offset, buffer in
            // `file` is kept open as long as the windows are read.
            try file.read(at: offset, into: buffer, what: path, limit: limit)
        }
        do {
            return (try windows.head(head), windows)
        } catch {
            throw windows.readError ?? error
        }
    }

    /// A descriptor closed when the last reference goes (an import's windows keep it).
    private final class OpenFile {
        let fd: Int32

        init(_ fd: Int32) { self.fd = fd }

        deinit { close(fd) }

        /// Up to `buffer.count` bytes at `offset` (`pread`), 0 at the end; refuses a file that has
        /// grown past `limit` as `readAll` refuses it.
        func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer, what: String, limit: Int) throws -> Int {
            while true {
                let got = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
                if got < 0 {
                    if errno == EINTR { continue }
                    throw CLIError.inputFailed("reading \(what) failed: \(String(cString: strerror(errno)))")
                }
                guard offset + got <= limit else { throw CLIError.inputTooLarge(what: what, limit: limit) }
                return got
            }
        }
    }

    // MARK: Standard input, read once

    /// The file name that means standard input.
    static let standardInputName = "-"

    /// What read standard input first, or nil. One thread reads input, before any other starts.
    nonisolated(unsafe) private static var standardInputReader: String?

    /// Notes that `reader` reads standard input; throws if something read it before.
    static func claimStandardInput(for reader: String) throws(CLIError) {
        if let first = standardInputReader { throw .standardInputTaken(reader: first, second: reader) }
        standardInputReader = reader
    }
}
