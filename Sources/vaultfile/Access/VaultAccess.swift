import KDF
import SecureMemory
import VaultAgent
import VaultFormat
import VaultModel
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The agent first, then the unlock sources

/// How a verb reaches its vault: one `Unlocker` handed to the library's one pipeline
/// (`VaultStore.read`, `edit`, `replaceKeys`), with the rollback check, its report and the
/// weak-KDF warning around it.
///
/// Every verb that unlocks a vault asks the agent for the key of its header first and falls back
/// to the unlock sources (identities, keyfiles, recovery codes, then passwords: `credentials()`)
/// when the agent has none (or is not running): read then without the vault's lock, the header read
/// again only when the file changed meanwhile (Storage/VaultStore+Access.swift);
/// `--no-agent` and `VAULTFILE_NO_AGENT=1` skip it. Without an agent socket the verb reads the
/// sources given first: the header is not even read until they are in hand. The default
/// identities and the prompt come last, with the header (`UnlockSteps`), also without the lock.
extension UnlockOptions {
    /// Opens the vault read-only (no lock), warning about weak KDF settings and older copies.
    /// `entriesOnly` for a verb that reads entries and never history nor writes (get, list, ls,
    /// search, inject, exec, totp): a history section is then authenticated but not kept
    /// (`VaultStore.readsEntriesOnly`).
    ///
    /// `handingValues` for a verb that hands values to a program (`exec`, `inject`) or into a new
    /// vault (`init --copy-of`): a copy this machine does not trust as its members' is refused
    /// (exit 7) unless `--allow-untrusted`.
    ///
    /// `askingAgent` false opens it with a slot's secret even while an agent holds its key
    /// (`init --copy-of`: a signed copy's first seal is signed by that slot).
    func open(entriesOnly: Bool = false, handingValues: Bool = false, askingAgent: Bool = true) throws -> UnlockedVault {
        var store = location.store
        store.readsEntriesOnly = entriesOnly
        let rollback = try rollbackCheck(writing: false)
        defer { Self.report(rollback) }
        let unlocked = try store.read(with: try unlocker(askingAgent: askingAgent), rollback: rollback)
        if handingValues, let refusal = rollback?.takeUntrustedRefusal(path: location.path) { throw refusal }
        Self.warnIfWeak(unlocked)
        return unlocked
    }

    /// Opens the vault under its lock, runs `edit`, and re-seals it if anything changed; a write
    /// to an older copy is refused (exit 7) unless `--allow-rollback`. With the agent's key when
    /// it holds this vault's, unless `askingAgent` is false (`slot add`: changing who can open the
    /// vault takes a slot's secret); else with the unlock sources.
    ///
    /// `knownKey` (`edit`, which opened the vault before its editor ran): the file key tried first;
    /// when it no longer opens the vault (a `passwd` rotated it meanwhile), the agent and the
    /// unlock sources are asked as usual, read only then.
    func update<R>(askingAgent: Bool = true, knownKey: SecureBytes? = nil, _ edit: (UnlockedVault) throws -> R) throws -> R {
        let rollback = try rollbackCheck(writing: true)
        defer { Self.report(rollback) }
        var ended: [(name: String, versions: Int)] = []
        let unlocker = try knownKey.map { try self.unlocker(knownKey: $0) } ?? self.unlocker(askingAgent: askingAgent)
        let result = try location.store.edit(with: unlocker, rollback: rollback) { unlocked in
            Self.warnIfWeak(unlocked)
            let result = try edit(unlocked)
            ended = unlocked.vault.endedRemovedLines
            return result
        }
        // Once written: a new entry under a removed one's name dropped that one's versions from the trash.
        for line in ended {
            let versions = line.versions == 1 ? "1 version" : "\(line.versions) versions"
            Messages.note("the removed '\(EntryName.escapingFormatCharacters(line.name))' in the trash and its \(versions) "
                          + "were dropped: a new entry took its name")
        }
        return result
    }

