import SecureMemory
import VaultModel

// MARK: - ssh-rsa

/// Age's ssh-rsa stanza, as age (and the C2SP age spec's ssh section) writes it:
/// `-> ssh-rsa TAG`, where TAG is the unpadded base64 of the first 4 bytes of SHA-256 of the
/// key's SSH wire encoding, and the body is the RSA-OAEP encryption (SHA-256, MGF1-SHA-256,
/// label `age-encryption.org/v1/ssh-rsa`) of the 16-byte file key to the key.
///
/// This label serves age files only; vaultfile's own ssh-rsa keyslots use their own label that
/// binds the vault (docs/FORMAT.md §3.10).
enum SSHRSAStanza {
    static let type = "ssh-rsa"
    static let label = Array("age-encryption.org/v1/ssh-rsa".utf8)
    /// The shortest body any ssh-rsa stanza can have: the ciphertext of a 2,048-bit key (age's minimum).
    static let minimumBody = 256
    /// The longest: the ciphertext of a 16,384-bit key, OpenSSH's largest RSA key.
    static let maximumBody = 2_048

    /// The tag naming `key`: an identity skips stanzas of other keys without decrypting them.
    static func tag(_ key: SSHRSAPublicKey) -> String {
        String(decoding: AgeBase64.encodeUnpadded(SHA256.hash(key.wireBytes).prefix(4)), as: UTF8.self)
    }

    /// The stanza's rules, whoever it is for: exactly one argument, a tag of 4 bytes of canonical
    /// unpadded base64, and a body as long as some RSA key's ciphertext (2,048 to 16,384 bits).
    static func check(_ stanza: AgeStanza) throws(AgeFileError) {
        guard stanza.arguments.count == 1 else {
            throw .stanzaMalformed(kind: type, why: "it has \(stanza.arguments.count) arguments after its type, not 1")
        }
        guard let tag = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8Slice), tag.count == 4 else {
            throw .stanzaMalformed(kind: type, why: "its tag is not 4 bytes of canonical base64")
        }
        guard (minimumBody...maximumBody).contains(stanza.body.count) else {
            throw .stanzaMalformed(kind: type, why: "its body is \(stanza.body.count) bytes, not the ciphertext of a 2,048- to 16,384-bit RSA key")
        }
    }
}

extension SSHRSAPublicKey: AgeFileRecipient {
    /// `-> ssh-rsa TAG`, as age writes it for an `ssh-rsa AAAA…` recipient (fresh OAEP randomness every call).
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        guard fileKey.count == AgeCrypto.fileKeyLength, let body = try? oaepEncrypt(fileKey, label: SSHRSAStanza.label) else {
            throw .invalidRecipients("the ssh-rsa recipient \(fingerprint) is not a usable key")
        }
        return [AgeStanza(type: SSHRSAStanza.type, arguments: [SSHRSAStanza.tag(self)], body: body)]
    }
}

extension SSHRSAIdentity: AgeFileIdentity {
    /// Opens an `ssh-rsa` stanza whose tag names this key. A body of another length than this
    /// key's ciphertexts, or one that does not decrypt (OAEP fails), is not for this identity
    /// (nil), so nothing tells a wrong key from a damaged body; a stanza breaking the kind's rules,
    /// or one that decrypts to anything but a 16-byte file key, is refused.
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        guard stanza.kind == .sshRSA else { return nil }
        try SSHRSAStanza.check(stanza)
        guard stanza.arguments[0] == SSHRSAStanza.tag(publicKey), stanza.body.count == publicKey.modulusBytes,
              let fileKey = oaepDecrypt(stanza.body, label: SSHRSAStanza.label) else { return nil }
        guard fileKey.count == AgeCrypto.fileKeyLength else {
            throw .stanzaMalformed(kind: SSHRSAStanza.type, why: "its body decrypts to \(fileKey.count) bytes, not a 16-byte file key")
        }
        return fileKey
    }
}
