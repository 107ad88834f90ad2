import SecureMemory
import VaultAgent
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Signing seals under a delegation

extension AgentServer {
    /// The signature block of a seal of `headerPrefix` and `payloadHash`, after the vault's confirm
    /// command (`VAULTFILE_CONFIRM_ACTION=sign`) approves; or why not. The agent recomputes the
    /// header hash from the bytes it is sent and signs nothing but a seal transcript of a header
    /// whose metadata a key it holds opens, under an unexpired delegation for that key.
    func sign(path: String, headerPrefix: [UInt8], payloadHash: [UInt8], fd: Int32, clientPID: Int32) -> AgentResponse {
        let match: AgentKeyring.SigningMatch
        do {
            match = try keyring.withLock { keyring throws(AgentSignFailure) in
                try keyring.signer(forPrefix: headerPrefix, now: Self.now(), wallClock: Self.wallClock())
            }
        } catch {
            switch error {
            case .refused(let refusal): return .cannotSign(refusal)
            case .damaged(let why): return .failed(why)
            }
        }
        if let command = match.confirmCommand {
            UnixSocket.send(AgentResponse.confirming.frame(), to: fd, deadline: Self.answerDeadline())
            guard AgentConfirmation.approves(command: command, action: .sign, vaultID: match.vaultID, path: path, clientPID: clientPID)
            else { return .denied }
        }
        // Locked, expired or replaced while the command ran: then it does not sign.
        guard keyring.withLock({ $0.signed(match, path: path, now: Self.now(), wallClock: Self.wallClock()) }) else {
            return .cannotSign(.notHeld)
        }
        return .signature(match.signatureBlock(payloadHash: payloadHash))
    }

    /// Seconds since 1970 (`CLOCK_REALTIME`): a delegation's expiry is a date, as its signer wrote it.
    static func wallClock() -> UInt64 {
        UInt64(max(0, time(nil)))
    }
}
