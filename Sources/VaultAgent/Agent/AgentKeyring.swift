import SecureMemory
import VaultFormat
import VaultModel

// MARK: - The keys an agent holds

/// The file keys the agent holds, by vault id, with each vault's idle timeout (docs/AGENT.md).
///
/// A vault id keeps every key it is handed: `passwd` rotates the key but keeps the id, and old
/// copies of the vault (in git history) still need the old key. A request names no key: it sends
/// a vault's header, and gets the one key of that id under which the header MAC verifies, or none;
/// the other keys of the id are never handed out. Keys live in guarded memory (`SecureBytes`) and
/// are wiped when forgotten (`lock`, idle expiry, `stop`, a signal).
///
/// A vault held already changes only for a hand-over that carries one of its keys (compared in
/// constant time): a header whose MAC verifies under the key sent proves nothing, since anyone can
/// make one for any vault id. A change that weakens what is held (another or no confirm command, a
/// longer timeout, one more key) waits for the vault's confirm command to approve it.
///
/// Times are seconds on a clock the caller chooses (the agent uses CLOCK_BOOTTIME, which keeps
/// counting while the machine sleeps, so a suspended laptop's idle time counts).
public struct AgentKeyring: Sendable {
    /// The most vaults held at once.
    public static let maxVaults = 256
    /// The most keys held for one vault id.
    public static let maxKeysPerVault = 64

    /// Why a key was not taken.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The vault id is not 16 bytes or the key not 32.
        case malformed(String)
        /// `maxVaults` vaults are held already.
        case tooManyVaults
        /// `maxKeysPerVault` keys of this vault are held already.
        case tooManyKeys
        /// The vault is held and the hand-over carries none of its keys.
        case unproven
        /// The delegation handed over does not verify for the vault id, the key handed over and
        /// the delegated key (a delegation for another file key, or a forged one).
        case delegationInvalid
        /// Serving these ssh keys would list more than `maxSSHKeys` keys, or more than one
        /// IDENTITIES_ANSWER holds.
        case tooManySSHKeys

