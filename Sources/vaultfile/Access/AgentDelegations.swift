import SecureMemory
import VaultAgent
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Delegations handed to the agent

/// The delegations a command hands the agent with a signed vault's file key (docs/AGENT.md
/// "Delegations"): a fresh Ed25519 key, which the slot that opened the vault signs for this file
/// key until an expiry. The slot's own secret never leaves the command.
enum AgentDelegations {
    /// How long a delegation lasts when the vault is kept until `lock` (`--timeout 0`): 30 days.
    static let untilLockLifetime: UInt64 = 30 * 24 * 3600
    /// The least a delegation lasts: 12 hours, a working day. The idle timeout slides with each use
    /// and wipes the delegation with the key when it passes; the expiry, signed into the delegation,
    /// cannot slide, so one as short as the timeout stopped writes after 15 minutes of steady use.
    static let leastLifetime: UInt64 = 12 * 3600

    /// Seconds since 1970.
    static func now() -> UInt64 { UInt64(max(0, time(nil))) }

    /// The expiry of a delegation made now for a vault unlocked with `timeoutSeconds` (0: until
    /// `lock`): 30 days until `lock`, else the longer of the timeout and `leastLifetime`. The agent
    /// wipes it earlier with its key (`lock`, the idle timeout, `stop`).
    static func expiry(timeoutSeconds: UInt32, now: UInt64 = now()) -> UInt64 {
        now + (timeoutSeconds == 0 ? untilLockLifetime : max(UInt64(timeoutSeconds), leastLifetime))
    }

    /// A fresh key pair and `signer`'s delegation of seals under `fileKey` of `vaultID` to it.
    static func make(for vaultID: [UInt8], fileKey: SecureBytes, signer: SlotSealSigner, timeoutSeconds: UInt32) throws -> AgentDelegationHandOver {
        let key = DelegatedSigningKey()
        let delegation = try signer.delegate(vaultID: vaultID, fileKeyID: VaultCodec.fileKeyID(of: fileKey), delegatedKey: key.publicKey,
                                             expiry: expiry(timeoutSeconds: timeoutSeconds))
        return AgentDelegationHandOver(key: key, delegation: delegation, delegatingKey: signer.key)
    }

    /// What the agent says of `vaultID`, if it holds it (nil: no agent, or not held).
    static func held(_ vaultID: [UInt8]) -> AgentStatus.Vault? {
        guard case .status(let status)? = try? AgentClient().send(.status) else { return nil }
        return status.vaults.first { $0.vaultID == vaultID }
    }

    /// The idle timeout the agent holds `vaultID` with (0 when it is kept until `lock`, or unknown).
    static func heldTimeout(of vaultID: [UInt8]) -> UInt32 {
        held(vaultID)?.timeoutSeconds ?? 0
    }
}
