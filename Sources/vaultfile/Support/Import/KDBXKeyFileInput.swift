#if canImport(Glibc)
import Glibc
#endif
import SecureMemory
import VaultFormat
import VaultInterchange
import VaultModel

// MARK: - Reading a KeePass key file (--kdbx-keyfile, --new-keyfile)

/// Reads a KeePass key file: a regular file only (a named pipe or a device is refused before any
/// read, so that nothing blocks or streams forever). Up to 1 MiB it is read whole and recognised
/// (XML key file, 32 raw bytes, 64 hex digits, else hashed); above, it can only be a hashed key
/// file, so it is hashed as it is read, 1 MiB at a time, up to `maxHashedBytes`. `-` is standard
/// input, read whole up to 1 MiB.
enum KDBXKeyFileInput {
    /// The largest file read whole.
    static let maxWholeBytes = 1 << 20
    /// The largest key file hashed (KeePass hashes any file; 1 GiB takes a few seconds).
    static let maxHashedBytes = 1 << 30

    /// The key that the key file at `path` stands for. `refuseEmpty` (a new database's key file):
    /// an empty file is refused, its key (the SHA-256 of nothing) being known to everyone.
    static func key(_ path: String, refuseEmpty: Bool = false) throws -> SecureBytes {
        func checkNotEmpty(_ count: Int) throws {
            guard refuseEmpty, count == 0 else { return }
            throw CLIError.refused("the key file \(path) is empty: its key (the SHA-256 of nothing) is known to everyone, so it would protect nothing",
                                   hint: "make a key file of 32 random bytes: 'head -c 32 /dev/urandom > FILE' (KeePassXC and KeePass open it)")
        }
        if path == Input.standardInputName {
            var bytes = try Input.readFile(path, purpose: "the key file", limit: maxWholeBytes)
            defer { wipe(&bytes) }
            try checkNotEmpty(bytes.count)
            return try KDBXKeyFile.key(of: bytes, file: "standard input")
        }
        // O_NONBLOCK: opening a named pipe does not wait for a writer; it is refused just below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw CLIError.io(operation: "opening", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CLIError.io(operation: "reading", path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw VaultError.notARegularFile(path: path, kind: .init(mode: info.st_mode)) }
        let size = Int(info.st_size)
        if size <= maxWholeBytes {
            var bytes = try Input.readAll(fd, what: path, purpose: "the key file", limit: maxWholeBytes)
            defer { wipe(&bytes) }
            try checkNotEmpty(bytes.count)
            return try KDBXKeyFile.key(of: bytes, file: path)
        }
        guard size <= maxHashedBytes else {
            throw VaultError.limitExceeded("the key file \(path) is \(size) bytes; vaultfile hashes key files of at most 1 GiB "
                                           + "(KeePass hashes any file: a key file is usually 32 bytes to a few KiB)")
        }
        var hasher = KDBXCrypto.SHA256Stream()
        var buffer = [UInt8](repeating: 0, count: maxWholeBytes)
        defer { wipe(&buffer) }
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError.io(operation: "reading", path: path, errno: errno)
            }
            if count == 0 { break }
            total += count
            guard total <= maxHashedBytes else {
                throw VaultError.limitExceeded("the key file \(path) grew past 1 GiB while it was read; vaultfile hashes key files of at most 1 GiB")
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        var digest = hasher.finish()
        defer { wipe(&digest) }
        return SecureBytes(copying: digest)
    }
}
