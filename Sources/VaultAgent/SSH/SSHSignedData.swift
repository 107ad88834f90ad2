import VaultFormat

// MARK: - What a SIGN_REQUEST asks to sign

/// What the data of a SIGN_REQUEST is, as far as the agent can tell: an ssh user authentication
/// (RFC 4252 §7, and OpenSSH's `publickey-hostbound-v00@openssh.com`), an `ssh-keygen -Y sign`
/// signature (PROTOCOL.sshsig), or other bytes. The confirm command is told which; the session-id
/// rule of a bound connection reads the userauth's session id and host key.
public enum SSHSignedData: Equatable, Sendable {
    /// A user authentication request: its session id, user name, and, for the host-bound method,
    /// the server's host key blob.
    case userauth(sessionID: [UInt8], user: String, hostKey: [UInt8]?)
    /// An SSHSIG signature (`ssh-keygen -Y sign`, git's ssh signing) in `namespace`.
    case sshsig(namespace: String)
    /// Anything else.
    case other

    /// The purpose word the confirm command gets.
    public var purpose: String {
        switch self {
        case .userauth: return "userauth"
        case .sshsig: return "sshsig"
        case .other: return "other"
        }
    }

    /// Reads `data`; bytes that are not exactly one of the known shapes are `other`.
    public static func classify(_ data: [UInt8]) -> SSHSignedData {
        if data.starts(with: sshsigMagic) {
            var reader = SSHReader(data[sshsigMagic.count...])
            guard let namespace = reader.string(), reader.string() != nil, reader.string() != nil, reader.string() != nil,
                  reader.isAtEnd else { return .other }
            return .sshsig(namespace: printable(namespace))
        }
        var reader = SSHReader(data[...])
        guard let sessionID = reader.string(), reader.byte() == userauthRequest, let user = reader.string(),
              reader.string() != nil, let method = reader.string(), reader.byte() == 1,
              reader.string() != nil, reader.string() != nil else { return .other }
        if method.elementsEqual("publickey".utf8), reader.isAtEnd {
            return .userauth(sessionID: Array(sessionID), user: printable(user), hostKey: nil)
        }
        if method.elementsEqual(hostbound.utf8), let hostKey = reader.string(), reader.isAtEnd {
            return .userauth(sessionID: Array(sessionID), user: printable(user), hostKey: Array(hostKey))
        }
        return .other
    }

    /// Whether `data` begins with a vaultfile signing prefix (`vaultfile seal signature v1`,
    /// `vaultfile agent delegation v1`, `vaultfile slot attestation v1`, and any later
    /// `vaultfile …` prefix): such data is never signed by an ssh key, so that no ssh signature can
    /// pass for a seal, a delegation or an attestation.
    public static func hasVaultfilePrefix(_ data: [UInt8]) -> Bool {
        data.starts(with: "vaultfile".utf8)
    }

    private static let sshsigMagic = Array("SSHSIG".utf8)
    private static let userauthRequest: UInt8 = 50
    private static let hostbound = "publickey-hostbound-v00@openssh.com"

    /// Text from a client's bytes for a command's environment: UTF-8 (invalid bytes replaced),
    /// control characters as `?`, at most 256 bytes.
    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix(256), as: UTF8.self).map { $0.isASCII && ($0.asciiValue! < 0x20 || $0.asciiValue! == 0x7F) ? "?" : String($0) }.joined()
    }
}
