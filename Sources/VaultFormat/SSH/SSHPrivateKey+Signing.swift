import SecureMemory

// MARK: - Signing (for the agent)

extension SSHPrivateKey {
    /// The ssh signature blob (`string algorithm ‖ string signature`, RFC 4253 §6.6) of `data`
    /// under an agent's SIGN_REQUEST `flags` (`SSHAgentSignFlags.algorithm`: RSA picks SHA2-256 or
    /// SHA2-512 by flag, SHA-1 only with `allowSHA1`; unknown flags refused).
    public func sign(_ data: [UInt8], flags: UInt32, allowSHA1: Bool = false) throws(SSHKeyError) -> [UInt8] {
        try sign(data, algorithm: SSHAgentSignFlags.algorithm(for: type, flags: flags, allowSHA1: allowSHA1))
    }

    /// The ssh signature blob of `data` by `algorithm`, which must be one of this key's type:
    /// Ed25519 with libsodium (deterministic, RFC 8032); ECDSA with libcrypto, its nonce hedged
    /// (derived from the private key, the digest and fresh random bytes, so neither a weak random
    /// source nor a fault alone repeats a nonce), `mpint r ‖ mpint s` as RFC 5656 §3.1.2 encodes
    /// it; RSA PKCS#1 v1.5 with libcrypto, blinded, the signature exactly the modulus's length
    /// (RFC 8332). `.rsaSHA1` is made only because the caller named it. An ECDSA or RSA key is
    /// built in libcrypto from its guarded numbers for this one signature and freed right after.
    public func sign(_ data: [UInt8], algorithm: SSHSignatureAlgorithm) throws(SSHKeyError) -> [UInt8] {
        guard algorithm.keyType == type else {
            throw .signingRefused("a \(type.rawValue) key does not make \(algorithm.rawValue) signatures")
        }
        var blob: [UInt8] = []
        appendString(&blob, Array(algorithm.rawValue.utf8))
        switch secret {
        case .ed25519(let secretKey):
            appendString(&blob, Ed25519Signing.sign(data, secretKey: secretKey))
        case .ecdsa(let parts):
            let curve = type.curve!
            guard let (r, s) = parts.withHandle(curve: curve, { $0.sign(data, curve: curve) }) else { throw .cryptoFailure("an ECDSA signature") }
            var inner: [UInt8] = []
            appendMPInt(&inner, r)
            appendMPInt(&inner, s)
            appendString(&blob, inner)
        case .rsa(let numbers):
            guard let signature = numbers.withHandle({ $0.pkcs1Sign(data, digest: algorithm.rsaDigest!) }) else { throw .cryptoFailure("an RSA signature") }
            appendString(&blob, signature)
        }
        return blob
    }
}

// MARK: - Verifying

extension SSHPublicKey {
    /// Whether `signature` (an ssh signature blob) is this key's valid signature of `data`: its
    /// algorithm one of this key's type (RSA: rsa-sha2-256, rsa-sha2-512, or ssh-rsa only when
    /// `allowSHA1`), its encoding strict (nothing trailing; ECDSA mpints canonical and under the
    /// order's length; an RSA signature of the modulus's length, or shorter and left-padded with
    /// zeros as OpenSSH accepts). Checked by `SSHHostKey`, which the agent's session-bind check
    /// uses directly.
    public func verifies(signature: [UInt8], of data: [UInt8], allowSHA1: Bool = false) -> Bool {
        // One implementation of the checks: a kept key is a host key too (with narrower bounds).
        guard let key = try? SSHHostKey(wire: wireBytes) else { return false }
        return key.verifies(signature: signature, of: data, allowSHA1: allowSHA1)
    }
}
