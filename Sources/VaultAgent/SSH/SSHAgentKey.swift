import VaultFormat

// MARK: - The keys the agent serves, as the key model has them

/// What the ssh-agent server asks of a key of the key model (`SSHPrivateKey`, VaultFormat/SSH):
/// its public blob, fingerprint and type, and a signature under the SIGN_REQUEST's flags.
extension SSHPrivateKey {
    /// The public key's wire blob (what REQUEST_IDENTITIES lists and SIGN_REQUEST names).
    var publicBlob: [UInt8] { publicKey.wireBytes }

    /// The signature blob of `data`, or nil when the key refuses (unknown flags; SHA-1 for
    /// ssh-rsa unless `allowSHA1`).
    func agentSignature(of data: [UInt8], flags: UInt32, allowSHA1: Bool) -> [UInt8]? {
        try? sign(data, flags: flags, allowSHA1: allowSHA1)
    }
}

// MARK: - Host keys

/// Verifies a host key's signature over a session id (`session-bind@openssh.com`).
public enum SSHHostKeys {
    /// Whether `signature` (an SSH signature blob) is `hostKey`'s over `data`, for a host key of any
    /// type the key model reads (ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa: with
    /// rsa-sha2-256/512, or ssh-rsa's SHA-1 as the server signed its key exchange).
    public static func verifies(hostKey: [UInt8], signature: [UInt8], data: [UInt8]) -> Bool {
        guard let key = try? SSHPublicKey(wire: hostKey) else { return false }
        return key.verifies(signature: signature, of: data, allowSHA1: true)
    }

    /// The fingerprint of a host key blob, when it is a key the model reads.
    static func fingerprint(_ hostKey: [UInt8]) -> String? { (try? SSHPublicKey(wire: hostKey))?.fingerprint }
}
