import VaultFormat

// MARK: - The ssh-agent protocol's messages

/// The message numbers and limits of the SSH agent protocol (draft-miller-ssh-agent, RFC 9987;
/// OpenSSH's PROTOCOL.agent) that vaultfile's ssh socket speaks (docs/AGENT.md, "The ssh-agent
/// socket"). Unlike vaultfile's own protocol, a frame's length is big-endian and one connection
/// carries many requests, each answered in order.
public enum SSHAgentProtocol {
    /// The longest message either side takes (OpenSSH's `AGENT_MAX_LEN`, 256 KiB).
    public static let maxMessageLength = 256 * 1024
    /// The most `session-bind@openssh.com` bindings one connection keeps (OpenSSH's limit).
    public static let maxBinds = 16
    /// The longest string a request's field may hold: the message's own bound.
    static let maxFieldLength = maxMessageLength

    // Requests.
    static let requestIdentities: UInt8 = 11
    static let signRequest: UInt8 = 13
    static let extensionRequest: UInt8 = 27
    // Answers.
    static let failure: UInt8 = 5
    static let success: UInt8 = 6
    static let identitiesAnswer: UInt8 = 12
    static let signResponse: UInt8 = 14
    static let extensionFailure: UInt8 = 28

    /// SIGN_REQUEST flags: an ssh-rsa key signs with rsa-sha2-256 or rsa-sha2-512; no flag means SHA-1.
    public static let rsaSHA2_256: UInt32 = 2
    /// See `rsaSHA2_256`.
    public static let rsaSHA2_512: UInt32 = 4
    /// The only extension served.
    public static let sessionBind = "session-bind@openssh.com"
}

// MARK: - Requests

/// One request read from the ssh socket. Anything the agent does not serve decodes to
/// `unsupported` (answered FAILURE); bytes that do not decode to a request are `nil` at `decode`.
public enum SSHAgentRequest: Equatable, Sendable {
    /// REQUEST_IDENTITIES (11).
    case requestIdentities
    /// SIGN_REQUEST (13): the key's wire blob, the data, the flags.
    case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
    /// `session-bind@openssh.com`: the host key's blob, the session id, the host key's
    /// signature over it (an SSH signature blob), and whether the connection is forwarded.
    case sessionBind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool)
    /// A `session-bind@openssh.com` whose fields do not decode: a failing bind (EXTENSION_FAILURE).
    case malformedSessionBind
    /// An EXTENSION (27) of another name: FAILURE.
    case unknownExtension(String)
    /// A request of another type (adding, removing, locking keys, smartcards…): FAILURE.
    case unsupported(type: UInt8)

    /// Decodes one message body (after the length); nil when the body is malformed (a field runs
    /// past the end, bytes follow the last field, a bool is neither 0 nor 1).
    public static func decode(_ body: [UInt8]) -> SSHAgentRequest? {
        var reader = SSHReader(body[...])
        guard let type = reader.byte() else { return nil }
        switch type {
        case SSHAgentProtocol.requestIdentities:
            return reader.isAtEnd ? .requestIdentities : nil
        case SSHAgentProtocol.signRequest:
            guard let blob = reader.string(), let data = reader.string(), let flags = reader.uint32(), reader.isAtEnd else { return nil }
            return .sign(keyBlob: Array(blob), data: Array(data), flags: flags)
        case SSHAgentProtocol.extensionRequest:
            guard let name = reader.string() else { return nil }
            guard name.elementsEqual(SSHAgentProtocol.sessionBind.utf8) else {
                return .unknownExtension(String(decoding: name.prefix(256), as: UTF8.self))
            }
            guard let hostKey = reader.string(), let sessionID = reader.string(), let signature = reader.string(),
                  let forwarding = reader.byte(), forwarding <= 1, reader.isAtEnd else { return .malformedSessionBind }
            return .sessionBind(hostKey: Array(hostKey), sessionID: Array(sessionID), signature: Array(signature), forwarding: forwarding == 1)
        default:
            return .unsupported(type: type)
        }
    }
}

// MARK: - Answers

/// One answer on the ssh socket.
public enum SSHAgentResponse: Equatable, Sendable {
    /// FAILURE (5).
    case failure
    /// SUCCESS (6).
    case success
    /// EXTENSION_FAILURE (28): a known extension failed.
    case extensionFailure
    /// IDENTITIES_ANSWER (12): each key's wire blob and comment.
    case identities([SSHAgentIdentity])
    /// SIGN_RESPONSE (14): the signature blob (`string algorithm ‖ string signature`).
    case signature([UInt8])

    /// The whole frame: a big-endian length, then the body.
    public var frame: [UInt8] {
        var body = SSHWireWriter()
        switch self {
        case .failure: body.byte(SSHAgentProtocol.failure)
        case .success: body.byte(SSHAgentProtocol.success)
        case .extensionFailure: body.byte(SSHAgentProtocol.extensionFailure)
        case .identities(let identities):
            body.byte(SSHAgentProtocol.identitiesAnswer)
            body.uint32(UInt32(identities.count))
            for identity in identities {
                body.string(identity.publicBlob)
                body.string(Array(identity.comment.utf8))
            }
        case .signature(let blob):
            body.byte(SSHAgentProtocol.signResponse)
            body.string(blob)
        }
        var frame = SSHWireWriter()
        frame.uint32(UInt32(body.bytes.count))
        return frame.bytes + body.bytes
    }
}

/// A key as REQUEST_IDENTITIES lists it.
public struct SSHAgentIdentity: Equatable, Sendable {
    /// The public key's wire blob.
    public let publicBlob: [UInt8]
    /// The key file's own comment.
    public let comment: String

    /// An identity line.
    public init(publicBlob: [UInt8], comment: String) {
        self.publicBlob = publicBlob
        self.comment = comment
    }

    /// The bytes it takes in an IDENTITIES_ANSWER.
    var encodedLength: Int { 8 + publicBlob.count + comment.utf8.count }
}

// MARK: - Wire writing (reading: VaultFormat's SSHReader)

/// Builds SSH wire bytes.
struct SSHWireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        bytes += value
    }
}
