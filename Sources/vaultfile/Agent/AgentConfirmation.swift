import VaultAgent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The confirm command of `unlock --confirm-command`

/// Runs a vault's confirm command before each hand-out of its key, and before a change that weakens
/// what the agent holds of it: `sh -c CMD` with `VAULTFILE_CONFIRM_ACTION` (`hand-out`,
/// `change-settings` or `sign`), `VAULTFILE_CONFIRM_VAULT_ID` (hex), `VAULTFILE_CONFIRM_PATH` (the path the
/// client named) and `VAULTFILE_CONFIRM_PID` (the client's process id, from SO_PEERCRED) in its
/// environment. Exit status 0 within `deadline` seconds allows it; anything else refuses it. The
/// command runs in the client's thread of the agent, so a slow answer holds up no other client.
enum AgentConfirmation {
    /// Seconds the command gets before it is killed and the request refused.
    static let deadline: Double = 60

    /// What the command is asked to allow (`VAULTFILE_CONFIRM_ACTION`).
    enum Action: String {
        /// Handing a key of the vault out (a `key` request).
        case handOut = "hand-out"
        /// An `add` that drops or changes the confirm command, lengthens the timeout, or adds a key.
        case changeSettings = "change-settings"
        /// Signing a seal under the vault's delegation (a `sign` request: a write through the agent).
        case sign = "sign"
        /// Signing with a served ssh key (`unlock --ssh --ssh-confirm`); the `VAULTFILE_CONFIRM_SSH_*`
        /// variables say what (docs/AGENT.md).
        case sshSign = "ssh-sign"
    }

    /// Whether the command allows `action` on the vault `vaultID` for process `clientPID`.
    ///
    /// A hand-out for a `use` (the age plugin's `age-unwrap`, the git credential helper's
    /// `git-credential-get`/`-store`/`-erase`) names that action instead, the entry in
    /// `VAULTFILE_CONFIRM_ENTRY` (git's: the URL in `VAULTFILE_CONFIRM_GIT_URL`), and as
    /// `VAULTFILE_CONFIRM_PID` the program that started the requester (the requester itself in
    /// `VAULTFILE_CONFIRM_CLIENT_PID`): `age -d`, sops, git.
    /// `extra` adds variables (an ssh signature's `VAULTFILE_CONFIRM_SSH_*`).
    static func approves(command: String, action: Action, vaultID: [UInt8], path: String, clientPID: Int32,
                         use: AgentKeyUse? = nil, extra: [String: String] = [:]) -> Bool {
        var environment = VaultfileCommand.Exec.currentEnvironment().merging(extra) { $1 }
        environment["VAULTFILE_CONFIRM_ACTION"] = use?.action.name ?? action.rawValue
        environment["VAULTFILE_CONFIRM_VAULT_ID"] = hex(vaultID)
        environment["VAULTFILE_CONFIRM_PATH"] = path
        environment["VAULTFILE_CONFIRM_PID"] = String(use == nil ? clientPID : ProcessParent.of(clientPID) ?? clientPID)
        if let use {
            environment[use.action.namesAURL ? "VAULTFILE_CONFIRM_GIT_URL" : "VAULTFILE_CONFIRM_ENTRY"] = use.entry
            environment["VAULTFILE_CONFIRM_CLIENT_PID"] = String(clientPID)
        }
        guard let child = try? Subprocess.start(["/bin/sh", "-c", command], environment: environment) else { return false }
        var waited: Double = 0
        while waited < deadline {
            var status: Int32 = 0
            let done = waitpid(child.pid, &status, WNOHANG)
            if done == child.pid { return status & 0x7F == 0 && (status >> 8) & 0xFF == 0 }
            if done < 0 && errno != EINTR { return false }
            usleep(20_000)
            waited += 0.02
        }
        kill(child.pid, SIGKILL)
        _ = Subprocess.wait(child.pid)
        return false
    }
}