    /// Rotates the file key under the vault's lock (`passwd`, `slot rm`, `rekey`): opened with a
    /// slot's secret, never the agent's key (a rotation changes who can open the vault); a write to
    /// an older copy is refused as any write is, and the file key it retires is recorded.
    ///
    /// In order: the rollback check; `beforeUnlock` (`passwd` reads a new password from a file
    /// there: a missing file fails before the KDF runs); an agent of another release refused
    /// (nothing is rotated that it could not be told of); the unlock sources; the rotation under the
    /// lock (`change`); `then` with its result (what the verb says); the new key handed to the agent,
    /// beside the key it replaces, when the agent holds the vault; last, what the rollback check found.
    func replaceKeys<R>(
        beforeUnlock: () throws -> Void = {}, _ change: (UnlockedVault) throws -> (vault: UnlockedVault, result: R),
        then report: (R) throws -> Void
    ) throws {
        let rollback = try rollbackCheck(writing: true)
        try beforeUnlock()
        if asksAgent { try AgentAccess.refuseAnotherRelease() }
        let unlocker = try unlocker(askingAgent: false)
        defer { Self.report(rollback) }
        var rotated: (header: VaultHeader, fileKey: SecureBytes, previousKey: SecureBytes)?
        var next: UnlockedVault?
        let result = try location.store.replaceKeys(with: unlocker, rollback: rollback, rotated: { rotated = ($0, $1, $2) }) { unlocked in
            let changed = try change(unlocked)
            next = changed.vault
            return changed
        }
        try report(result)
        if let rotated {
            // Once sealed, a signed vault's signer is the slot that opened it, under its new key
            // after a re-salt: it delegates the new key to the agent.
            handRotatedKeyToAgent(header: rotated.header, fileKey: rotated.fileKey, previousKey: rotated.previousKey,
                                  signer: next?.sealSigner as? SlotSealSigner)
        }
    }

    // MARK: The unlocker

    /// The unlocker of this command's vault: with `askingAgent` and an agent socket, the agent's
    /// lookup first and the unlock sources read only on a miss; else the unlock sources, read now
    /// (before the vault: a missing vault after a bad --password-file reports the password file).
    /// `announcing` shows each KDF run on a terminal.
    func unlocker(askingAgent: Bool = true, announcing: Bool = true, agentPath: String? = nil) throws -> Unlocker {
        let announce = announcing ? Self.announce : nil
        let steps = UnlockSteps(self)
        if askingAgent, asksAgent {
            let lookup = AgentAccess.lookup(vaultPath: agentPath ?? location.path) { steps.agentMiss = $0 }
            var unlocker = Unlocker(lookup: lookup, credentials: lazyCredentials(announce, steps: steps))
            // A signed vault opened with the agent's key is signed by the agent, under its delegation.
            unlocker.lookupSigner = AgentSealSigner(vaultPath: agentPath ?? location.path)
            return unlocker
        }
        let credentials = try credentials(passphrases: steps.passphrases)
        return Unlocker(credentials: credentials, limits: try limits(), willDeriveKey: announce, next: steps.next)
    }

    /// The unlocker of a known file key, then (when the key no longer opens the header) the agent's
    /// lookup and the unlock sources, read only then (`update(knownKey:)`).
    private func unlocker(knownKey: SecureBytes) throws -> Unlocker {
        let steps = UnlockSteps(self)
        var unlocker = Unlocker(fileKey: knownKey, lookup: asksAgent ? AgentAccess.lookup(vaultPath: location.path) { steps.agentMiss = $0 } : nil,
                                credentials: lazyCredentials(Self.announce, steps: steps))
        if asksAgent { unlocker.lookupSigner = AgentSealSigner(vaultPath: location.path) }
        return unlocker
    }

    /// The unlocker of a merge (git's driver, `vaultfile merge`): the agent's lookup for every
    /// side (it keeps every key of the vault id; `agentPath` names the vault to it), the unlock
    /// sources read only for a side none of its keys opens, once; no KDF progress.
    func mergeUnlocker(agentPath: String) -> Unlocker {
        // The library's errors, not `NothingOpens`: the merge names each side that none of the sources opens.
        let steps = UnlockSteps(self, endsWithReport: false)
        var unlocker = Unlocker(lookup: asksAgent ? AgentAccess.lookup(vaultPath: agentPath) : nil, credentials: lazyCredentials(nil, steps: steps))
        if asksAgent { unlocker.lookupSigner = AgentSealSigner(vaultPath: agentPath) }
        return unlocker
    }

