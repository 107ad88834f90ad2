#if canImport(Glibc)
import Glibc
#endif

// MARK: - The confirm command of `unlock --confirm-command`

/// Runs a vault's confirm command before each hand-out of its key: `sh -c CMD` with
/// `VAULTFILE_CONFIRM_VAULT_ID` (hex), `VAULTFILE_CONFIRM_PATH` (the path the client named) and
/// `VAULTFILE_CONFIRM_PID` (the client's process id, from SO_PEERCRED) in its environment. Exit
/// status 0 within `deadline` seconds hands the key out; anything else refuses it. The command runs
/// in the client's thread of the agent, so a slow answer holds up no other client.
enum AgentConfirmation {
    /// Seconds the command gets before it is killed and the hand-out refused.
    static let deadline: Double = 60

    /// Whether the command approves handing out the key of `vaultID` to process `clientPID`.
    static func approves(command: String, vaultID: [UInt8], path: String, clientPID: Int32) -> Bool {
        var environment = VaultfileCommand.Exec.currentEnvironment()
        environment["VAULTFILE_CONFIRM_VAULT_ID"] = hex(vaultID)
        environment["VAULTFILE_CONFIRM_PATH"] = path
        environment["VAULTFILE_CONFIRM_PID"] = String(clientPID)
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
