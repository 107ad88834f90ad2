import SecureMemory
import VaultFormat
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Advice on a new password

/// The warning `init`, `passwd` and `slot add password` give when a new password looks weak. It
/// never refuses, and it never shows the password, only the estimate (PasswordStrength, the one
/// `audit` uses, documented in man/vaultfile.1).
enum PasswordAdvice {
    /// The variable that silences the warning for a password not typed at the prompt.
    static let quietVariable = "VAULTFILE_QUIET_WEAK_PASSWORD"

    /// Warns on stderr when `password` is estimated below `PasswordStrength.recommendedBits`: always
    /// when it was `typed` at the prompt, and for a password from a file, a descriptor or a command
    /// unless VAULTFILE_QUIET_WEAK_PASSWORD=1 (which the warning names), so that a script that
    /// means its password can keep a clean stderr.
    static func warnIfWeak(_ password: SecureBytes, typed: Bool) {
        guard let text = warning(for: password, typed: typed, quiet: getenv(quietVariable).map { String(cString: $0) } == "1") else { return }
        Messages.warning(text)
    }

    /// The warning for `password`, or nil when none is due (strong enough, or `quiet` and not `typed`).
    static func warning(for password: SecureBytes, typed: Bool, quiet: Bool) -> String? {
        guard typed || !quiet else { return nil }
        let estimate = password.withUnsafeBytes { PasswordStrength.estimate($0) }
        guard estimate.bits < PasswordStrength.recommendedBits else { return nil }
        let patterns = estimate.patterns.isEmpty ? "" : " (" + estimate.patterns.map(\.rawValue).joined(separator: ", ") + ")"
        var text = "the new password looks weak: about \(Int(estimate.bits)) bits by vaultfile's estimate\(patterns), "
            + "below the \(Int(PasswordStrength.recommendedBits)) advised; "
            + "a passphrase from 'vaultfile generate --words 5' (about 64 bits) is stronger"
        if !typed { text += "; \(quietVariable)=1 silences this warning for passwords not typed at the prompt" }
        return text
    }
}

extension PasswordSource {
    /// Whether the password is typed at the terminal's prompt.
    var isPrompt: Bool {
        if case .prompt = self { return true }
        return false
    }
}
