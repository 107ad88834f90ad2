// MARK: - Fingerprints of any ssh public key

/// The fingerprint OpenSSH shows for a public key (`ssh-keygen -l`, `ssh-add -l`): `SHA256:` and
/// the unpadded Base64 of the SHA-256 of its wire blob, for keys of every type (the agent names
/// host keys and served keys with it).
public enum SSHFingerprint {
    /// `SHA256:…` of the wire blob `blob`.
    public static func sha256(_ blob: [UInt8]) -> String {
        "SHA256:" + base64Encode(SHA256.hash(blob), padded: false)
    }
}
