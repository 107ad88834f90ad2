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
        var damaged: [String] = []
        for name in SSHKeyEntry.names(in: unlocked.vault, prefix: prefix) {
            let served: (SSHKeyHandOver, String)?
            do {
                served = try Self.sshKey(named: name, in: unlocked.vault, options: ssh.keyOptions, lifetime: ssh.lifetimeSeconds)
            } catch let error as SSHKeyError {
                // One damaged entry does not stop the others: it is named (never a byte of it) and the
                // command ends with status 4 once the others are served.
                guard case .damaged(let why) = error else { throw error }
                Messages.warning("the ssh key entry '\(name)' is not served: \(Self.withoutSource(why, name: name))")
                damaged.append(name)
                continue
            }
            guard let (key, fingerprint) = served else { continue }
            keys.append(key)
            lines.append("vaultfile: serving \(fingerprint) \(key.comment) (\(name))")
        }
        let client = AgentClient(socket: socket)
        for (index, batch) in Self.batches(of: keys).enumerated() {
            let handOver = SSHKeysHandOver(vaultID: vaultID, fileKey: fileKey, replacing: index == 0, prefix: prefix, keys: batch)
            switch try client.send(.serveSSHKeys(handOver)) {
            case .done?: break
            case .noKey?, nil:
                throw CLIError.agentFailed("the agent at \(socket.path) no longer holds \(unlock.location.path) (locked or timed out meanwhile); "
                                           + "no ssh key was served: run 'vaultfile unlock --ssh' again")
            case .unproven?: throw CLIError.agentHoldsOtherKeys(path: unlock.location.path)
            case .denied?: throw CLIError.agentChangeDenied(path: unlock.location.path)
            case .failed(let why)? where why == AgentProtocolError.unknownType(8).description:
                // An agent of an earlier build of this protocol version, from before `ssh keys`.
                throw CLIError.agentOfAnotherRelease(agentVersion: AgentProtocol.version)
            case .failed(let why)?: throw CLIError.agentFailed("the agent at \(socket.path) did not take the ssh keys of \(unlock.location.path) (none changed): \(why)")
            default: throw CLIError.agentFailed("the agent at \(socket.path) answered the ssh keys with something other than 'done'")
            }
        }
        for line in lines { Messages.info(line) }
        if keys.isEmpty {
            Messages.warning("\(unlock.location.path) holds no ssh key\(prefix.isEmpty ? "" : " under '\(prefix)'") to serve; store one with "
                             + "'vaultfile set NAME --ssh-key < KEYFILE' or make one with 'vaultfile ssh-keygen NAME'")
        }
        try StandardOutput.line("SSH_AUTH_SOCK=\(sshSocket); export SSH_AUTH_SOCK;")
        if !damaged.isEmpty {
            let which = damaged.count == 1 ? "'\(damaged[0])' is" : "\(damaged.count) ssh key entries are"
            throw SSHKeyError.damaged("\(which) damaged and not served (the other keys are); store a good copy with "
                                      + "'vaultfile set NAME --ssh-key', or remove the entry")
        }
    }

    /// `why` without the parser's leading "entry 'NAME': " (the warning names the entry itself).
    private static func withoutSource(_ why: String, name: String) -> String {
        let source = "entry '\(name)': "
        return why.hasPrefix(source) ? String(why.dropFirst(source.count)) : why
    }

    /// The hand-over of the ssh key entry `name` (marked by `set --ssh-key` or `ssh-keygen`) and its
    /// fingerprint, the key read and checked as `set --ssh-key` checked it, listed with the entry's
    /// stored `comment` field (which `set --field comment` may have changed; none: no comment);
    /// an entry whose key this build cannot read is skipped with a warning, a damaged one throws.
    private static func sshKey(named name: String, in vault: Vault, options: SSHKeyOptions,
                               lifetime: UInt32) throws -> (SSHKeyHandOver, String)? {
        let key: SSHPrivateKey
        do {
            key = try SSHKeyEntry.key(of: name, in: vault)
        } catch let error as SSHKeyError {
            guard case .unsupported = error else { throw error }
            Messages.warning("the ssh key entry '\(name)' is not served: \(Self.withoutSource(error.description, name: name))")
            return nil
        }
        let text = try key.openSSHText()
        guard text.count <= SSHKeysHandOver.maxPrivateKeyLength else {
            Messages.warning("the ssh key entry '\(name)' is not served: its key is \(text.count) bytes, over the "
                             + "\(SSHKeysHandOver.maxPrivateKeyLength) one hand-over to the agent carries")
            return nil
        }
        let handOver = SSHKeyHandOver(name: name, comment: listedComment(of: name, in: vault, key: key), options: options, lifetimeSeconds: lifetime,
                                      privateKey: text)
        return (handOver, key.publicKey.fingerprint)
    }

    /// The entry's `comment` field as the agent lists it (`SSHKeyEntry.storedComment`); one that
    /// an identity listing cannot carry falls back to the key file's own, with a warning.
    private static func listedComment(of name: String, in vault: Vault, key: SSHPrivateKey) -> String {
        do {
            return try SSHKeyEntry.storedComment(of: name, in: vault)
        } catch {
            Messages.warning("\(error.description); the key file's own comment is listed instead")
            return key.comment
        }
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
