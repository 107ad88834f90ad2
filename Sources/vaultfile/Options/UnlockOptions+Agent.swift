import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The agent first

/// Every verb that unlocks a vault asks the agent for the key of its header first and falls back
/// to the unlock sources (identities, keyfiles, recovery codes, then passwords: `credentials()`)
/// when the agent has none (or is not running); `--no-agent` and
/// `VAULTFILE_NO_AGENT=1` skip it. Without an agent socket the verb runs exactly as before,
/// password first: the header is not even read until the password is in hand.
extension UnlockOptions {
    /// Whether this command asks the agent: not with `--no-agent` or `VAULTFILE_NO_AGENT`, and only
    /// when a socket exists where the agent listens.
    var asksAgent: Bool {
        guard !noAgent, !AgentAccess.disabledByEnvironment else { return false }
        var info = stat()
        return stat(AgentSocketPath.resolve().path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    /// Opens `store` read-only with the agent's key; nil when the agent is not asked or has no key
    /// that verifies the header.
    func openWithAgent(_ store: VaultStore, rollback: RollbackCheck? = nil) throws -> UnlockedVault? {
        guard asksAgent else { return nil }
        return try store.open(lookingUp: AgentAccess.lookup(vaultPath: store.path), rollback: rollback)
    }

    /// Updates the vault under its lock with the agent's key; nil (nothing done) when the agent is
    /// not asked or has no key that verifies the header.
    func updateWithAgent<R>(rollback: RollbackCheck? = nil, _ edit: (UnlockedVault) throws -> R) throws -> R? {
        guard asksAgent else { return nil }
        let store = location.store
        return try store.update(lookingUp: AgentAccess.lookup(vaultPath: store.path), rollback: rollback, edit)
    }

    /// The agent's lookup for other files of the same vault (git's merge driver), or nil.
    var agentLookup: VaultStore.FileKeyLookup? { agentLookup(forPath: location.path) }

    /// The agent's lookup for the vault at `path` and other copies of it (`vaultfile merge`), or nil.
    func agentLookup(forPath path: String) -> VaultStore.FileKeyLookup? {
        guard asksAgent else { return nil }
        return AgentAccess.lookup(vaultPath: path)
    }

    /// After a rotation of the file key (`passwd`, `slot rm`, `rekey`): when the agent holds keys of
    /// this vault, hands it the new key beside the old ones (old copies in git history still open
    /// with the old key); a vault the agent does not hold stays locked. A failure is a warning: the
    /// rotation happened all the same.
    func handRotatedKeyToAgent(header: VaultHeader, fileKey: SecureBytes) {
        guard asksAgent else { return }
        let handOver = AgentKeyHandOver(vaultID: header.vaultID, fileKey: fileKey, timeoutSeconds: 0, onlyIfHeld: true,
                                        path: absolutePath(location.path), confirmCommand: "")
        do {
            switch try AgentClient().send(.add(handOver)) {
            case .done?, .noKey?, nil: return
            case .failed(let why)?: Messages.warning("the agent did not take the new key: \(why); unlock the vault again")
            default: Messages.warning("the agent answered the new key with something other than 'done'; unlock the vault again")
            }
        } catch {
            Messages.warning("the agent did not get the new key: \(error.description); unlock the vault again")
        }
    }
}
