import SecureMemory
import VaultFormat
import VaultModel

// MARK: - Signing seals under a delegation

/// Why a `sign` request was not served: a refusal the client explains, or a header prefix that
/// does not parse (answered `failed` with its description).
public enum AgentSignFailure: Error, Equatable {
    /// The agent will not sign it (`cannot sign`).
    case refused(AgentSignRefusal)
    /// The bytes sent are not the prefix of a signed header.
    case damaged(String)
}

extension AgentKeyring {
    /// What the agent needs to sign one seal: found by `signer(forPrefix:now:wallClock:)`, signed by
    /// `signatureBlock(payloadHash:)` once the vault's confirm command (if any) approved it.
    public struct SigningMatch: Sendable {
        /// The vault id of the header.
        public let vaultID: [UInt8]
        /// The id of the file key that opens its metadata block.
        public let fileKeyID: [UInt8]
        /// The vault's confirm command; nil: none.
        public let confirmCommand: String?
        /// The delegation found for that key.
        let delegated: AgentDelegationHandOver
        /// The delegating slot's position and type in this header.
        public let signerPosition: Int
        let signerType: UInt8
        let generation: UInt64
        let headerPrefix: [UInt8]

        /// The signature block: scheme 3, the delegating slot's position and type, the delegated
        /// public key, the delegation, and the delegated key's signature over the seal transcript
        /// (which hashes the header prefix the agent was sent itself).
        public func signatureBlock(payloadHash: [UInt8]) -> SealSignatureBlock {
            let key = delegated.key.publicKey
            let transcript = SealTranscript.seal(scheme: .delegated, vaultID: vaultID, generation: generation, fileKeyID: fileKeyID,
                                                 signerPosition: signerPosition, signerType: signerType, signerKey: key,
                                                 headerPrefix: headerPrefix, payloadHash: payloadHash)
            return SealSignatureBlock(scheme: .delegated, signerPosition: signerPosition, signerType: signerType, signerKey: key,
                                      delegation: delegated.delegation, signature: delegated.key.sign(transcript))
        }
    }

    /// The delegation that may sign a seal of `prefix` (a signed header up to its signature block):
    /// among the keys held for its vault id, the one under which its metadata block opens, with an
    /// unexpired delegation (at `wallClock`, seconds since 1970) whose delegating key holds a slot
    /// of this header. Does not count as use: call `signed` once the signature is made.
    public func signer(forPrefix prefix: [UInt8], now: Double, wallClock: UInt64) throws(AgentSignFailure) -> SigningMatch {
        let parsed: HeaderPrefix
        do {
            parsed = try HeaderPrefix(prefix)
        } catch {
            throw .damaged(error.description)
        }
        guard let vault = held[parsed.vaultID], vault.expiry().map({ $0 > now }) ?? true else { throw .refused(.notHeld) }
        for key in vault.keys {
            let entries: [SlotMetadata]?
            do {
                entries = try parsed.openMetadata(fileKey: key)
            } catch {
                throw .damaged(error.description)
            }
            guard let entries else { continue }
            let fileKeyID = HeaderPrefix.fileKeyID(of: key)
            guard let delegated = vault.delegations[fileKeyID] else {
                throw .refused(vault.expiredDelegations.contains(fileKeyID) ? .expired : .noDelegation)
            }
            guard delegated.delegation.expiry > wallClock else { throw .refused(.expired) }
            let signing = delegated.delegatingKey
            guard let position = entries.firstIndex(where: { $0.type == signing.type && $0.publicKey == signing.bytes }) else {
                throw .refused(.delegatingSlotGone)
            }
            return SigningMatch(vaultID: parsed.vaultID, fileKeyID: fileKeyID,
                                confirmCommand: vault.confirmCommand.isEmpty ? nil : vault.confirmCommand, delegated: delegated,
                                signerPosition: position, signerType: signing.type, generation: parsed.generation, headerPrefix: prefix)
        }
        throw .refused(.notHeld)
    }

    /// Records that `match` signs now: false when its delegation was forgotten or replaced in the
    /// meantime (the vault locked or expired while the confirm command ran; then it must not sign).
    /// The vault's idle clock restarts and `path` is remembered.
    public mutating func signed(_ match: SigningMatch, path: String, now: Double, wallClock: UInt64) -> Bool {
        expire(now: now)
        guard var vault = held[match.vaultID], let current = vault.delegations[match.fileKeyID],
              current.key.seed === match.delegated.key.seed, current.delegation.expiry > wallClock else { return false }
        vault.lastUsed = now
        vault.path = path
        held[match.vaultID] = vault
        return true
    }

    /// Forgets (and so wipes) every delegation expired at `wallClock`; returns how many.
    @discardableResult
    public mutating func expireDelegations(wallClock: UInt64) -> Int {
        var count = 0
        for (vaultID, vault) in held {
            let expired = vault.delegations.filter { $0.value.delegation.expiry <= wallClock }.map(\.key)
            guard !expired.isEmpty else { continue }
            count += expired.count
            held[vaultID]?.delegations = vault.delegations.filter { $0.value.delegation.expiry > wallClock }
            held[vaultID]?.expiredDelegations.formUnion(expired)
        }
        return count
    }

    /// How many delegations are held, over every vault.
    public var delegationCount: Int { held.values.reduce(0) { $0 + $1.delegations.count } }
}