    /// The unlock sources and then the caps, read when the unlocker first needs them (never on
    /// the agent's hit: the caps read the environment and the machine's memory size); then the
    /// later steps (`steps`, else this command's own: the default identities, the prompt).
    func lazyCredentials(_ announce: ((KDFParameters) -> Void)?, steps: UnlockSteps? = nil) -> () throws -> Unlocker.Credentials {
        let options = self
        let steps = steps ?? UnlockSteps(self)
        return {
            let given = try options.credentials(passphrases: steps.passphrases)
            steps.given = given.count
            var credentials = Unlocker.Credentials(given, limits: try options.limits(), willDeriveKey: announce)
            credentials.next = steps.next
            return credentials
        }
    }

    /// Whether this command asks the agent: not with `--no-agent` or `VAULTFILE_NO_AGENT`, and only
    /// when a socket exists where the agent listens.
    var asksAgent: Bool {
        guard !noAgent, !AgentAccess.disabledByEnvironment else { return false }
        return AgentSocketPath.current.socketExists
    }

    // MARK: Around the unlock

    /// Shows what is happening while a KDF runs, when stderr is a terminal.
    static func announce(_ parameters: KDFParameters) {
        Messages.progress("unlocking (\(parameters))…")
    }

    /// Warns (once a day per vault) when the password slot's KDF is below OWASP's minimum.
    static func warnIfWeak(_ unlocked: UnlockedVault) {
        guard let kdf = unlocked.passwordKDF, !kdf.meetsRecommendedMinimum, weakKDFWarningIsDue(unlocked.header.vaultID) else { return }
        Messages.warning("this vault's key derivation (\(kdf)) is below OWASP's minimum; strengthen it with 'vaultfile passwd'")
    }

    /// After a rotation of the file key (`passwd`, `slot rm`, `rekey`): when the agent holds keys of
    /// this vault, hands it the new key beside the old ones (old copies in git history still open
    /// with the old key), with `previousKey`, the key the command opened the vault with: the agent
    /// takes a key for a vault it holds only from a request that carries one of its keys, and asks
    /// the vault's confirm command (`change-settings`). A vault the agent does not hold stays
    /// locked. A failure is a warning: the rotation happened all the same.
    func handRotatedKeyToAgent(header: VaultHeader, fileKey: SecureBytes, previousKey: SecureBytes, signer: SlotSealSigner? = nil) {
        guard asksAgent else { return }
        var handOver = AgentKeyHandOver(vaultID: header.vaultID, fileKey: fileKey, heldKey: previousKey, timeoutSeconds: 0, onlyIfHeld: true,
                                        path: absolutePath(location.path), confirmCommand: "")
        // A signed vault: a delegation for the new key (every rotation ends the old ones), until
        // the held vault's timeout from now, signed by the slot this command opened it with.
        if header.isSigned, let signer {
            handOver.delegation = try? AgentDelegations.make(for: header.vaultID, fileKey: fileKey, signer: signer,
                                                             timeoutSeconds: AgentDelegations.heldTimeout(of: header.vaultID))
        }
        let relock = "to use the agent for it, run 'vaultfile lock' and 'vaultfile unlock' for it"
        do {
            switch try AgentClient().send(.add(handOver)) {
            case .done?, .noKey?, nil: return
            case .unproven?:
                Messages.warning("the agent holds this vault under other keys than the one this command opened, so it did not take the new key; \(relock)")
            case .denied?: Messages.warning("the vault's confirm command refused the new key to the agent; \(relock)")
            case .failed(let why)?: Messages.warning("the agent did not take the new key: \(why); unlock the vault again")
            default: Messages.warning("the agent answered the new key with something other than 'done'; unlock the vault again")
            }
        } catch {
            Messages.warning("the agent did not get the new key: \(error.description); unlock the vault again")
        }
    }
}
