import CArgon2
import CSodium
import SecureMemory

// MARK: - Argon2id

/// Argon2id (RFC 9106, version 1.3) through two implementations that give identical output.
///
/// With one lane and no secret or associated data, libsodium's
/// `crypto_pwhash_argon2id` is used: its SIMD code is much faster than
/// Debian's libargon2, which is the portable reference build. Everything
/// else — real parallelism (p lanes on p threads), secret and associated
/// data — goes through libargon2's `argon2_ctx`.
public enum Argon2id {
    /// Which implementation computes the hash.
    public enum Backend: Sendable {
        /// libsodium when it can compute the same result, libargon2 otherwise.
        case automatic
        /// Always libargon2 (`argon2_ctx`).
        case libargon2
        /// Always libsodium (`crypto_pwhash`); needs p = 1, a 16-byte salt, no secret, no associated data.
        case libsodium
    }

    /// Derives `outputLength` bytes into guarded memory.
    ///
    /// Validate `parameters` and check them against the caps before calling
    /// this with values from an untrusted file.
    public static func deriveKey(
        password: UnsafeRawBufferPointer,
        salt: [UInt8],
        parameters: Argon2idParameters,
        secret: [UInt8] = [],
        associatedData: [UInt8] = [],
        outputLength: Int = 32,
        backend: Backend = .automatic
    ) throws(KDFError) -> SecureBytes {
        try parameters.validate()
        guard salt.count >= 8 else { throw .invalidSaltLength(salt.count) }
        guard (4...1024).contains(outputLength) else {
            throw .invalidParameters("output length \(outputLength) is outside 4…1024")
        }
        let sodiumCanDoIt = parameters.parallelism == 1 && secret.isEmpty && associatedData.isEmpty
            && salt.count == Int(crypto_pwhash_saltbytes()) && outputLength >= Int(crypto_pwhash_bytes_min())
        switch backend {
        case .libsodium:
            guard sodiumCanDoIt else {
                throw .invalidParameters("libsodium's Argon2id needs p = 1, a 16-byte salt and no secret or associated data")
            }
            return try viaLibsodium(password: password, salt: salt, parameters: parameters, outputLength: outputLength)
        case .automatic where sodiumCanDoIt:
            return try viaLibsodium(password: password, salt: salt, parameters: parameters, outputLength: outputLength)
        case .automatic, .libargon2:
            return try viaLibargon2(password: password, salt: salt, parameters: parameters, secret: secret,
                                    associatedData: associatedData, outputLength: outputLength)
        }
    }

    // MARK: Implementations

    private static func viaLibsodium(
        password: UnsafeRawBufferPointer, salt: [UInt8], parameters: Argon2idParameters, outputLength: Int
    ) throws(KDFError) -> SecureBytes {
        ensureSodiumInitialised()
        let output = SecureBytes(count: outputLength)
        let status = output.withUnsafeMutableBytes { out in
            salt.withUnsafeBytes { saltBytes in
                withNonNullPointer(to: password) { passwordPointer in
                crypto_pwhash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(outputLength),
                    passwordPointer, UInt64(password.count),
                    saltBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    UInt64(parameters.iterations), Int(parameters.memoryKiB) * 1024,
                    crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard status == 0 else { throw .derivationFailed("libsodium Argon2id failed (out of memory?)") }
        return output
    }

    /// libargon2's `argon2_ctx`: Argon2id (or, for another tool's file, `type` Argon2d) of `version`.
    static func viaLibargon2(
        password: UnsafeRawBufferPointer, salt: [UInt8], parameters: Argon2idParameters,
        secret: [UInt8], associatedData: [UInt8], outputLength: Int,
        type: argon2_type = Argon2_id, version: UInt32 = UInt32(ARGON2_VERSION_13.rawValue), threads: UInt32? = nil
    ) throws(KDFError) -> SecureBytes {
        let output = SecureBytes(count: outputLength)
        // libargon2 reads but does not modify these; it wipes only when asked by flags (0 here).
        var saltCopy = salt, secretCopy = secret, adCopy = associatedData
        let status: Int32 = output.withUnsafeMutableBytes { out in
            saltCopy.withUnsafeMutableBufferPointer { saltBuffer in
                secretCopy.withUnsafeMutableBufferPointer { secretBuffer in
                    adCopy.withUnsafeMutableBufferPointer { adBuffer in
                        var context = argon2_context()
                        context.out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        context.outlen = UInt32(outputLength)
                        context.pwd = UnsafeMutablePointer(mutating: password.baseAddress?.assumingMemoryBound(to: UInt8.self))
                        context.pwdlen = UInt32(password.count)
                        context.salt = saltBuffer.baseAddress
                        context.saltlen = UInt32(saltBuffer.count)
                        context.secret = secretBuffer.count > 0 ? secretBuffer.baseAddress : nil
                        context.secretlen = UInt32(secretBuffer.count)
                        context.ad = adBuffer.count > 0 ? adBuffer.baseAddress : nil
                        context.adlen = UInt32(adBuffer.count)
                        context.t_cost = parameters.iterations
                        context.m_cost = parameters.memoryKiB
                        context.lanes = parameters.parallelism
                        context.threads = threads ?? parameters.parallelism
                        context.version = version
                        context.allocate_cbk = allocateWorkArea
                        context.free_cbk = freeWorkArea
                        context.flags = 0  // ARGON2_DEFAULT_FLAGS, a macro Swift does not import
                        return argon2_ctx(&context, type)
                    }
                }
            }
        }
        wipe(&secretCopy)
        guard status == ARGON2_OK.rawValue else {
            let message = String(cString: argon2_error_message(status))
            throw .derivationFailed("libargon2: \(message)")
        }
        return output
    }

    // MARK: Memory for libargon2

    /// libargon2's allocator: a `SecretMapping` (huge pages where the system allows, left out of
    /// core dumps). About a third of Argon2's time at 64 MiB was the kernel faulting in small pages;
    /// huge pages cut the faults from 16,594 to 633 (docs/PERFORMANCE.md, "What changed").
    /// A refused mapping is libargon2's allocation error, which `deriveKey` throws as
    /// `KDFError.derivationFailed`.
    private static let allocateWorkArea: allocate_fptr = { memory, length in
        guard let memory, let pointer = try? SecretMapping.map(byteCount: length) else {
            return ARGON2_MEMORY_ALLOCATION_ERROR.rawValue
        }
        memory.pointee = pointer.assumingMemoryBound(to: UInt8.self)
        return ARGON2_OK.rawValue
    }

    /// Unmaps what `allocateWorkArea` mapped; libargon2 has already zeroed it.
    private static let freeWorkArea: deallocate_fptr = { memory, length in
        if let memory { SecretMapping.unmap(memory, byteCount: length) }
    }
}
