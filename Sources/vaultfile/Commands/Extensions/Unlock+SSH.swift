import SecureMemory
import VaultAgent
import VaultFormat
import VaultModel

// MARK: - unlock --ssh: the vault's ssh keys served by the agent

extension VaultfileCommand.Unlock {
    /// The ssh socket's path, beside the agent's; refused when a shell would need it quoted
    /// (`eval "$(vaultfile unlock --ssh)"` takes the line as it is, as ssh-agent prints it) or when
    /// it is too long for a socket address: both before anything is unlocked.
    static func sshSocketPath(_ socket: AgentSocketPath) throws(CLIError) -> String {
        let path = socket.directory + "/ssh-agent.sock"
        let plain = path.unicodeScalars.allSatisfy { $0.isASCII && (Self.unquoted.contains(Character($0))) }
        guard plain else {
            throw .refused("the agent's folder \(socket.directory) holds characters a shell would need quoted, so the line "
                           + "'SSH_AUTH_SOCK=…; export SSH_AUTH_SOCK;' cannot be printed as ssh-agent prints it",
                           hint: "point VAULTFILE_AGENT_SOCK at a path of letters, digits and / . _ - + : @ % = ,")
        }
        guard path.utf8.count <= AgentSocketPath.maxLength else {
            throw .refused("the ssh socket path \(path) is longer than \(AgentSocketPath.maxLength) bytes, the most a socket address holds",
                           hint: "point VAULTFILE_AGENT_SOCK at a shorter folder")
        }
        return path
    }

    private static let unquoted = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%=,")

    /// Opens the vault through the one read path (the agent now holds its key: no prompt; every
    /// check of a read, and a copy this machine does not trust serves nothing unless
    /// --allow-untrusted), hands its ssh keys to the agent in requests proven by `fileKey`, prints
    /// each key's fingerprint and comment on stderr and the `SSH_AUTH_SOCK` line on stdout.
    func serveSSHKeys(vaultID: [UInt8], fileKey: SecureBytes, socket: AgentSocketPath, sshSocket: String) throws {
        let unlocked = try unlock.open(entriesOnly: true, handingValues: true)
        let prefix = ssh.prefix ?? ""
        var keys: [SSHKeyHandOver] = []
        var lines: [String] = []
        for name in SSHKeyEntry.names(in: unlocked.vault, prefix: prefix) {
            guard let (key, fingerprint) = try Self.sshKey(named: name, in: unlocked.vault, options: ssh.keyOptions, lifetime: ssh.lifetimeSeconds)
            else { continue }
            keys.append(key)
            lines.append("vaultfile: serving \(fingerprint) \(key.comment) (\(name))")
        }
        let client = AgentClient(socket: socket)
        for (index, batch) in Self.batches(of: keys).enumerated() {
            let handOver = SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: index == 0, prefix: prefix, keys: batch)
            switch try client.send(.serveSSHKeys(handOver)) {
            case .done?: break
            case .noKey?, nil: throw CLIError.agentFailed("the agent at \(socket.path) no longer holds \(unlock.location.path); nothing served")
            case .unproven?: throw CLIError.agentHoldsOtherKeys(path: unlock.location.path)
            case .denied?: throw CLIError.agentChangeDenied(path: unlock.location.path)
            case .failed(let why)? where why == AgentProtocolError.unknownType(8).description:
                // An agent of an earlier build of this protocol version, from before `ssh keys`.
                throw CLIError.agentOfAnotherRelease(agentVersion: AgentProtocol.version)
            case .failed(let why)?: throw CLIError.agentFailed("the agent did not take the ssh keys: \(why)")
            default: throw CLIError.agentFailed("the agent at \(socket.path) answered the ssh keys with something other than 'done'")
            }
        }
        for line in lines { Messages.info(line) }
        if keys.isEmpty {
            Messages.warning("\(unlock.location.path) holds no ssh key\(prefix.isEmpty ? "" : " under '\(prefix)'") to serve")
        }
        try StandardOutput.line("SSH_AUTH_SOCK=\(sshSocket); export SSH_AUTH_SOCK;")
    }

    /// The hand-over of the ssh key entry `name` (marked by `set --ssh-key` or `ssh-keygen`) and its
    /// fingerprint, the key read and checked as `set --ssh-key` checked it; an entry whose key this
    /// build cannot read is skipped with a warning, a damaged one fails.
    private static func sshKey(named name: String, in vault: Vault, options: SSHKeyOptions,
                               lifetime: UInt32) throws -> (SSHKeyHandOver, String)? {
        let key: SSHPrivateKey
        do {
            key = try SSHKeyEntry.key(of: name, in: vault)
        } catch let error as SSHKeyError {
            guard case .unsupported = error else { throw error }
            Messages.warning("\(name) is not served: \(error.description)")
            return nil
        }
        let text = try key.openSSHText()
        guard text.count <= SSHKeysHandOver.maxPrivateKeyLength else {
            Messages.warning("\(name) is not served: its key is over \(SSHKeysHandOver.maxPrivateKeyLength) bytes")
            return nil
        }
        let handOver = SSHKeyHandOver(name: name, comment: key.comment, options: options, lifetimeSeconds: lifetime, privateKey: text)
        return (handOver, key.publicKey.fingerprint)
    }

    /// `keys` in requests that each stay under the agent's request limit; one empty request when
    /// there are none (it still replaces what was served under the prefix).
    private static func batches(of keys: [SSHKeyHandOver]) -> [[SSHKeyHandOver]] {
        let room = AgentProtocol.maxRequestLength - 2 * AgentProtocol.maxPathLength - 64
        var batches: [[SSHKeyHandOver]] = [[]]
        var used = 0
        for key in keys {
            let size = SSHKeysHandOver.encodedLength(of: key)
            if used + size > room, !batches[batches.count - 1].isEmpty {
                batches.append([])
                used = 0
            }
            batches[batches.count - 1].append(key)
            used += size
        }
        return batches
    }
}
