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

/// Verifies a host key's signature over a session id (`session-bind@openssh.com`), as OpenSSH's
/// ssh-agent does: the host key may be any key ssh accepts from a server that the key model checks
/// (`SSHHostKey`: ssh-ed25519, ECDSA, ssh-rsa of 1,024 bits and up, and OpenSSH certificates of
/// those, whose CA signature must verify and whose certified key must have signed). Key size is
/// not the agent's policy here: the client already took the key; the binding only records it.
public enum SSHHostKeys {
    /// Whether `signature` (an SSH signature blob) is `hostKey`'s over `data` (ssh-rsa's SHA-1
    /// included, as a server may sign its key exchange with it).
    public static func verifies(hostKey: [UInt8], signature: [UInt8], data: [UInt8]) -> Bool {
        guard let key = try? SSHHostKey(wire: hostKey) else { return false }
        return key.verifies(signature: signature, of: data, allowSHA1: true)
    }

    /// The fingerprint of a host key blob (a certificate's is its key's, as `ssh-keygen -l` prints it).
    static func fingerprint(_ hostKey: [UInt8]) -> String? { (try? SSHHostKey(wire: hostKey))?.fingerprint }
}
