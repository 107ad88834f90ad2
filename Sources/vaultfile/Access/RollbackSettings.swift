import SecureMemory
import VaultFile
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The state folder of this user

extension StateFolder {
    /// `$VAULTFILE_STATE_DIR`, else `$XDG_STATE_HOME/vaultfile`, else `~/.local/state/vaultfile`
    /// (`~` from `$HOME`, else the user's home in the password database); nil when none is known.
    static var current: StateFolder? {
        var home = environment("HOME")
        if home == nil, let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { home = String(cString: directory) }
        return resolve(stateDirectory: environment("VAULTFILE_STATE_DIR"), xdgStateHome: environment("XDG_STATE_HOME"), home: home)
    }

    /// `current` when it may be used: this user's, no write for group or others (`ownershipProblem`,
    /// the agent folder's rule). Otherwise a command that `writing` a vault is refused
    /// (`stateFolderUnsafe`, exit 2), and one that only reads goes on without it, warned once.
    static func usable(writing: Bool) throws(CLIError) -> StateFolder? {
        guard let state = current else { return nil }
        guard let unsafe = state.ownershipProblem() else { return state }
        if writing { throw .stateFolderUnsafe(unsafe) }
        StateWarning.show(unsafe)
        return nil
    }
}

/// Problems with the state folder, shown once per run however many records failed.
enum StateWarning {
    private static let shown = LockedValue(false)

    /// Shows `problem` as a warning unless one was shown already.
    static func show(_ problem: StateFolder.Problem) {
        let first = shown.withLock { shown in
            defer { shown = true }
            return !shown
        }
        guard first else { return }
        Messages.warning("\(problem); older copies of vaults are not recognised and notices are not remembered (set VAULTFILE_STATE_DIR to another folder)")
    }

    /// Shows that the state folder is not used (`unsafe`), unless a warning was shown already.
    static func show(_ unsafe: StateFolder.Unsafe) {
        let first = shown.withLock { shown in
            defer { shown = true }
            return !shown
        }
        guard first else { return }
        Messages.warning("\(unsafe); it is not used: this command goes on without the rollback check, and writes are refused "
            + "(exit 2) until you \(unsafe.fix)")
    }

    /// The problem of having no state folder at all.
    static let noFolder = StateFolder.Problem(folder: "~/.local/state/vaultfile", reason: "no home folder is known (HOME is not set)")
}

// MARK: - Whether the rollback check applies

/// Whether a vault is compared with the generations seen on this machine (docs/SECURITY.md):
/// `VAULTFILE_ROLLBACK_CHECK=on|off|auto`, where `auto` (the default) is on outside a git work tree.
enum RollbackSetting {
    /// The check is on, with the records of this state folder.
    case on(SeenGenerations)
    /// Off: the vault is in the git work tree at `root`, whose history and merge driver handle old copies.
    case offInGit(root: String)
    /// Off: `VAULTFILE_ROLLBACK_CHECK=off`.
    case offByEnvironment
    /// On, but no state folder is known: nothing can be compared or recorded.
    case noStateFolder
    /// On, but the state folder is another user's or others may write it: it is not used.
    case unsafeStateFolder(StateFolder.Unsafe)

    /// The setting for the vault at `path`; a `VAULTFILE_ROLLBACK_CHECK` other than on, off or auto is a usage error.
    static func forVault(at path: String) throws -> RollbackSetting {
        switch environment("VAULTFILE_ROLLBACK_CHECK") ?? "auto" {
        case "off":
            return .offByEnvironment
        case "auto":
            if let root = GitWorkTree.root(containing: path) { return .offInGit(root: root) }
        case "on":
            break
        case let other:
            throw CLIError.invalidArgument("VAULTFILE_ROLLBACK_CHECK must be on, off or auto, not '\(other)'")
        }
        guard let state = StateFolder.current else { return .noStateFolder }
        if let unsafe = state.ownershipProblem() { return .unsafeStateFolder(unsafe) }
        return .on(SeenGenerations(state: state))
    }
}

