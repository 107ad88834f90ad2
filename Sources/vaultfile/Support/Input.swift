import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Reading values

/// Reads values from descriptors and files, binary-safe and through the value size limit.
enum Input {
    /// Reads until end of file; refuses more than the largest value a vault holds.
    static func readAll(_ fd: Int32, what: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        // A regular file (a redirect, --value-file) says its size: one buffer of that size, no growing copies.
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            let position = lseek(fd, 0, SEEK_CUR)
            let left = Int(info.st_size) - Int(max(position, 0))
            if left > 0 && left <= VaultLimits.maxValueLength { bytes.reserveCapacity(left + 1) }
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
            guard bytes.count + count <= VaultLimits.maxValueLength else {
                wipe(&bytes)
                throw CLIError.inputTooLarge(what: what, limit: VaultLimits.maxValueLength)
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

    /// Reads a whole file.
    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError.io(operation: "opening", path: path, errno: errno) }
        defer { close(fd) }
        return try readAll(fd, what: path)
    }
}
