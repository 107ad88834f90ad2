import SecureMemory
import VaultModel
import VaultFormat

// MARK: - The agent's wire protocol

/// Constants of the protocol between `vaultfile` and its agent, specified byte by byte in
/// docs/AGENT.md. Every message is one frame: a 32-bit little-endian body length, then the body:
/// the protocol version, a type byte, and the fields of that type. One request and one answer
/// (or an interim `confirming` and then the answer) per connection.
public enum AgentProtocol {
    /// The version this build speaks. Client and agent talk only in the same version; one of
    /// another version is another release (`AgentVersioning`). Version 1 was release 0.2's;
    /// version 2 (issue 39) puts a held key in `add`, and answers `unproven`; version 3 (issue 40)
    /// puts a delegation in `add`, asks `sign`, and says in `status` until when a vault can sign.
    public static let version: UInt8 = 3
    /// The longest request body: a `key` request with the largest header and path fits.
    public static let maxRequestLength = 72 * 1024
    /// The longest response body: a `status` with `AgentKeyring.maxVaults` vaults of the longest path fits.
    public static let maxResponseLength = 2 << 20
    /// The longest path a message carries, in bytes.
    public static let maxPathLength = 4096
    /// The longest `--confirm-command`, in bytes.
    public static let maxCommandLength = 4096
    /// The bytes of a vault id.
    public static let vaultIDLength = 16
    /// The bytes of a file key.
    public static let fileKeyLength = 32
    /// The bytes of a payload hash (BLAKE2b-512) in a `sign` request.
    public static let payloadHashLength = 64
    /// The longest member key a message carries (an ssh-ed25519 wire key is 51 bytes).
    public static let maxMemberKeyLength = 64
    /// The bytes of the length prefix before every body.
    public static let lengthPrefix = 4
}

/// Why a frame was refused: malformed, truncated, too long, or of another version.
public enum AgentProtocolError: Error, Equatable, CustomStringConvertible {
    /// The body's version byte is not `AgentProtocol.version`.
    case unsupportedVersion(UInt8)
    /// The type byte names no message of this version.
    case unknownType(UInt8)
    /// The body ends inside a field.
    case truncated(String)
    /// A field holds a value the protocol does not allow (the message names it).
    case malformed(String)
    /// A length is over its limit.
    case tooLong(what: String, length: Int, limit: Int)

    public var description: String {
        switch self {
        case .unsupportedVersion(let version):
            return "protocol version \(version) is not supported (this vaultfile speaks version \(AgentProtocol.version))"
        case .unknownType(let type): return "unknown message type \(type)"
        case .truncated(let field): return "the message ends inside \(field)"
        case .malformed(let why): return "malformed message: \(why)"
        case .tooLong(let what, let length, let limit): return "\(what) is \(length) bytes; the limit is \(limit)"
        }
    }
}

// MARK: - Requests

/// A file key handed to the agent (`vaultfile unlock`, and `passwd` for the rotated key).
public struct AgentKeyHandOver: Sendable {
    /// The vault id of the header the key opens.
    public var vaultID: [UInt8]
    /// The 32-byte file key.
    public var fileKey: SecureBytes
    /// Idle seconds after which the agent forgets every key of the vault; 0: until `lock`.
    public var timeoutSeconds: UInt32
    /// Add the key only if the agent already holds a key of this vault (and keep its timeout):
    /// `passwd` hands the rotated key on without unlocking a vault that was not unlocked.
    public var onlyIfHeld: Bool
    /// A key of the vault the sender opened it with, beside `fileKey` when that is a new one
    /// (`passwd`, `slot rm`, `rekey` send the key they rotated away): the agent changes a vault it
    /// holds only for a request that carries one of the keys it holds for it.
    public var heldKey: SecureBytes?
    /// The vault's path as the client saw it (shown by `agent status`; never used to open anything).
    public var path: String
    /// A command the agent runs before each hand-out of this vault's keys; empty: none.
    public var confirmCommand: String
    /// A delegation for `fileKey` (`unlock` of a signed vault with a slot that signs, and the
    /// rotations after it): the agent then signs seals under that key until the delegation expires.
    public var delegation: AgentDelegationHandOver?

    /// A hand-over of `fileKey` for the vault `vaultID`, with `heldKey` when the sender opened the
    /// vault under another key.
    public init(vaultID: [UInt8], fileKey: SecureBytes, heldKey: SecureBytes? = nil, timeoutSeconds: UInt32, onlyIfHeld: Bool,
                path: String, confirmCommand: String, delegation: AgentDelegationHandOver? = nil) {
        self.delegation = delegation
        self.vaultID = vaultID
        self.fileKey = fileKey
        self.heldKey = heldKey
        self.timeoutSeconds = timeoutSeconds
        self.onlyIfHeld = onlyIfHeld
        self.path = path
        self.confirmCommand = confirmCommand
    }
}

/// One request to the agent.
public enum AgentRequest: Sendable {
    /// Type 1: keep this key (`unlock`).
    case add(AgentKeyHandOver)
    /// Type 2: the key whose header MAC verifies this header, if any (every verb that unlocks);
    /// `use` says what for, when not an unlock (the age plugin: `AgentKeyUse`).
    case key(path: String, header: [UInt8], use: AgentKeyUse? = nil)
    /// Type 3: forget and wipe every key of this vault id (`lock`).
    case lock(vaultID: [UInt8])
    /// Type 4: forget and wipe every key (`lock --all`).
    case lockAll
    /// Type 5: which vaults are held (`agent status`).
    case status
    /// Type 6: wipe every key and exit (`agent stop`).
    case stop
    /// Type 7: sign a seal of this header prefix (magic … metadata block) and payload hash under a
    /// delegation the agent holds (every write through the agent to a signed vault).
    case sign(path: String, headerPrefix: [UInt8], payloadHash: [UInt8])
    /// Type 8: serve these ssh keys of a vault held on the ssh socket (`unlock --ssh`).
    case serveSSHKeys(SSHKeysHandOver)

