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
    /// (RFC 8332). `.rsaSHA1` is made only because the caller named it.
    public func sign(_ data: [UInt8], algorithm: SSHSignatureAlgorithm) throws(SSHKeyError) -> [UInt8] {
        guard algorithm.keyType == type else {
            throw .signingRefused("a \(type.rawValue) key does not make \(algorithm.rawValue) signatures")
        }
        var blob: [UInt8] = []
        appendString(&blob, Array(algorithm.rawValue.utf8))
        switch secret {
        case .ed25519(let secretKey):
            appendString(&blob, Ed25519Signing.sign(data, secretKey: secretKey))
        case .ecdsa(let handle):
            guard let (r, s) = handle.sign(data, curve: type.curve!) else { throw .cryptoFailure("an ECDSA signature") }
            var inner: [UInt8] = []
            appendMPInt(&inner, r)
            appendMPInt(&inner, s)
            appendString(&blob, inner)
        case .rsa(let handle):
            guard let signature = handle.pkcs1Sign(data, digest: algorithm.rsaDigest!) else { throw .cryptoFailure("an RSA signature") }
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
    /// zeros as OpenSSH accepts). For tests, and the agent's check of a host key's signature over
    /// a session id (session-bind@openssh.com).
    public func verifies(signature: [UInt8], of data: [UInt8], allowSHA1: Bool = false) -> Bool {
        var reader = SSHReader(signature[...])
        guard let name = reader.string(), let algorithm = SSHSignatureAlgorithm(rawValue: String(decoding: name, as: UTF8.self)),
              algorithm.keyType == type, algorithm != .rsaSHA1 || allowSHA1, let body = reader.string(), reader.isAtEnd else { return false }
        var keyReader = SSHReader(wireBytes[...])
        _ = keyReader.string()
        switch type {
        case .ed25519:
            return Ed25519Signing.verifies(Array(body), message: data, publicKey: Array(keyReader.string() ?? []))
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let curve = type.curve!
            _ = keyReader.string()
            var numbers = SSHReader(body)
            guard let point = keyReader.string(), let r = numbers.mpint(), let s = numbers.mpint(), numbers.isAtEnd,
                  r.count <= curve.scalarLength, s.count <= curve.scalarLength,
                  let handle = ECKeyHandle.make(curve: curve, point: Array(point), scalar: nil) else { return false }
            return handle.verifies(r: r, s: s, message: data, curve: curve)
        case .rsa:
            guard let rsa = try? SSHRSAPublicKey(wire: wireBytes), body.count <= rsa.modulusBytes else { return false }
            let padded = [UInt8](repeating: 0, count: rsa.modulusBytes - body.count) + body
            return rsa.handle.pkcs1Verifies(padded, message: data, digest: algorithm.rsaDigest!)
        }
    }
}
