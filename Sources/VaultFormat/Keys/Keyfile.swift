import CSodium
import SecureMemory
#if canImport(Glibc)
import Glibc
#endif
import VaultModel

// MARK: - Keyfiles

/// A keyfile: any regular file of 32 bytes to 64 MiB whose whole content is the secret.
///
/// A keyfile slot's secret is BLAKE2b-256 of the file, keyed by the slot's 32-byte salt, read
/// in 64 KiB pieces (never whole). No slow KDF runs: a keyfile is as strong as it is
/// unpredictable, and a KDF cannot make a guessable file strong (docs/FORMAT.md §3.6). So a file
/// that `vaultfile keygen --keyfile` did not make needs `--any-keyfile` to become a slot; keygen's
/// files are recognised by their last 8 bytes (`generatedMark`).
public enum Keyfile {
    /// The smallest keyfile, in bytes.
    public static let minLength = 32
    /// The largest keyfile, in bytes (64 MiB).
    public static let maxLength = 64 << 20
    /// The size of the files `keygen --keyfile` makes.
    public static let generatedLength = 64
    /// The salt (BLAKE2b key) length of keyfile slots.
    public static let saltLength = 32

    /// 64 bytes for `keygen --keyfile`: 56 random bytes (448 bits), then their 8-byte mark.
    public static func generate() -> [UInt8] {
        let random = randomBytes(count: generatedLength - 8)
        return random + mark(random)
    }

    /// Checks that `path` can be read as a keyfile (a regular file of 32 bytes to 64 MiB) without
    /// reading it: what an unlock source is checked for when it is given, before any slot is tried.
    public static func check(path: String) throws(VaultError) {
        _ = try KeyfileHandle(path: path)
    }

    /// Whether `path` is a file `keygen --keyfile` made: 64 bytes whose last 8 are the mark of the first 56.
    public static func isGenerated(path: String) throws(VaultError) -> Bool {
        let file = try KeyfileHandle(path: path)
        guard file.size == generatedLength else { return false }
        var bytes = [UInt8](repeating: 0, count: generatedLength)
        defer { wipe(&bytes) }
        var count = 0, failure: VaultError? = nil
        bytes.withUnsafeMutableBytes { buffer in
            do throws(VaultError) { count = try file.read(into: buffer) } catch { failure = error }
        }
        if let failure { throw failure }
        guard count == generatedLength else { return false }
        return constantTimeEqual(mark(Array(bytes.prefix(56))), bytes.suffix(8))
    }

    /// The X25519 secret of a keyfile slot with `salt`: `crypto_kdf_derive_from_key` (context
    /// `vfkeyfil`, id 1) of BLAKE2b-256(key = salt, message = the whole file).
    public static func slotSecret(path: String, salt: [UInt8]) throws(VaultError) -> SecureBytes {
        precondition(salt.count == saltLength, "keyfile salts are 32 bytes")
        let file = try KeyfileHandle(path: path)
        // crypto_generichash_state is 64-byte aligned, which Swift imports as an opaque type: the
        // state lives in guarded memory (it holds the key), at a 64-byte boundary inside it.
        let stateMemory = SecureBytes(count: crypto_generichash_statebytes() + 64)
        let state = stateMemory.withUnsafeMutableBytes { raw in
            OpaquePointer(raw.baseAddress!.advanced(by: (64 - Int(bitPattern: raw.baseAddress!) % 64) % 64))
        }
        _ = crypto_generichash_init(state, salt, salt.count, 32)
        let chunk = SecureBytes(count: 64 << 10)
        var total = 0
        while true {
            let count = try chunk.withUnsafeMutableBytes { (buffer) throws(VaultError) in try file.read(into: buffer) }
            if count == 0 { break }
            total += count
            guard total <= maxLength else { throw .changedOnDisk(path: path) }
            chunk.withUnsafeBytes { _ = crypto_generichash_update(state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(count)) }
        }
        guard total == file.size else { throw .changedOnDisk(path: path) }
        let digest = SecureBytes(count: 32)
        digest.withUnsafeMutableBytes { _ = crypto_generichash_final(state, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32) }
        return Subkey.derive(from: digest, SlotSecrets.keyfileContext)
    }

    private static func mark(_ random: [UInt8]) -> [UInt8] {
        let label = Array("vaultfile keyfile mark v1".utf8)
        var output = [UInt8](repeating: 0, count: 16)
        let input = label + random
        _ = crypto_generichash(&output, 16, input, UInt64(input.count), nil, 0)
        return Array(output.prefix(8))
    }
}

/// An open keyfile: a regular file of `Keyfile.minLength` to `maxLength` bytes, read from the start.
private final class KeyfileHandle {
    let path: String
    let size: Int
    private let fd: Int32

    /// Opens without blocking (a named pipe is refused, not waited on) and checks type and size first.
    init(path: String) throws(VaultError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .io(operation: "opening the keyfile", path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .io(operation: "reading the status of the keyfile", path: path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .malformedInput("the keyfile \(path) is \(VaultError.FileKind(mode: info.st_mode).rawValue); a keyfile is a regular file")
        }
        guard info.st_size >= Keyfile.minLength else {
            close(fd)
            throw .malformedInput("the keyfile \(path) is \(info.st_size) bytes; a keyfile holds at least \(Keyfile.minLength)")
        }
        guard info.st_size <= Keyfile.maxLength else {
            close(fd)
            throw .limitExceeded("the keyfile \(path) is \(info.st_size) bytes; a keyfile holds at most 64 MiB")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        self.fd = fd
        self.path = path
        self.size = Int(info.st_size)
    }

    deinit { close(fd) }

    /// Reads up to `buffer.count` bytes; 0 at the end. Retries on EINTR.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(VaultError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = Glibc.read(fd, buffer.baseAddress! + filled, buffer.count - filled)
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "reading the keyfile", path: path, errno: errno)
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }
}
