import Foundation
import KDF
import SecureMemory
import TestSupport
@testable import VaultFormat
@testable import VaultModel

/// Fast KDF settings for tests (below the creation floor on purpose).
let testKDF = KDFParameters.argon2id(.init(memoryKiB: 8, iterations: 1, parallelism: 1))
/// Limits that admit `testKDF` and the fixtures.
let testLimits = KDFLimits.defaults

func password(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

/// A vault with a few entries, one binary value and fields.
func sampleVault() throws -> Vault {
    var vault = Vault()
    try vault.setValue(Array("hunter2".utf8), for: "db/password", now: 1_700_000_000_000)
    try vault.setValue([0, 1, 2, 255, 254, 0, 10, 13], for: "binary/blob", now: 1_700_000_000_001)
    try vault.setField("username", value: Array("admin".utf8), for: "db/password", now: 1_700_000_000_002)
    try vault.setField("url", value: Array("https://db.example".utf8), for: "db/password", now: 1_700_000_000_003)
    try vault.setValue([], for: "empty", now: 1_700_000_000_004)
    return vault
}

/// Seals `vault` with `testKDF` under `pass` and returns the file bytes.
func sealedBytes(_ vault: Vault, pass: String = "pw") throws -> [UInt8] {
    try VaultCodec.create(vault, password: password(pass), kdf: testKDF).seal()
}

/// Opens `bytes` and returns the error it throws, or nil on success.
func openError(_ bytes: [UInt8], pass: String = "pw") -> Error? {
    do {
        _ = try VaultCodec.open(bytes, path: "test.vault", password: password(pass), limits: testLimits)
        return nil
    } catch {
        return error
    }
}

/// Recomputes the header checksum after a deliberate edit, so the edit reaches the MAC check.
func fixChecksum(_ bytes: inout [UInt8]) {
    let length = Int(bytes[10]) | Int(bytes[11]) << 8
    bytes.replaceSubrange(length - 32..<length, with: Checksum.blake2b256(bytes[0..<length - 32]))
}

/// Whether `needle` occurs anywhere in `haystack`.
func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
    }
    return false
}

// MARK: - Failure injection (`SystemCalls`)

/// Sets errno and returns -1, as a failing system call does.
func failing<T: BinaryInteger>(_ code: Int32) -> T {
    errno = code
    return -1
}

/// A thread-safe call counter for injected functions.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.lock(); defer { value += 1; lock.unlock() }; return value }
}
