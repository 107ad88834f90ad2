import ArgumentParser
import VaultModel
import VaultFile

/// Shows which vaults the agent holds keys of: never a key.
struct AgentStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the agent's process and the vaults it holds keys of (id, path last seen, idle time left, confirm command set, signs until), and its ssh socket's keys.",
        discussion: """
            Never shows a key, nor the confirm command itself (only whether one is set). The ssh socket (ssh-agent.sock beside the agent's) \
            is shown with the keys it serves, as ssh-add -l lists them: fingerprint, comment and type. With no agent running it says so \
            and exits 0 ('running': false in JSON).
            """)

    @Flag(name: .customLong("json"), help: "Print JSON for scripts.") var json = false

    func run() throws {
        let client = AgentClient()
        let response = try client.socket.directoryExists() ? try client.send(.status) : nil
        guard let response else {
            if json {
                try StandardOutput.line(JSON.object([("running", .bool(false)), ("socket", .string(client.socket.path))]).text)
            } else {
                try StandardOutput.line("no agent is running at \(client.socket.path)")
            }
            return
        }
        guard case .status(let status) = response else {
            if case .failed(let why) = response { throw CLIError.agentFailed("the agent did not give its status: \(why)") }
            throw CLIError.agentFailed("the agent at \(client.socket.path) answered with something other than its status")
        }
        let ssh = try SSHSocketListing.ask(beside: client.socket)
        if json {
            try StandardOutput.line(JSON.object([
                ("running", .bool(true)),
                ("socket", .string(client.socket.path)),
                ("pid", .int(Int64(status.pid))),
                ("started_by", .string(status.startedByUnlock ? "unlock" : "agent run")),
                ("vaults", .array(status.vaults.map { vault in
                    .object([
                        ("vault_id", .string(hex(vault.vaultID))),
                        ("path", .string(vault.path)),
                        ("keys", .int(Int64(vault.keyCount))),
                        ("timeout_seconds", vault.timeoutSeconds == 0 ? .null : .int(Int64(vault.timeoutSeconds))),
                        ("idle_seconds_left", vault.timeoutSeconds == 0 ? .null : .int(Int64(vault.idleSecondsLeft))),
                        ("confirm_command", .bool(vault.confirms)),
                        ("can_sign", .bool(vault.signsUntil != 0)),
                        ("signs_until", vault.signsUntil == 0 ? .null : .string(UTCTime.rfc3339(seconds: Int64(clamping: vault.signsUntil)))),
                    ])
                })),
                ("ssh_socket", .string(ssh.path)),
                ("ssh_listening", .bool(ssh.listening)),
                ("ssh_keys", .array(ssh.keys.map { key in
                    .object([("fingerprint", .string(key.fingerprint)), ("comment", .string(key.comment)), ("type", .string(key.type))])
                })),
            ]).text)
            return
        }
        let lifetime = status.startedByUnlock ? "started by unlock: exits when it holds no key" : "started by 'agent run'"
        var lines = ["agent \(status.pid) at \(client.socket.path) (\(lifetime))"]
        if status.vaults.isEmpty { lines.append("no vault is unlocked") }
        for vault in status.vaults {
            let keys = vault.keyCount == 1 ? "1 key" : "\(vault.keyCount) keys"
            let left = vault.timeoutSeconds == 0 ? "until 'vaultfile lock'"
                : "\(AgentTimeout.text(vault.idleSecondsLeft)) of idle time left (timeout \(AgentTimeout.text(vault.timeoutSeconds)))"
            let confirm = vault.confirms ? "a confirm command approves each hand-out" : "no confirm command"
            // An unsigned vault needs no signing: its writes through the agent work.
            let unsigned = vault.signsUntil == 0 && (try? VaultStore(path: vault.path).readHeader().header.isSigned) == false
            let signs = unsigned ? "unsigned vault: writes need no signing"
                : vault.signsUntil == 0 ? "cannot sign writes" : "signs writes until \(utcText(seconds: Int64(clamping: vault.signsUntil)))"
            lines.append("\(hex(vault.vaultID))  \(vault.path)  \(keys), \(left), \(confirm), \(signs)")
        }
        if ssh.listening {
            let count = ssh.keys.count == 1 ? "1 ssh key" : "\(ssh.keys.count) ssh keys"
            lines.append("ssh socket \(ssh.path): \(count) served" + (ssh.keys.isEmpty ? " ('vaultfile unlock --ssh' serves a vault's keys)" : ""))
            for key in ssh.keys { lines.append("  \(key.fingerprint) \(key.comment.isEmpty ? "(no comment)" : key.comment) (\(key.type))") }
        } else {
            lines.append("ssh socket \(ssh.path): not listening ('vaultfile unlock --ssh' starts it)")
        }
        try StandardOutput.line(lines.map { Messages.escaped($0) }.joined(separator: "\n"))
    }
}
