import Foundation

/// Unencrypted OpenSSH ed25519 private key files written in the test, as `ssh-keygen -t ed25519
/// -N ''` writes them (PROTOCOL.key), for tests that need many keys without running ssh-keygen for
/// each. The caller derives the public key from the seed (libsodium); this only lays out the bytes.
public enum OpenSSHKeyText {
    /// The private key file of `seed` (32 bytes) and its `publicKey` (32 bytes), and the
    /// `authorized_keys` line, both with `comment`.
    public static func ed25519(seed: [UInt8], publicKey: [UInt8], comment: String) -> (privateKey: [UInt8], publicLine: String) {
        let type = Array("ssh-ed25519".utf8)
        let publicBlob = string(type) + string(publicKey)
        var section = [0x5A, 0x17, 0xC0, 0xDE, 0x5A, 0x17, 0xC0, 0xDE] + string(type) + string(publicKey) + string(seed + publicKey)
            + string(Array(comment.utf8))
        var pad: UInt8 = 1
        while section.count % 8 != 0 { section.append(pad); pad += 1 }
        let blob = Array("openssh-key-v1".utf8) + [0] + string(Array("none".utf8)) + string(Array("none".utf8)) + string([])
            + [0, 0, 0, 1] + string(publicBlob) + string(section)
        let base64 = Data(blob).base64EncodedString()
        var lines = ["-----BEGIN OPENSSH PRIVATE KEY-----"]
        var rest = Substring(base64)
        while !rest.isEmpty { lines.append(String(rest.prefix(70))); rest = rest.dropFirst(70) }
        lines.append("-----END OPENSSH PRIVATE KEY-----")
        return (Array((lines.joined(separator: "\n") + "\n").utf8), "ssh-ed25519 \(Data(publicBlob).base64EncodedString()) \(comment)")
    }

    private static func string(_ bytes: [UInt8]) -> [UInt8] {
        let count = UInt32(bytes.count)
        return [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + bytes
    }
}
