import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Advice on a new password

/// The warning `init` and `passwd` give when a new password looks weak. It never refuses, and it
/// never shows the password, only the estimate (PasswordStrength, documented in man/vaultfile.1).
enum PasswordAdvice {
    /// Warns on stderr when `password` is estimated below `PasswordStrength.recommendedBits`, if a
    /// person chose it: it was `typed` at the prompt, or stderr is a terminal. A script that hands
    /// over a password from a file keeps a clean stderr.
    static func warnIfWeak(_ password: SecureBytes, typed: Bool) {
        guard typed || Stream.isTerminal(STDERR_FILENO) else { return }
        let bits = password.withUnsafeBytes { PasswordStrength.estimatedBits($0) }
        guard bits < PasswordStrength.recommendedBits else { return }
        Messages.warning("the new password looks weak: about \(Int(bits)) bits by vaultfile's estimate, "
            + "below the \(Int(PasswordStrength.recommendedBits)) advised; "
            + "a passphrase from 'vaultfile generate --words 5' (about 64 bits) is stronger")
    }
}

extension PasswordSource {
    /// Whether the password is typed at the terminal's prompt.
    var isPrompt: Bool {
        if case .prompt = self { return true }
        return false
    }
}
