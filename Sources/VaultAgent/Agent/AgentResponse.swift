import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Responses

/// What `agent status` shows: never a key.
public struct AgentStatus: Equatable, Sendable {
    /// One vault the agent holds keys of.
    public struct Vault: Equatable, Sendable {
        /// The vault id.
        public var vaultID: [UInt8]
        /// How many keys of it are held (more than one after a `passwd`).
        public var keyCount: UInt16
        /// The idle timeout in seconds; 0: until `lock`.
        public var timeoutSeconds: UInt32
        /// Seconds until the keys are forgotten unless one is handed out (meaningless when the timeout is 0).
        public var idleSecondsLeft: UInt32
        /// The path last seen for it.
        public var path: String
        /// Whether a confirm command guards its hand-outs (never the command itself).
        public var confirms: Bool
        /// Until when (seconds since 1970) the agent can sign seals for it under a delegation; 0: it cannot.
        public var signsUntil: UInt64

        /// A status line's data.
        public init(vaultID: [UInt8], keyCount: UInt16, timeoutSeconds: UInt32, idleSecondsLeft: UInt32, path: String, confirms: Bool = false,
                    signsUntil: UInt64 = 0) {
            self.signsUntil = signsUntil
            self.vaultID = vaultID
            self.keyCount = keyCount
            self.timeoutSeconds = timeoutSeconds
            self.idleSecondsLeft = idleSecondsLeft
            self.path = path
            self.confirms = confirms
        }
    }

    /// The agent's process id.
    public var pid: UInt32
    /// Started by `unlock` (exits when it holds no key) rather than by `agent run`.
    public var startedByUnlock: Bool
    /// The vaults held, by vault id.
    public var vaults: [Vault]

    /// A status.
    public init(pid: UInt32, startedByUnlock: Bool, vaults: [Vault]) {
        self.pid = pid
        self.startedByUnlock = startedByUnlock
        self.vaults = vaults
    }
}

/// One answer of the agent.
public enum AgentResponse: Sendable {
    /// Type 0: done (`add`, `stop`).
    case done
    /// Type 1: the file key that verifies the header sent.
    case key(SecureBytes)
    /// Type 2: no key verifies it (or, to an `add` only if held, the vault is not held).
    case noKey
    /// Type 3: how many vaults' keys were forgotten (`lock`, `lock --all`).
    case forgotten(UInt32)
    /// Type 4: the vaults held.
    case status(AgentStatus)
    /// Type 5: the request failed; the text says why (never a secret).
    case failed(String)
    /// Type 6: the confirm command refused the hand-out, or the change of an `add`.
    case denied
    /// Type 7: an interim answer: the confirm command runs; the answer follows.
    case confirming
    /// Type 8: an `add` for a vault the agent holds carried none of its keys; nothing changed.
    case unproven
    /// Type 9: the signature block of a seal, signed under a delegation (`sign`).
    case signature(SealSignatureBlock)
    /// Type 10: the agent did not sign, and why (`sign`).
    case cannotSign(AgentSignRefusal)

    var type: UInt8 {
        switch self {
        case .done: return 0
        case .key: return 1
        case .noKey: return 2
        case .forgotten: return 3
        case .status: return 4
        case .failed: return 5
        case .denied: return 6
        case .confirming: return 7
        case .unproven: return 8
        case .signature: return 9
        case .cannotSign: return 10
        }
    }

    /// The whole frame (length prefix and body) in guarded memory: a `key` answer carries a key.
    /// Texts longer than `maxPathLength` bytes are cut at a character boundary.
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
        case .key(let fileKey):
            fileKey.withUnsafeBytes { sink.append(raw: $0) }
        case .forgotten(let count):
            sink.append(count)
        case .status(let status):
            sink.append(status.pid)
            sink.append(UInt8(status.startedByUnlock ? 1 : 0))
            sink.append(UInt16(status.vaults.count))
            for vault in status.vaults {
                sink.append(vault.vaultID)
                sink.append(vault.keyCount)
                sink.append(vault.timeoutSeconds)
                sink.append(vault.idleSecondsLeft)
                sink.appendAgentString(vault.path)
                sink.append(UInt8(vault.confirms ? 1 : 0))
                sink.append(vault.signsUntil)
            }
        case .failed(let message):
            sink.appendAgentString(message)
        case .signature(let block):
            block.encode(into: &sink)
        case .cannotSign(let refusal):
            sink.append(refusal.rawValue)
        case .done, .noKey, .denied, .confirming, .unproven:
            break
        }
    }

    /// Whether a body of this version is the interim `confirming` (the answer follows).
    public static func isConfirming(_ body: UnsafeRawBufferPointer) -> Bool {
        body.count == 2 && body[0] == AgentProtocol.version && body[1] == AgentResponse.confirming.type
    }

    /// Decodes a response body (the bytes after the length prefix).
    public static func decode(body: UnsafeRawBufferPointer) throws(AgentProtocolError) -> AgentResponse {
        guard body.count <= AgentProtocol.maxResponseLength else {
            throw .tooLong(what: "the response", length: body.count, limit: AgentProtocol.maxResponseLength)
        }
        var reader = WireReader(body)
        let version = try reader.byte("the version")
        guard version == AgentProtocol.version else { throw .unsupportedVersion(version) }
        let type = try reader.byte("the message type")
        let response: AgentResponse
        switch type {
        case 0: response = .done
        case 1: response = .key(SecureBytes(copying: try reader.raw(AgentProtocol.fileKeyLength, "the file key")))
        case 2: response = .noKey
        case 3: response = .forgotten(try reader.uint32("the count"))
        case 4:
            let pid = try reader.uint32("the process id")
            let flags = try reader.byte("the flags")
            guard flags <= 1 else { throw .malformed("unknown flags 0x\(String(flags, radix: 16))") }
            let count = Int(try reader.uint16("the vault count"))
            var vaults: [AgentStatus.Vault] = []
            for index in 0..<count {
                let vaultID = try reader.bytes(AgentProtocol.vaultIDLength, "the vault id of vault \(index)")
                let keys = try reader.uint16("the key count of vault \(index)")
                let timeout = try reader.uint32("the timeout of vault \(index)")
                let left = try reader.uint32("the idle time left of vault \(index)")
                let path = try reader.string("the path of vault \(index)", limit: AgentProtocol.maxPathLength)
                let vaultFlags = try reader.byte("the flags of vault \(index)")
                guard vaultFlags <= 1 else { throw .malformed("unknown flags 0x\(String(vaultFlags, radix: 16)) of vault \(index)") }
                let signsUntil = try reader.uint64("the signing expiry of vault \(index)")
                vaults.append(AgentStatus.Vault(vaultID: vaultID, keyCount: keys, timeoutSeconds: timeout, idleSecondsLeft: left, path: path,
                                                confirms: vaultFlags == 1, signsUntil: signsUntil))
            }
            response = .status(AgentStatus(pid: pid, startedByUnlock: flags == 1, vaults: vaults))
        case 5: response = .failed(try reader.string("the message", limit: AgentProtocol.maxPathLength))
        case 6: response = .denied
        case 7: response = .confirming
        case 8: response = .unproven
        case 9: response = .signature(try SealSignatureBlock.decode(&reader))
        case 10:
            let reason = try reader.byte("the reason")
            guard let refusal = AgentSignRefusal(rawValue: reason) else { throw .malformed("unknown reason \(reason)") }
            response = .cannotSign(refusal)
        default: throw .unknownType(type)
        }
        try reader.expectEnd()
        return response
    }
}
