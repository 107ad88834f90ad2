import SecureMemory

// MARK: - Errors of ssh keys kept in the vault

/// Why an OpenSSH private key (an entry made with `set --ssh-key`, a key file, a generated key)
/// is refused, or why a signature was not made. Messages name the key's source and never quote
/// a byte of a private key.
public enum SSHKeyError: CategorizedError, Equatable {
    /// The key file is damaged or hostile: not an OpenSSH key, truncated, numbers that disagree,
    /// a public half that is not the private key's, a point off the curve, bad padding (exit 4).
    case damaged(String)
    /// A well-formed key of a kind vaultfile does not keep: DSA, a FIDO (sk-) key, a certificate,
    /// an RSA size outside 2,048…8,192 bits, a cipher or KDF other than OpenSSH's (exit 4).
    case unsupported(String)
    /// A protected key asks for more bcrypt-pbkdf rounds than vaultfile runs (exit 6).
    case workOverCap(source: String, rounds: UInt32, limit: UInt32)
    /// No passphrase given (`tries` of them) decrypts the protected key from `source` (exit 3).
    case passphraseWrong(source: String, tries: Int)
    /// A signature that is not made: flags this key does not know, SHA-1 not allowed, an
    /// algorithm of another key type.
    case signingRefused(String)
    /// A key asked of the generator that it does not make (a size outside the bounds).
    case invalidRequest(String)
    /// libcrypto or libsodium failed where it should not (out of memory).
    case cryptoFailure(String)

    /// What happened, with the key's source; never a secret.
    public var description: String {
        switch self {
        case .damaged(let why), .unsupported(let why), .signingRefused(let why), .invalidRequest(let why): return why
        case .workOverCap(let source, let rounds, let limit):
            return "\(source): the key asks for \(rounds) bcrypt-pbkdf rounds; vaultfile runs at most \(limit)"
        case .cryptoFailure(let what): return "\(what) failed in the crypto library"
        case .passphraseWrong(let source, let tries):
            return "the passphrase does not decrypt the ssh key of \(source)" + (tries > 1 ? " (\(tries) tries)" : "") + "; nothing was stored"
        }
    }

    /// The category the command line turns into an exit status.
    public var category: ErrorCategory {
        switch self {
        case .damaged: return .damaged
        case .unsupported: return .unsupported
        case .workOverCap: return .overLimit
        case .passphraseWrong: return .wrongPassword
        case .signingRefused: return .refused
        case .invalidRequest: return .invalidArgument
        case .cryptoFailure: return .internalFailure
        }
    }
}