extension RollbackSetting {
    /// The check of a command on the vault at `path`: generations and retired file keys where the
    /// rollback check is on; only retired file keys when it is off (in a git work tree, where an old
    /// branch after a member's removal is the common case, or by the environment); nil without a
    /// state folder. A state folder that is not this user's alone fails a command `writing`
    /// (exit 2) and is skipped, with a warning, by one that reads (`StateFolder.usable`).
    static func check(forVaultAt path: String, allowRollback: Bool = false, writing: Bool) throws -> RollbackCheck? {
        switch try forVault(at: path) {
        case .on(let seen): return RollbackCheck(seen: seen, allowRollback: allowRollback)
        case .offInGit, .offByEnvironment:
            return try StateFolder.usable(writing: writing).map { RollbackCheck(seen: SeenGenerations(state: $0), comparesGenerations: false) }
        case .noStateFolder:
            StateWarning.show(StateWarning.noFolder)
            return nil
        case .unsafeStateFolder(let unsafe):
            if writing { throw CLIError.stateFolderUnsafe(unsafe) }
            StateWarning.show(unsafe)
            return nil
        }
    }
}

extension RollbackSetting {
    /// The check of `vaultfile merge` on OURS at `path`: as `check(forVaultAt:)` for a write, but
    /// without a state folder nothing is said (a merge only reads the retired keys and records its result).
    static func mergeCheck(forVaultAt path: String) throws -> RollbackCheck? {
        switch try forVault(at: path) {
        case .on(let seen): return RollbackCheck(seen: seen)
        case .offInGit, .offByEnvironment:
            return try StateFolder.usable(writing: true).map { RollbackCheck(seen: SeenGenerations(state: $0), comparesGenerations: false) }
        case .noStateFolder: return nil
        case .unsafeStateFolder(let unsafe): throw CLIError.stateFolderUnsafe(unsafe)
        }
    }
}

/// Shown once per command however many times it opens the vault (a dry run and then the write, say).
private let retiredKeyNoticeShown = LockedValue(false)

/// Whether this is the command's first notice about its vault's keys (`retiredKeyNoticeShown`), marking it shown.
private func firstKeyNotice() -> Bool {
    retiredKeyNoticeShown.withLock { shown in
        defer { shown = true }
        return !shown
    }
}

/// Whether the command is `slot list`, whose warning about a refused copy need not send the user to `slot list`.
let listingSlots = LockedValue(false)

/// Whether this command takes a vault that stopped being post-quantum as it is (`RollbackCheck.acceptClassical`):
/// `slot list --accept-classical` (which says so) any loss, `slot add --allow-classical` of a classical key (which warns
/// itself) only the loss its own write makes, once written.
struct ClassicalAcceptance: Sendable {
    /// Who asks for it.
    enum Asker: Sendable { case nobody, listing, adding }

    var asker = Asker.nobody
    /// Whether a loss of post-quantum was accepted in this command.
    var accepted = false
}

/// This command's `ClassicalAcceptance`.
let classicalAcceptance = LockedValue(ClassicalAcceptance())

/// Shown once per command however many times it opens the vault.
private let quantumNoticeShown = LockedValue(false)

extension UnlockOptions {
    /// The check for this command's vault (`RollbackSetting.check`), or nil without a state folder
    /// (or, for a command that only reads, with one that is not this user's alone).
    func rollbackCheck(writing: Bool) throws -> RollbackCheck? {
        let check = try RollbackSetting.check(forVaultAt: location.path, allowRollback: allowRollback, writing: writing)
        check?.acceptRotation = acceptRotation
        check?.allowUntrusted = allowUntrusted
        let asker = classicalAcceptance.withLock { $0.asker }
        check?.acceptClassical = asker == .listing ? .anyLoss : asker == .adding ? .ownWrite : .nobody
        return check
    }

