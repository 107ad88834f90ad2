#if canImport(Glibc)
import Glibc
#endif

// MARK: - Who started a process

/// The parent of a process, read from `/proc/PID/stat` (proc(5)): its fourth field, after the
/// command name in parentheses (which may itself hold spaces and parentheses: the last `)` ends it).
enum ProcessParent {
    /// The parent process id of `pid`, or nil when it cannot be read (the process is gone).
    static func of(_ pid: Int32) -> Int32? {
        guard pid > 0 else { return nil }
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        var count = 0
        // The line is well under 1 KiB up to the fields read here; a short read is retried.
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        let line = buffer.prefix(count)
        guard let close = line.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let parent = Int32(String(decoding: fields[1], as: UTF8.self)), parent > 0 else { return nil }
        return parent
    }
}
