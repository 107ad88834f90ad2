import CLibCrypto

// MARK: - PBKDF2-HMAC-SHA256

/// PBKDF2 with HMAC-SHA256 (RFC 8018) through OpenSSL's libcrypto.
///
/// libcrypto uses the CPU's SHA extensions where present, about 1.5× faster
/// here than a loop over libsodium's portable HMAC-SHA256, and computes the
/// keyed inner and outer states once per password.
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
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
            throw .invalidParameters("password or salt too long")
        }
        let output = SecureBytes(count: outputLength)
        let status = output.withUnsafeMutableBytes { out in
            salt.withUnsafeBufferPointer { saltBuffer in
                withNonNullPointer(to: password) { passwordPointer in
                PKCS5_PBKDF2_HMAC(
                    passwordPointer, Int32(password.count),
                    saltBuffer.baseAddress, Int32(saltBuffer.count),
                    Int32(parameters.iterations), EVP_sha256(),
                    Int32(outputLength), out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 1 else { throw .derivationFailed("OpenSSL PBKDF2 failed") }
        return output
    }
}
