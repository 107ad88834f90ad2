import Foundation
import SecureMemory
import TestSupport
@testable import VaultFormat

// MARK: - Keys of every type made by ssh-keygen, and SSHSIG signatures

/// One key shape `ssh-keygen` makes: type, size, passphrase and cipher.
struct KeygenShape: Sendable, CustomStringConvertible {
    var type: String
    var bits: Int?
    var passphrase = ""
    var cipher: String?

    var description: String { "\(type)\(bits.map { "-\($0)" } ?? "")\(passphrase.isEmpty ? "" : "-protected")\(cipher.map { "-\($0)" } ?? "")" }

    /// Every kept type, unencrypted.
    static let plain: [KeygenShape] = [.init(type: "ed25519"), .init(type: "ecdsa", bits: 256), .init(type: "ecdsa", bits: 384),
                                       .init(type: "ecdsa", bits: 521), .init(type: "rsa", bits: 2048)]
    /// Each key family under a passphrase (ssh-keygen's default aes256-ctr), and two under
    /// aes256-gcm (P-384 among them; P-521 protected is SSHKeyCLITests'): each decryption runs
    /// bcrypt-pbkdf in Swift, about 0.6 s a key in a debug build.
    static let protected: [KeygenShape] = [plain[0], plain[1], plain[4]].map { KeygenShape(type: $0.type, bits: $0.bits, passphrase: "correct horse") }
        + [.init(type: "ed25519", passphrase: "gcm pass", cipher: "aes256-gcm@openssh.com"),
           .init(type: "ecdsa", bits: 384, passphrase: "gcm pass", cipher: "aes256-gcm@openssh.com")]
}

/// A key ssh-keygen made in a temporary folder: its file, bytes, and what ssh-keygen says of it.
struct KeygenKey {
    let folder: TemporaryDirectory
    let file: String
    let bytes: [UInt8]
    let shape: KeygenShape

    static let comment = "alice@example laptop"

    init(_ shape: KeygenShape) throws {
        folder = try TemporaryDirectory()
        file = folder.path("id")
        self.shape = shape
        try SSHKeygen.make(shape.type, bits: shape.bits, passphrase: shape.passphrase, cipher: shape.cipher, comment: Self.comment, at: file)
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// The key, decrypted with its passphrase when it has one.
    func key() throws -> SSHPrivateKey {
        switch try SSHKeyFile.read(bytes, source: "id") {
        case .plain(let key): return key
        case .protected(let sealed):
            guard let key = try sealed.decrypt(passphrase: SecureBytes(copying: Array(shape.passphrase.utf8))) else {
                throw KeygenFailure(why: "the passphrase did not open the key")
            }
            return key
        }
    }
}

/// SSHSIG (OpenSSH's PROTOCOL.sshsig), enough to hand `ssh-keygen -Y check-novalidate` a
/// signature made by `SSHPrivateKey.sign`.
enum SSHSig {
    /// The armored signature by `key` of `message` in `namespace` (hash sha256), made with `algorithm`.
    static func sign(_ message: [UInt8], key: SSHPrivateKey, namespace: String, algorithm: SSHSignatureAlgorithm? = nil) throws -> String {
        var signed = Array("SSHSIG".utf8)
        appendString(&signed, Array(namespace.utf8))
        appendString(&signed, [])
        appendString(&signed, Array("sha256".utf8))
        appendString(&signed, SHA256.hash(message))
        let signature = try algorithm.map { try key.sign(signed, algorithm: $0) }
            ?? key.sign(signed, flags: key.type == .rsa ? SSHAgentSignFlags.rsaSHA2_512 : 0)
        var blob = Array("SSHSIG".utf8)
        appendUInt32(&blob, 1)
        appendString(&blob, key.publicKey.wireBytes)
        appendString(&blob, Array(namespace.utf8))
        appendString(&blob, [])
        appendString(&blob, Array("sha256".utf8))
        appendString(&blob, signature)
        let text = base64Encode(blob)
        var lines = ["-----BEGIN SSH SIGNATURE-----"]
        var rest = Substring(text)
        while !rest.isEmpty { lines.append(String(rest.prefix(70))); rest = rest.dropFirst(70) }
        lines.append("-----END SSH SIGNATURE-----")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Writes `bytes` to `path` with mode 0600 (ssh-keygen refuses private keys others may read).
func writePrivate(_ bytes: [UInt8], to path: String) throws {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
}

/// A key that the test's own setup could not open.
struct KeygenFailure: Error { let why: String }
