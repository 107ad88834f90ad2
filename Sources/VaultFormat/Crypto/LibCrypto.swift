import CLibCrypto

// MARK: - Starting libcrypto

/// OpenSSL's libcrypto as vaultfile uses it (bulk ChaCha20, KDBX's ciphers, RSA and SSH keys,
/// HMAC, PBKDF2's compressions): started without any configuration.
package enum LibCrypto {
    /// Starts libcrypto without openssl.cnf, `OPENSSL_CONF` or its error strings (the shim's
    /// comment says why). Called by `Hardening.apply` at start-up, before any libcrypto call; a
    /// later call changes nothing. Returns false if libcrypto could not start; its functions then fail,
    /// and every caller has its own failure path (BulkChaCha falls back to libsodium).
    @discardableResult
    package static func start() -> Bool {
        vaultfile_libcrypto_start() == 1
    }
}
