import SecureMemory
import VaultAgent
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Taking ssh keys to serve

extension AgentServer {
    /// Serves `handOver`'s keys on the ssh socket (made beside the agent's on the first such
    /// request): each key is parsed here, before anything changes; the vault must be held and the
    /// request must carry one of its keys (`unproven` otherwise): a file key is handed out only
    /// past the vault's confirm command, and whoever holds it can read the keys anyway.
    func serveSSHKeys(_ handOver: SSHKeysHandOver) -> AgentResponse {
        let now = Self.now()
        var served: [SSHServedKey] = []
        for key in handOver.keys {
            do {
                served.append(SSHServedKey(key, key: try SSHPrivateKey.parse(key.privateKey, source: "the ssh key of \(key.name)"), now: now))
            } catch {
                return .failed("the ssh key of \(key.name) is not served: \(error.description); nothing changed")
            }
        }
        do {
            try SSHAgentListener.start(path: sshSocketPath, keyring: keyring)
        } catch {
            return .failed(error.description)
        }
        do {
            let outcome = try keyring.withLock { keyring throws(AgentKeyring.Refusal) in try keyring.serveSSHKeys(handOver, keys: served, now: Self.now()) }
            return outcome == .held ? .done : .noKey
        } catch {
            return error == .unproven ? .unproven : .failed(error.description)
        }
    }

    /// `ssh-agent.sock` in the agent socket's folder.
    var sshSocketPath: String { socket.directory + "/ssh-agent.sock" }
}
