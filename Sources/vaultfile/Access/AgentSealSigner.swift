import SecureMemory
import VaultAgent
import VaultFormat

// MARK: - Seals signed by the agent

/// Signs the seal of a signed vault opened with the agent's key (no slot's secret in hand): asks
/// the agent to sign under the delegation `unlock` gave it (docs/AGENT.md "sign"). The answer is
/// checked before it is used: the seal signature under the delegated key over this very seal, and
/// the delegation under the key of the slot it names, for this file key; so a wrong answer fails
/// here, with nothing written, rather than as a damaged vault.
struct AgentSealSigner: SealSigner {
    /// The vault's path as the command named it (sent to the agent for its confirm command).
    let vaultPath: String

    /// The last refusal of this process's agent signer: the library reports a signer's failure as
    /// `VaultError.sealSigningFailed` with its text, and `ErrorReport` shows this typed error in its
    /// place (its own message, hint and exit status).
    static let lastFailure = LockedValue<CLIError?>(nil)

    /// The signature block the agent makes for `request`; throws `agentCannotSign`,
    /// `agentSignDenied` or `agentFailed`, and nothing is written.
    func signSeal(_ request: SealSigningRequest) throws -> SealSignatureBlock {
        do {
            return try sign(request)
        } catch let error as CLIError {
            Self.lastFailure.withLock { $0 = error }
            throw error
        }
    }

    private func sign(_ request: SealSigningRequest) throws -> SealSignatureBlock {
        let client = AgentClient()
        let response = try client.send(.sign(path: absolutePath(vaultPath), headerPrefix: request.headerPrefix,
                                             payloadHash: request.payloadHash))
        switch response {
        case .signature(let block)?:
            guard Self.verifies(block, for: request) else {
                throw CLIError.agentFailed("the agent at \(client.socket.path) answered a signature that does not verify for this seal; nothing was written")
            }
            return block
        case .cannotSign(let reason)?: throw CLIError.agentCannotSign(path: vaultPath, reason: reason)
        case .denied?: throw CLIError.agentSignDenied(path: vaultPath)
        case .failed(let why)?: throw CLIError.agentFailed("the agent did not sign the write to \(vaultPath): \(why); nothing was written")
        case nil: throw CLIError.agentCannotSign(path: vaultPath, reason: .notHeld)
        case .done?, .key?, .noKey?, .forgotten?, .status?, .confirming?, .unproven?:
            throw CLIError.agentFailed("the agent at \(client.socket.path) answered a sign request with another kind of answer")
        }
    }

    /// Whether `block` is a scheme-3 signature over `request`'s seal by its delegated key, under a
    /// delegation that the key of the slot at its position signed for `request`'s file key.
    static func verifies(_ block: SealSignatureBlock, for request: SealSigningRequest) -> Bool {
        guard block.scheme == .delegated, let delegation = block.delegation, request.slots.indices.contains(block.signerPosition),
              let prefix = try? HeaderPrefix(request.headerPrefix) else { return false }
        let slot = request.slots[block.signerPosition]
        guard slot.type == block.signerType, SealScheme.direct(forSlotType: slot.type) == delegation.delegatingScheme else { return false }
        let delegated = SealTranscript.delegation(vaultID: prefix.vaultID, fileKeyID: request.fileKeyID, delegatedKey: block.signerKey,
                                                  expiry: delegation.expiry)
        guard SealVerification.verifies(signature: delegation.signature, message: delegated,
                                        by: MemberKey(type: slot.type, bytes: slot.publicKey)) else { return false }
        let seal = SealTranscript.seal(scheme: .delegated, vaultID: prefix.vaultID, generation: prefix.generation, fileKeyID: request.fileKeyID,
                                       signerPosition: block.signerPosition, signerType: block.signerType, signerKey: block.signerKey,
                                       headerPrefix: request.headerPrefix, payloadHash: request.payloadHash)
        return SealVerification.ed25519Verifies(signature: block.signature, message: seal, publicKey: block.signerKey)
    }
}
