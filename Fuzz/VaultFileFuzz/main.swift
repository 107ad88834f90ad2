import KDF
import SecureMemory
import VaultFile

// MARK: - libFuzzer entry point

/// The password of the damaged-vault corpus, so seeds from Fixtures/damaged open and
/// mutations reach the payload and content parsers.
private let password = SecureBytes(copying: Array("damaged-corpus".utf8))

/// Tiny caps: a mutated header may ask for any KDF cost, and the fuzzer must stay fast.
private let limits = KDFLimits(maxMemoryBytes: 64 << 10, maxArgon2WorkKiB: 256, maxPBKDF2Iterations: 1_000)

/// Properties checked on every input:
/// 1. parsing never crashes; a header that parses re-serialises to exactly the bytes it came from;
/// 2. opening never crashes (it may throw);
/// 3. content that decodes re-encodes to exactly the same bytes (one encoding per vault).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let (header, length) = try? VaultHeader.parse(bytes, path: "fuzz") {
        let encoded = header.encoded()
        precondition(encoded.count == length && encoded[...] == bytes[0..<length], "header round trip changed the bytes")
    }
    _ = try? VaultCodec.open(bytes, path: "fuzz", password: password, limits: limits)
    if let vault = try? Vault(decodingContent: bytes) {
        precondition((try? vault.encodedContent()) == bytes, "content round trip changed the bytes")
    }
    return 0
}