        public var description: String {
            switch self {
            case .malformed(let why): return why
            case .tooManyVaults: return "the agent holds keys of \(AgentKeyring.maxVaults) vaults already; lock one first"
            case .tooManyKeys: return "the agent holds \(AgentKeyring.maxKeysPerVault) keys of this vault already; lock it first"
            case .unproven: return "the agent holds this vault under other keys, and the request carries none of them; nothing changed"
            case .delegationInvalid: return "the delegation does not verify for this vault's key; nothing changed"
            case .tooManySSHKeys:
                return "the agent would serve more than \(AgentKeyring.maxSSHKeys) ssh keys, or more than one answer to ssh holds; serve fewer (--ssh-keys PREFIX)"
            }
        }
    }

    /// What `add` did.
    public enum AddOutcome: Equatable, Sendable {
        /// The key is held (it may have been held already).
        case held
        /// `onlyIfHeld` was set and no key of the vault is held: nothing was added.
        case notHeld
        /// The hand-over weakens what is held: nothing changed yet. Run `command` (the vault's
        /// confirm command, with `VAULTFILE_CONFIRM_ACTION=change-settings`) and, if it approves,
        /// call `add` again with `approvedBy: command`.
        case needsApproval(command: String)
    }

    /// The key that verifies a header, and what must happen before it is handed out.
    public struct Match: Sendable {
        /// The vault id of the header.
        public let vaultID: [UInt8]
        /// The key.
        public let fileKey: SecureBytes
        /// The command to run (and to succeed) before the hand-out; nil: none.
        public let confirmCommand: String?
    }

    /// One vault held: its keys, settings, and the delegations beside its keys (by file key id).
    struct Held {
        var keys: [SecureBytes]
        var path: String
        var timeoutSeconds: UInt32
        var lastUsed: Double
        var confirmCommand: String
        /// At most one per key held (so at most `maxKeysPerVault`), keyed by the key's file key id.
        var delegations: [[UInt8]: AgentDelegationHandOver] = [:]
        /// The file key ids whose delegation expired and was wiped: a sign request under one is
        /// refused as `expired`, so that `noDelegation` says the key came from a slot that cannot sign.
        var expiredDelegations: Set<[UInt8]> = []
        /// The ssh keys served from this vault (`unlock --ssh`), by entry name: gone with the vault.
        var sshKeys: [SSHServedKey] = []

        func expiry() -> Double? { timeoutSeconds == 0 ? nil : lastUsed + Double(timeoutSeconds) }
    }

    /// The vaults held, by vault id (internal: the delegation extension reads it).
    var held: [[UInt8]: Held] = [:]

    /// An empty keyring.
    public init() {}

    /// Whether no key is held.
    public var isEmpty: Bool { held.isEmpty }

    /// How many keys are held, over every vault.
    public var keyCount: Int { held.values.reduce(0) { $0 + $1.keys.count } }

    // MARK: Adding

    /// Keeps `handOver`'s key beside the vault's other keys (a key held already is not added
    /// twice), and sets the vault's timeout, path and confirm command; the idle clock restarts.
    /// With `onlyIfHeld` the key is added only to a vault held already, whose timeout and confirm
    /// command stay as they are.
    ///
    /// A vault held already: refused (`unproven`, nothing changes) unless `handOver`'s file key or
    /// held key is one of its keys; and when the change weakens it and the vault has a confirm
    /// command, nothing changes until that command approved it (`needsApproval`, then `approvedBy`).
    @discardableResult
    public mutating func add(_ handOver: AgentKeyHandOver, now: Double, approvedBy approval: String? = nil) throws(Refusal) -> AddOutcome {
        guard handOver.vaultID.count == AgentProtocol.vaultIDLength else { throw .malformed("a vault id is 16 bytes") }
        guard handOver.fileKey.count == AgentProtocol.fileKeyLength else { throw .malformed("a file key is 32 bytes") }
        guard handOver.heldKey.map({ $0.count == AgentProtocol.fileKeyLength }) ?? true else { throw .malformed("a held key is 32 bytes") }
        // Checked before anything changes: a delegation is kept only for the key it names.
        let fileKeyID = HeaderPrefix.fileKeyID(of: handOver.fileKey)
        if let delegation = handOver.delegation, !delegation.verifies(vaultID: handOver.vaultID, fileKeyID: fileKeyID) {
            throw .delegationInvalid
        }
        expire(now: now)
        guard var vault = held[handOver.vaultID] else {
            if handOver.onlyIfHeld { return .notHeld }
            guard held.count < Self.maxVaults else { throw .tooManyVaults }
            var vault = Held(keys: [handOver.fileKey], path: handOver.path, timeoutSeconds: handOver.timeoutSeconds,
                             lastUsed: now, confirmCommand: handOver.confirmCommand)
            vault.delegations[fileKeyID] = handOver.delegation
            held[handOver.vaultID] = vault
            return .held
        }
        guard Self.holdsAny(vault.keys, of: [handOver.fileKey] + (handOver.heldKey.map { [$0] } ?? [])) else { throw .unproven }
        let addsKey = !Self.holdsAny(vault.keys, of: [handOver.fileKey])
        if !vault.confirmCommand.isEmpty, approval != vault.confirmCommand, addsKey || Self.weakens(vault, handOver) {
            return .needsApproval(command: vault.confirmCommand)
        }
        if addsKey {
            guard vault.keys.count < Self.maxKeysPerVault else { throw .tooManyKeys }
            vault.keys.append(handOver.fileKey)
        }
        // A new delegation replaces the one held for this key; none leaves it as it is (`passwd`
        // with a slot that cannot sign, or an unlock of it, takes no signing power away).
        if let delegation = handOver.delegation { vault.delegations[fileKeyID] = delegation }
        vault.path = handOver.path
        vault.lastUsed = now
        if !handOver.onlyIfHeld {
            vault.timeoutSeconds = handOver.timeoutSeconds
            vault.confirmCommand = handOver.confirmCommand
        }
        held[handOver.vaultID] = vault
        return .held
    }

    /// Whether any of `candidates` is one of `keys`: every pair compared in constant time, with no
    /// early exit (the time says nothing of which key matched, if any).
    private static func holdsAny(_ keys: [SecureBytes], of candidates: [SecureBytes]) -> Bool {
        var found = false
        for key in keys {
            for candidate in candidates { found = key.constantTimeEquals(candidate) || found }
        }
        return found
    }

    /// Whether `handOver` (not only-if-held) changes `vault`'s confirm command or lengthens its
    /// timeout (0, until `lock`, is the longest).
    private static func weakens(_ vault: Held, _ handOver: AgentKeyHandOver) -> Bool {
        guard !handOver.onlyIfHeld else { return false }
        let longer = vault.timeoutSeconds != 0 && (handOver.timeoutSeconds == 0 || handOver.timeoutSeconds > vault.timeoutSeconds)
        return longer || handOver.confirmCommand != vault.confirmCommand
    }

    // MARK: Finding

    /// The key of `headerBytes`' vault id under which its MAC verifies, or nil. Throws when the
    /// bytes are not exactly one well-formed vault header. A vault idle past its timeout counts as
    /// forgotten. Does not count as use: call `handedOut` when the key is actually sent.
    public func match(header headerBytes: [UInt8], now: Double) throws(VaultError) -> Match? {
        let (header, length) = try VaultHeader.parse(headerBytes, path: "the header sent to the agent")
        guard length == headerBytes.count else {
            throw .headerDamaged("\(headerBytes.count - length) bytes follow the header sent to the agent")
        }
        guard let vault = held[header.vaultID], vault.expiry().map({ $0 > now }) ?? true,
              let key = vault.keys.first(where: { VaultCodec.verifies(header, fileKey: $0) }) else { return nil }
        return Match(vaultID: header.vaultID, fileKey: key, confirmCommand: vault.confirmCommand.isEmpty ? nil : vault.confirmCommand)
    }

    /// Records that `match`'s key is being handed out for `path`: the idle clock restarts and
    /// the path is remembered. False when the key was forgotten in the meantime (then it must not be sent).
    public mutating func handedOut(_ match: Match, path: String, now: Double) -> Bool {
        expire(now: now)
        guard var vault = held[match.vaultID], vault.keys.contains(where: { $0 === match.fileKey }) else { return false }
        vault.lastUsed = now
        vault.path = path
        held[match.vaultID] = vault
        return true
    }

    // MARK: Forgetting

    /// Forgets (and so wipes) every key of `vaultID`; returns 1 if any was held, else 0.
    @discardableResult
    public mutating func forget(vaultID: [UInt8]) -> Int {
        held.removeValue(forKey: vaultID) == nil ? 0 : 1
    }

    /// Forgets every key; returns how many vaults were held.
    @discardableResult
    public mutating func forgetAll() -> Int {
        defer { held.removeAll() }
        return held.count
    }

    /// Forgets the vaults idle for their whole timeout; returns how many.
    @discardableResult
    public mutating func expire(now: Double) -> Int {
        let expired = held.filter { $0.value.expiry().map { $0 <= now } ?? false }.map(\.key)
        for vaultID in expired { held.removeValue(forKey: vaultID) }
        expireSSHKeys(now: now)
        return expired.count
    }

    /// When the next vault expires, if any has a timeout.
    public var nextExpiry: Double? { (held.values.compactMap { $0.expiry() } + [nextSSHExpiry].compactMap { $0 }).min() }

    // MARK: Status

    /// The vaults held, ordered by path then id: never a key. `signsUntil` is the latest expiry of
    /// the vault's delegations still valid at `wallClock` (seconds since 1970).
    public func status(now: Double, wallClock: UInt64 = 0) -> [AgentStatus.Vault] {
        held.map { vaultID, vault in
            let left = vault.expiry().map { max(0, ($0 - now).rounded(.up)) } ?? 0
            return AgentStatus.Vault(vaultID: vaultID, keyCount: UInt16(vault.keys.count), timeoutSeconds: vault.timeoutSeconds,
                                     idleSecondsLeft: UInt32(min(left, Double(UInt32.max))), path: vault.path,
                                     confirms: !vault.confirmCommand.isEmpty,
                                     signsUntil: vault.delegations.values.map(\.delegation.expiry).filter { $0 > wallClock }.max() ?? 0)
        }
        .sorted { $0.path != $1.path ? $0.path < $1.path : $0.vaultID.lexicographicallyPrecedes($1.vaultID) }
    }
}
