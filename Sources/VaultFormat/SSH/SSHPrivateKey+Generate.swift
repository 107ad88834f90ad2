import SecureMemory

// MARK: - Making keys inside the vault

extension SSHPrivateKey {
    /// RSA's default size, as ssh-keygen's (3,072 bits).
    public static let defaultRSABits = 3_072

    /// A new key of `type` with `comment`: Ed25519 from 32 random bytes (libsodium), ECDSA and
    /// RSA from libcrypto's generator (RSA: `rsaBits`, 2,048 to 8,192, e = 65,537). Refuses
    /// (`.invalidRequest`) an RSA size outside the bounds and a comment `SSHKeyFile.read` would
    /// refuse. The new key is checked as a read key is (`SSHPublicKey(wire:)`).
    public static func generate(_ type: SSHKeyType, rsaBits: Int = defaultRSABits, comment: String) throws(SSHKeyError) -> SSHPrivateKey {
        let checked = try checkedComment(Array(comment.utf8)) { SSHKeyError.invalidRequest($0) }
        switch type {
        case .ed25519:
            var seed = randomBytes(count: 32)
            defer { wipe(&seed) }
            guard let pair = seed.withUnsafeBytes({ Ed25519Signing.keyPair(seed: $0) }) else { throw .cryptoFailure("making an Ed25519 key") }
            var wire: [UInt8] = []
            appendString(&wire, Array(type.rawValue.utf8))
            appendString(&wire, pair.publicKey)
            return SSHPrivateKey(publicKey: try SSHPublicKey(wire: wire), comment: checked, secret: .ed25519(pair.secretKey))
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let curve = type.curve!
            // The new key leaves libcrypto at once (freed, its scalar cleared) for guarded memory.
            guard let parts = ECKeyHandle.generate(curve: curve).flatMap({ ECDSAPrivateParts(handle: $0, curve: curve) }) else {
                throw .cryptoFailure("making an ECDSA key")
            }
            var wire: [UInt8] = []
            appendString(&wire, Array(type.rawValue.utf8))
            appendString(&wire, Array(curve.sshName.utf8))
            appendString(&wire, parts.point)
            return SSHPrivateKey(publicKey: try SSHPublicKey(wire: wire), comment: checked, secret: .ecdsa(parts))
        case .rsa:
            guard (SSHRSAPublicKey.minimumBits...SSHRSAPublicKey.maximumBits).contains(rsaBits) else {
                throw .invalidRequest("an RSA key of \(grouped(rsaBits)) bits is not made; vaultfile makes RSA keys of "
                                      + "\(grouped(SSHRSAPublicKey.minimumBits)) to \(grouped(SSHRSAPublicKey.maximumBits)) bits")
            }
            guard let numbers = RSAKeyHandle.generate(bits: rsaBits).flatMap(RSAPrivateNumbers.init(handle:)),
                  let rsa = try? SSHRSAPublicKey(modulus: numbers.n, exponent: SSHRSAPublicKey.exponent) else {
                throw .cryptoFailure("making an RSA key")
            }
            return SSHPrivateKey(publicKey: try SSHPublicKey(wire: rsa.wireBytes), comment: checked, secret: .rsa(numbers))
        }
    }
}
