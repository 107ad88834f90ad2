import SecureMemory

// MARK: - One entry point for both KDFs

extension KDFParameters {
    /// Derives a 32-byte key from `password` and `salt`, after checking the caps.
    ///
    /// The caps are checked first, before any memory is allocated, so that an
    /// untrusted header cannot make the process run out of memory or hang.
    public func deriveKey(
        password: SecureBytes,
        salt: [UInt8],
        limits: KDFLimits,
        outputLength: Int = 32
    ) throws(KDFError) -> SecureBytes {
        try validate()
        try check(against: limits)
        guard salt.count == KDFParameters.saltLength else { throw .invalidSaltLength(salt.count) }
        return try password.withUnsafeBytes { (bytes) throws(KDFError) -> SecureBytes in
            switch self {
            case .argon2id(let p):
                return try Argon2id.deriveKey(password: bytes, salt: salt, parameters: p, outputLength: outputLength)
            case .pbkdf2SHA256(let p):
                return try PBKDF2.deriveKey(password: bytes, salt: salt, parameters: p, outputLength: outputLength)
            }
        }
    }
}
