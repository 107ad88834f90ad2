import SecureMemory
import VaultFormat

// MARK: - One connection's bindings

/// What one ssh-socket connection was bound to (`session-bind@openssh.com`): ssh binds each agent
/// connection to the session it authenticates, with the host key's signature over the session id.
public struct SSHAgentSession: Sendable {
    /// One verified binding.
    public struct Bind: Equatable, Sendable {
        /// The host key's wire blob.
        public let hostKey: [UInt8]
        /// The session id it signed.
        public let sessionID: [UInt8]
        /// Whether the connection is a forwarded one (`ssh -A`) at this hop.
        public let forwarding: Bool
    }

    /// The bindings, oldest first (at most `SSHAgentProtocol.maxBinds`).
    public private(set) var binds: [Bind] = []
    /// A bind failed on this connection (a signature that does not verify, a host key the agent
    /// cannot check, a session id under another host key, a binding after one for user
    /// authentication, too many): answered EXTENSION_FAILURE, the bindings already made stand.
    public private(set) var bindFailed = false
    /// A bind failed while nothing was bound: the connection may be one that ssh forwarded and
    /// bound as such, so it counts as forwarded from then on (OpenSSH's ssh-agent likewise refuses
    /// its destination-restricted keys on a connection whose bind failed). Keys allowed to sign on
    /// forwarded connections still sign; no later binding undoes it.
    public private(set) var failedUnbound = false

    /// A fresh, unbound connection.
    public init() {}

    /// Whether any binding says the connection was forwarded, or a bind failed before any binding.
    public var isForwarded: Bool { failedUnbound || binds.contains { $0.forwarding } }

    /// Takes a binding after the host key's signature over the session id verifies, under
    /// OpenSSH's rules: a connection bound for user authentication (not forwarding) takes no other
    /// binding; the same session id and host key again is harmless, a session id under another host
    /// key is not; 16 bindings at most.
    mutating func bind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool) -> SSHAgentResponse {
        guard !sessionID.isEmpty, SSHHostKeys.verifies(hostKey: hostKey, signature: signature, data: sessionID) else { return failBind() }
        for known in binds {
            guard known.forwarding else { return failBind() }
            if known.sessionID == sessionID { return known.hostKey == hostKey ? .success : failBind() }
        }
        guard binds.count < SSHAgentProtocol.maxBinds else { return failBind() }
        binds.append(Bind(hostKey: hostKey, sessionID: sessionID, forwarding: forwarding))
        return .success
    }

    mutating func failBind() -> SSHAgentResponse {
        bindFailed = true
        if binds.isEmpty { failedUnbound = true }
        return .extensionFailure
    }
}

// MARK: - What the confirm command is told

/// One signature the confirm command is asked to allow.
public struct SSHConfirmRequest: Sendable {
    /// The command (the vault's `--confirm-command`).
    public let command: String
    /// The vault the key comes from, and its path.
    public let vaultID: [UInt8], path: String
    /// The key's fingerprint and comment.
    public let fingerprint: String, comment: String
    /// `userauth`, `sshsig` or `other`.
    public let purpose: String
    /// For `userauth`: the destination host key's fingerprint (from the request or the binding), if known.
    public let hostKeyFingerprint: String?
    /// For `userauth`: the user name asked for.
    public let user: String?
    /// For `sshsig`: the namespace.
    public let namespace: String?
    /// Whether the connection was bound as forwarded.
    public let forwarded: Bool
}

// MARK: - The answers

/// Answers the requests of the ssh socket (docs/AGENT.md, "The ssh-agent socket"): lists the keys
/// served, signs under the rules, takes bindings; everything else gets FAILURE. No I/O: the
/// executable reads frames and runs the confirm command (`confirm`).
public enum SSHAgentResponder {
    /// The answer to one message body; `now` is the keyring's clock.
    public static func answer(_ body: [UInt8], session: inout SSHAgentSession, keyring: LockedValue<AgentKeyring>,
                              now: () -> Double, confirm: (SSHConfirmRequest) -> Bool) -> SSHAgentResponse {
        guard let request = SSHAgentRequest.decode(body) else { return .failure }
        switch request {
        case .requestIdentities:
            return .identities(keyring.withLock { $0.sshIdentities(now: now()) })
        case .sign(let blob, let data, let flags):
            return sign(blob: blob, data: data, flags: flags, session: session, keyring: keyring, now: now, confirm: confirm)
        case .sessionBind(let hostKey, let sessionID, let signature, let forwarding):
            return session.bind(hostKey: hostKey, sessionID: sessionID, signature: signature, forwarding: forwarding)
        case .malformedSessionBind:
            return session.failBind()
        case .unknownExtension, .unsupported:
            return .failure
        }
    }

    /// A signature, or FAILURE for any rule it breaks (each check says which rule).
    static func sign(blob: [UInt8], data: [UInt8], flags: UInt32, session: SSHAgentSession, keyring: LockedValue<AgentKeyring>,
                     now: () -> Double, confirm: (SSHConfirmRequest) -> Bool) -> SSHAgentResponse {
        // Nothing may pass for a vaultfile signature.
        guard !SSHSignedData.hasVaultfilePrefix(data) else { return .failure }
        guard let match = keyring.withLock({ $0.sshKey(blob: blob, now: now()) }) else { return .failure }
        let options = match.served.options
        // Flags: only the two RSA hash choices, never both; an ssh-rsa key without one means SHA-1.
        let rsaFlags = SSHAgentProtocol.rsaSHA2_256 | SSHAgentProtocol.rsaSHA2_512
        guard flags & ~rsaFlags == 0, flags != rsaFlags else { return .failure }
        if match.served.key.type == .rsa && flags == 0 && !options.contains(.allowSHA1) { return .failure }
        // Forwarded, or a bind failed before any binding (it may have been the forwarding one).
        if session.isForwarded && !options.contains(.allowForwarding) { return .failure }
        let signed = SSHSignedData.classify(data)
        var destination: [UInt8]?
        if case .userauth(let sessionID, _, let hostKey) = signed {
            destination = hostKey ?? session.binds.last?.hostKey
            // On a connection bound here (not forwarded at its last hop), a user authentication
            // must be for the session it was bound to, and with its host key.
            if let last = session.binds.last, !last.forwarding {
                guard sessionID == last.sessionID, hostKey.map({ $0 == last.hostKey }) ?? true else { return .failure }
            }
        }
        if let command = match.confirmCommand {
            var user: String?, namespace: String?
            if case .userauth(_, let name, _) = signed { user = name }
            if case .sshsig(let name) = signed { namespace = name }
            let request = SSHConfirmRequest(command: command, vaultID: match.vaultID, path: match.path, fingerprint: match.served.key.publicKey.fingerprint,
                                            comment: match.served.comment, purpose: signed.purpose,
                                            hostKeyFingerprint: destination.flatMap(SSHHostKeys.fingerprint), user: user, namespace: namespace,
                                            forwarded: session.isForwarded)
            guard confirm(request) else { return .failure }
        }
        // Locked, expired or replaced while the command ran: then nothing is signed.
        guard let signature = keyring.withLock({ $0.sshSign(match, data: data, flags: flags, now: now()) }) else { return .failure }
        return .signature(signature)
    }
}
