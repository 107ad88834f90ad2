import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - recipient-v1, refused where age shows it

/// The plugin's answer to `recipient-v1` (encrypting to an `age1vaultfile1…` recipient, which
/// does not exist): age 1.1.1 does not show a plugin's standard error, so the refusal goes to the
/// client as an `error internal` after its phase 1, then `done`.
enum AgePluginRecipientRefusal {
    /// Reads the client's phase 1 (bounded like identity-v1's), answers with `message`, ends.
    /// A client that is gone or talks nonsense just ends the conversation (standard error says why).
    static func answer(_ channel: inout AgePluginChannel, message: String) {
        // Started by hand from a terminal: nobody speaks the protocol, the message above is enough.
        guard !Stream.isTerminal(STDIN_FILENO) else { return }
        do {
            channel.startPhase()
            while try channel.receive().type != "done" {}
            channel.startPhase()
            try channel.send(.internalError(message))
            try channel.send(.done)
        } catch AgePluginError.closed {
            return
        } catch {
            Messages.error("age-plugin-vaultfile: \(error.description)")
        }
    }
}
