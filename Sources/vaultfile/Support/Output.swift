#if canImport(Glibc)
import Glibc
#endif

// MARK: - Standard streams

/// Writing to stdout and stderr with `write(2)`: binary-safe, no buffering
/// surprises, short writes and EINTR handled (Glibc's `stdout` global is not
/// usable in Swift 6 mode).
enum Stream {
    /// Writes every byte of `bytes` to `fd`; returns false if the descriptor failed.
    @discardableResult
    static func write(_ bytes: [UInt8], to fd: Int32) -> Bool { bytes.withUnsafeBytes { write($0, to: fd) } }

    /// Writes every byte of a raw buffer to `fd`; returns false if the descriptor failed.
    @discardableResult
    static func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            written += count
        }
        return true
    }

    /// Whether `fd` is a terminal.
    static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }
}

/// Data output: exact bytes on standard output.
enum StandardOutput {
    /// Writes `bytes` exactly; throws when stdout is closed or full.
    static func write(_ bytes: [UInt8]) throws(CLIError) {
        guard Stream.write(bytes, to: STDOUT_FILENO) else { throw .outputFailed(errno: errno) }
    }

    /// Writes a raw buffer exactly; throws when stdout is closed or full.
    static func write(_ bytes: UnsafeRawBufferPointer) throws(CLIError) {
        guard Stream.write(bytes, to: STDOUT_FILENO) else { throw .outputFailed(errno: errno) }
    }

    /// Writes `text` followed by a newline.
    static func line(_ text: String) throws(CLIError) { try write(Array((text + "\n").utf8)) }

    /// Whether stdout is a terminal (then a missing final newline is added to values).
    static var isTerminal: Bool { Stream.isTerminal(STDOUT_FILENO) }
}

/// Human messages: everything that is not data goes to standard error.
enum Messages {
    /// `vaultfile: error: …` and, when present, `vaultfile: hint: …`.
    static func error(_ text: String, hint: String? = nil) {
        Stream.write(Array("vaultfile: error: \(text)\n".utf8), to: STDERR_FILENO)
        if let hint { Stream.write(Array("vaultfile: hint: \(hint)\n".utf8), to: STDERR_FILENO) }
    }

    /// `vaultfile: warning: …`.
    static func warning(_ text: String) {
        Stream.write(Array("vaultfile: warning: \(text)\n".utf8), to: STDERR_FILENO)
    }

    /// A plain informational line on stderr.
    static func info(_ text: String) {
        Stream.write(Array("\(text)\n".utf8), to: STDERR_FILENO)
    }

    /// A progress note shown only when stderr is a terminal ("unlocking (Argon2id …)…").
    static func progress(_ text: String) {
        guard Stream.isTerminal(STDERR_FILENO) else { return }
        Stream.write(Array("\(text)\n".utf8), to: STDERR_FILENO)
    }
}