    /// Shows what `check` found: an older copy, diverged copies, a state folder that failed.
    static func report(_ check: RollbackCheck?) {
        guard let check else { return }
        for finding in check.findings {
            switch finding {
            case .olderCopy(let path, _, let newer):
                // Merge first: --allow-rollback would drop the newer copy's changes, or this one's if it has any.
                Messages.warning("\(finding); a write to it is refused (exit 7): if it holds changes of its own, combine them (else "
                    + "--allow-rollback makes this copy the newest, without the newer one's changes): \(ErrorReport.mergeCommand(path, newer.path))")
            case .diverged(let path, _, let other):
                // Never --allow-rollback: it would leave the other copy's changes behind.
                Messages.warning("\(finding); combine them with: \(ErrorReport.mergeCommand(path, other.path))")
            case .implausible:
                Messages.warning("\(finding); a write to it is refused (exit 7) unless --allow-rollback, which ignores its generation")
            case .retiredKey:
                guard firstKeyNotice() else { continue }
                Messages.warning("\(finding); a write to it is refused (exit 7) until 'vaultfile rekey' or a merge with the rotated copy")
            case .refusedCopy(_, let why):
                // Once per command too; the hint says how to tell a planted copy from a rotation made elsewhere.
                guard firstKeyNotice() else { continue }
                Messages.warning("\(finding); a write to it is refused (exit 7)")
                Messages.info("vaultfile: hint: " + ErrorReport.hint(for: why, listing: listingSlots.withLock { $0 }))
            case .acceptedCopy:
                Messages.info("vaultfile: \(finding)")
            case .mergeLeftOut:
                Messages.warning("\(finding)")
            case .untrustedCopy(let path, let why):
                Messages.warning("\(finding); a write to it, exec and inject are refused (exit 7)")
                Messages.info("vaultfile: hint: " + ErrorReport.trustHint(path: path, why: why))
            case .untrustedTaken:
                Messages.warning("\(finding)")
            case .pinnedOnFirstOpen:
                Messages.note("\(finding)")
            case .noLongerPostQuantum(let loss):
                guard quantumNoticeShown.withLock({ shown in defer { shown = true }; return !shown }) else { continue }
                Messages.warning("\(finding)")
                Messages.info("vaultfile: hint: " + Self.quantumHint(loss))
            case .classicalAccepted:
                let listing = classicalAcceptance.withLock { acceptance in
                    acceptance.accepted = true
                    return acceptance.asker == .listing
                }
                if listing { Messages.info("vaultfile: \(finding)") }
            }
        }
        if let problem = check.problem { StateWarning.show(problem) }
    }

    /// What to do about a vault that stopped being post-quantum (`QuantumLoss`).
    static func quantumHint(_ loss: QuantumLoss) -> String {
        let accept = "accept it on this machine with 'vaultfile slot list --accept-classical'; until then every command on it repeats this warning"
        if loss.previousVaultID != nil {
            return "'vaultfile slot list' shows its slots and who added them; if you put this vault there, \(accept)"
        }
        if loss.classical.isEmpty {
            return "add a post-quantum slot with 'vaultfile slot add recipient age1pq1…' (an identity from 'vaultfile keygen --pq'), or \(accept)"
        }
        let ids = loss.classical.map { String($0.index) }.joined(separator: " ")
        let one = loss.classical.count == 1
        return "'vaultfile slot list' shows who holds \(one ? "that slot and when it was" : "those slots and when each was") added; "
            + "remove \(one ? "it" : "them") with 'vaultfile slot rm \(ids)' (which rotates the file key), or \(accept)"
    }

    /// Whether the weak-KDF warning is due for `vaultID`: never with `VAULTFILE_QUIET_WEAK_KDF=1`,
    /// else once a day per vault, remembered in the state folder (every time when it cannot be).
    static func weakKDFWarningIsDue(_ vaultID: [UInt8]) -> Bool {
        guard environment("VAULTFILE_QUIET_WEAK_KDF") != "1" else { return false }
        guard let state = StateFolder.current else {
            StateWarning.show(StateWarning.noFolder)
            return true
        }
        if let unsafe = state.ownershipProblem() {
            StateWarning.show(unsafe)
            return true
        }
        do {
            return try state.claimNotice("weak-kdf", vault: vaultID, every: 86_400)
        } catch {
            StateWarning.show(error)
            return true
        }
    }
}
