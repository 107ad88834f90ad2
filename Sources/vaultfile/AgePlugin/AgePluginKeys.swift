import SecureMemory
import VaultAgent
import VaultFile
import VaultFormat
import VaultModel

// MARK: - From identity lines to the age identities of lent entries

/// Finds the entry each `AGE-PLUGIN-VAULTFILE-1…` line names and reads its age identities.
///
/// The vault is the one the agent holds under the line's vault id, opened with the agent's key
/// alone (its `key` request says `age-unwrap` and the entry, so the vault's confirm command asks
/// about exactly this); when the agent holds no such vault, the usual vault (`VAULTFILE_PATH`,
/// else the default) opened with the usual sources. A line names something only when its entry
/// exists, is lent (its `age-lent` field holds a lend key) and the line's MAC verifies under
/// that key; every other line, crafted or retired, gets one message that names nothing in it.
enum AgePluginKeys {
    /// An identity that cannot be used, by its index among the client's identities.
    struct Failure: Error {
        let index: Int
        let message: String
    }

    /// The identities of each line, or the failures (all of them, so the client can name each).
    static func load(_ lines: [String]) -> Result<[[AgeIdentity]], FailureList> {
        var failures: [Failure] = []
        var parsed: [(index: Int, identity: VaultfilePluginIdentity)] = []
        for (index, line) in lines.enumerated() {
            do {
                parsed.append((index, try VaultfilePluginIdentity(parsing: line)))
            } catch {
                failures.append(Failure(index: index, message: "not a vaultfile plugin identity: \(Messages.escaped(error.description))"))
            }
        }
        // Nothing is opened while a line is malformed: the spec stops every unwrap then.
        guard failures.isEmpty else { return .failure(FailureList(failures)) }
        // A tracer or injected code would read the vault's file key out of this process.
        if let refusal = AgePluginObservers.refusal() {
            Messages.error(refusal.description)
            return .failure(FailureList(parsed.map { Failure(index: $0.index, message: refusal.description) }))
        }
        var loaded: [[AgeIdentity]] = []
        // One open per entry: each passes the confirm command with its own entry's name.
        var seen: [VaultfilePluginIdentity: [AgeIdentity]] = [:]
        for (index, identity) in parsed {
            // One failure stops every unwrap of the run: the lines after it ask no confirm command.
            if let first = failures.first {
                failures.append(Failure(index: index, message: "not tried: identity \(first.index) failed first, which stops every unwrap of this run"))
                continue
            }
            if let known = seen[identity] {
                loaded.append(known)
                continue
            }
            do {
                let keys = try identities(of: identity)
                seen[identity] = keys
                loaded.append(keys)
            } catch let failure as Failure {
                failures.append(Failure(index: index, message: failure.message))
            } catch {
                failures.append(Failure(index: index, message: Messages.escaped(String(describing: error))))
            }
        }
        return failures.isEmpty ? .success(loaded) : .failure(FailureList(failures))
    }

    /// The age identities in the entry `identity` names, after its lend key verified the line.
    private static func identities(of identity: VaultfilePluginIdentity) throws -> [AgeIdentity] {
        let vault = try open(identity)
        let entry = Messages.escaped(identity.entry)
        let namesNothing = Failure(index: 0, message: "this identity names no lent entry of vault \(hex(identity.vaultID)) "
                                   + "(never lent, lent again since, or not made by vaultfile); 'vaultfile age-identity NAME --lend' prints a valid one")
        let valid: Bool
        do {
            valid = try vault.withValue(of: identity.entry, part: EntryPart(field: VaultfilePluginIdentity.lentField)) { raw in
                var field = Array(raw)
                defer { wipe(&field) }
                guard var key = VaultfilePluginIdentity.lendKey(fromField: field) else { return false }
                defer { wipe(&key) }
                return identity.isValid(lendKey: key)
            }
        } catch {
            throw namesNothing
        }
        guard valid else { throw namesNothing }
        return try vault.withValue(of: identity.entry) { raw in
            var value = Array(raw)
            defer { wipe(&value) }
            do {
                return try AgeIdentityFile.parse(value, source: "the value of '\(entry)'")
            } catch {
                throw Failure(index: 0, message: "\(String(describing: error)) (the value of a lent entry is an age identity: AGE-SECRET-KEY-1… or an age-keygen file)")
            }
        }
    }

    /// The vault of `identity`, unlocked: through the agent that holds it, else the usual vault.
    private static func open(_ identity: VaultfilePluginIdentity) throws -> Vault {
        AgentAccess.keyUse = AgentKeyUse(action: .ageUnwrap, entry: identity.entry)
        let unlocked: UnlockedVault
        var path = ""
        if let held = heldPath(of: identity.vaultID) {
            path = held
            let options = try UnlockOptions.parse(["--vault", path])
            do {
                unlocked = try options.openThroughAgent()
            } catch {
                throw Failure(index: 0, message: "the agent did not hand out the key of \(Messages.escaped(path)) for '\(Messages.escaped(identity.entry))' "
                              + "(its confirm command refused, or the vault was locked meanwhile)")
            }
        } else {
            let options = try UnlockOptions.parse([])
            path = options.location.path
            do {
                unlocked = try options.open(entriesOnly: true)
            } catch {
                throw Failure(index: 0, message: "the agent holds no vault \(hex(identity.vaultID)), and the vault at "
                              + "\(Messages.escaped(options.location.path)) did not open: \(Messages.escaped(String(describing: error))); "
                              + "run 'vaultfile unlock' for the vault of this identity")
            }
        }
        guard unlocked.header.vaultID == identity.vaultID else {
            throw Failure(index: 0, message: "the vault at \(Messages.escaped(path)) is vault \(hex(unlocked.header.vaultID)), "
                          + "not \(hex(identity.vaultID)) that this identity names; unlock that one ('vaultfile unlock') or set VAULTFILE_PATH to it")
        }
        return unlocked.vault
    }

    /// The path of the vault the agent holds under `vaultID`, if any.
    private static func heldPath(of vaultID: [UInt8]) -> String? {
        guard !AgentAccess.disabledByEnvironment, AgentSocketPath.current.socketExists else { return nil }
        guard case .status(let status)? = try? AgentClient().send(.status) else { return nil }
        return status.vaults.first { $0.vaultID == vaultID }?.path
    }
}

/// The failures of `AgePluginKeys.load`.
struct FailureList: Error {
    let failures: [AgePluginKeys.Failure]
    init(_ failures: [AgePluginKeys.Failure]) { self.failures = failures }
}

extension UnlockOptions {
    /// Opens the vault read-only with the agent's key alone: no other source is asked, so a key
    /// the agent (or its confirm command) refused is never replaced by a default identity or a
    /// prompt (the age plugin's every unwrap passes the confirm command).
    func openThroughAgent() throws -> UnlockedVault {
        var store = location.store
        store.readsEntriesOnly = true
        let rollback = try rollbackCheck(writing: false)
        defer { Self.report(rollback) }
        return try store.read(with: Unlocker(lookup: AgentAccess.lookup(vaultPath: location.path)), rollback: rollback)
    }
}