    /// The type byte.
    var type: UInt8 {
        switch self {
        case .add: return 1
        case .key: return 2
        case .lock: return 3
        case .lockAll: return 4
        case .status: return 5
        case .stop: return 6
        case .sign: return 7
        case .serveSSHKeys: return 8
        }
    }

    /// The whole frame (length prefix and body) in guarded memory: an `add` carries a key.
    public func frame() -> SecureBytes {
        var sink = FrameSizer()
        encode(into: &sink)
        var writer = SecureFrameWriter(bodyLength: sink.count)
        encode(into: &writer)
        return writer.finish()
    }

    private func encode(into sink: inout some ByteSink) {
        sink.append(AgentProtocol.version)
        sink.append(type)
        switch self {
        case .add(let handOver):
            sink.append(handOver.vaultID)
            handOver.fileKey.withUnsafeBytes { sink.append(raw: $0) }
            sink.append(handOver.timeoutSeconds)
            sink.append(UInt8(handOver.onlyIfHeld ? 1 : 0) | UInt8(handOver.heldKey == nil ? 0 : 2) | UInt8(handOver.delegation == nil ? 0 : 4))
            handOver.heldKey?.withUnsafeBytes { sink.append(raw: $0) }
            handOver.delegation?.encode(into: &sink)
            sink.appendAgentString(handOver.path)
            sink.appendAgentString(handOver.confirmCommand)
        case .key(let path, let header, let use):
            precondition(header.count <= VaultHeader.maxLength, "a header is at most 65,535 bytes")
            sink.appendAgentString(path)
            sink.append(UInt16(header.count))
            sink.append(header)
            use?.encode(into: &sink)
        case .lock(let vaultID):
            sink.append(vaultID)
        case .sign(let path, let prefix, let payloadHash):
            precondition(prefix.count <= VaultHeader.maxLength && payloadHash.count == AgentProtocol.payloadHashLength,
                         "a header prefix is at most 65,535 bytes and a payload hash 64")
            sink.appendAgentString(path)
            sink.append(UInt16(prefix.count))
            sink.append(prefix)
            sink.append(payloadHash)
        case .serveSSHKeys(let handOver):
            handOver.encode(into: &sink)
        case .lockAll, .status, .stop:
            break
        }
    }

    /// Decodes a request body (the bytes after the length prefix); the one encoding of each
    /// request is accepted, anything else is refused with the field it fails at.
    public static func decode(body: UnsafeRawBufferPointer) throws(AgentProtocolError) -> AgentRequest {
        guard body.count <= AgentProtocol.maxRequestLength else {
            throw .tooLong(what: "the request", length: body.count, limit: AgentProtocol.maxRequestLength)
        }
        var reader = WireReader(body)
        let version = try reader.byte("the version")
        guard version == AgentProtocol.version else { throw .unsupportedVersion(version) }
        let type = try reader.byte("the message type")
        let request: AgentRequest
        switch type {
        case 1:
            let vaultID = try reader.bytes(AgentProtocol.vaultIDLength, "the vault id")
            let fileKey = SecureBytes(copying: try reader.raw(AgentProtocol.fileKeyLength, "the file key"))
            let timeout = try reader.uint32("the timeout")
            let flags = try reader.byte("the flags")
            guard flags <= 7 else { throw .malformed("unknown flags 0x\(String(flags, radix: 16))") }
            let heldKey = flags & 2 == 0 ? nil : SecureBytes(copying: try reader.raw(AgentProtocol.fileKeyLength, "the held key"))
            let delegation = flags & 4 == 0 ? nil : try AgentDelegationHandOver.decode(&reader)
            let path = try reader.string("the path", limit: AgentProtocol.maxPathLength)
            let command = try reader.string("the confirm command", limit: AgentProtocol.maxCommandLength)
            request = .add(AgentKeyHandOver(vaultID: vaultID, fileKey: fileKey, heldKey: heldKey, timeoutSeconds: timeout,
                                            onlyIfHeld: flags & 1 == 1, path: path, confirmCommand: command, delegation: delegation))
        case 2:
            let path = try reader.string("the path", limit: AgentProtocol.maxPathLength)
            let length = Int(try reader.uint16("the header length"))
            guard length > 0 else { throw .malformed("the header is empty") }
            let header = try reader.bytes(length, "the header")
            request = .key(path: path, header: header, use: try AgentKeyUse.decode(&reader))
        case 3:
            request = .lock(vaultID: try reader.bytes(AgentProtocol.vaultIDLength, "the vault id"))
        case 4: request = .lockAll
        case 5: request = .status
        case 6: request = .stop
        case 7:
            let path = try reader.string("the path", limit: AgentProtocol.maxPathLength)
            let length = Int(try reader.uint16("the header prefix length"))
            guard length > 0 else { throw .malformed("the header prefix is empty") }
            let prefix = try reader.bytes(length, "the header prefix")
            request = .sign(path: path, headerPrefix: prefix, payloadHash: try reader.bytes(AgentProtocol.payloadHashLength, "the payload hash"))
        case 8: request = .serveSSHKeys(try SSHKeysHandOver.decode(&reader))
        default: throw .unknownType(type)
        }
        try reader.expectEnd()
        return request
    }
}

