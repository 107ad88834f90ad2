import CLibCrypto
import CSodium
import SecureMemory

// MARK: - PBKDF2-HMAC-SHA256

/// PBKDF2 with HMAC-SHA256 (RFC 8018) over OpenSSL's SHA-256 compression function.
///
/// The keyed inner and outer HMAC states are computed once per password; each
/// of the following iterations is then exactly two SHA-256 compressions on
/// one pre-padded block (`SHA256_Transform`, OpenSSL's SIMD or SHA-NI code).
/// OpenSSL 3's own `PKCS5_PBKDF2_HMAC` goes through its provider layer for
/// every HMAC, which costs more than the hashing itself: this loop is several
/// times faster for the same output (docs/PERFORMANCE.md).
public enum PBKDF2 {
    /// Derives `outputLength` bytes into guarded memory.
    public static func deriveKey(
        password: UnsafeRawBufferPointer,
        salt: [UInt8],
        parameters: PBKDF2Parameters,
        outputLength: Int = 32
    ) throws(KDFError) -> SecureBytes {
        try parameters.validate()
        guard (1...4096).contains(outputLength) else {
            throw .invalidParameters("output length \(outputLength) is outside 1…4096")
        }
        let output = SecureBytes(count: outputLength)
        output.withUnsafeMutableBytes { out in
            derive(password: password, salt: salt, iterations: Int(parameters.iterations), into: out)
        }
        return output
    }

    // MARK: The iteration loop

    private static let blockLength = 64
    private static let digestLength = 32

    private static func derive(password: UnsafeRawBufferPointer, salt: [UInt8], iterations: Int, into output: UnsafeMutableRawBufferPointer) {
        // Every buffer below holds key material: one guarded allocation, wiped when released.
        // [0, 64): the HMAC key block; [64, 128): a padded message block; [128, 160): the running XOR.
        let scratch = SecureBytes(count: 2 * blockLength + digestLength)
        var inner = SHA256_CTX(), outer = SHA256_CTX(), state = SHA256_CTX()
        defer {
            sodium_memzero(&inner, MemoryLayout<SHA256_CTX>.size)
            sodium_memzero(&outer, MemoryLayout<SHA256_CTX>.size)
            sodium_memzero(&state, MemoryLayout<SHA256_CTX>.size)
        }
        scratch.withUnsafeMutableBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let key = bytes.baseAddress!, block = key + blockLength, sum = block + blockLength
            // The HMAC key: the password, or its digest when longer than a block (RFC 2104).
            if password.count > blockLength {
                _ = SHA256(password.baseAddress!.assumingMemoryBound(to: UInt8.self), password.count, key)
            } else if password.count > 0 {
                UnsafeMutableRawPointer(key).copyMemory(from: password.baseAddress!, byteCount: password.count)
            }
            for index in 0..<blockLength { block[index] = key[index] ^ 0x36 }
            SHA256_Init(&inner)
            SHA256_Update(&inner, block, blockLength)
            for index in 0..<blockLength { block[index] = key[index] ^ 0x5C }
            SHA256_Init(&outer)
            SHA256_Update(&outer, block, blockLength)

            var produced = 0, blockNumber: UInt32 = 1
            while produced < output.count {
                // U1 = HMAC(password, salt ‖ INT(blockNumber)), through the ordinary padding.
                state = inner
                _ = salt.withUnsafeBytes { SHA256_Update(&state, $0.baseAddress, $0.count) }
                var counter = blockNumber.bigEndian
                SHA256_Update(&state, &counter, 4)
                SHA256_Final(block, &state)
                state = outer
                SHA256_Update(&state, block, digestLength)
                SHA256_Final(block, &state)
                // Uj = HMAC(password, Uj-1): the 32-byte message fits one block with its padding
                // (0x80, zeros, and the bit length of key block + message: (64 + 32) × 8 = 768).
                for index in digestLength..<blockLength { block[index] = 0 }
                block[digestLength] = 0x80
                block[blockLength - 2] = 0x03
                UnsafeMutableRawPointer(sum).copyMemory(from: block, byteCount: digestLength)
                vaultfile_pbkdf2_iterate(&inner, &outer, block, sum, UInt(max(iterations, 1)))
                let count = min(digestLength, output.count - produced)
                (output.baseAddress! + produced).copyMemory(from: sum, byteCount: count)
                produced += count
                blockNumber += 1
            }
        }
    }
}
