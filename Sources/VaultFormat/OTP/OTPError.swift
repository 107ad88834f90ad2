import SecureMemory

// MARK: - Errors of one-time passwords

/// Why an `otpauth://` URI or a TOTP request was refused.
///
/// Messages name the parameter and what is wrong with it; they never contain the secret.
public enum OTPError: CategorizedError, Equatable {
    /// The text is not an `otpauth://totp/…` URI (the reason says which part is wrong).
    case malformedURI(String)
    /// The `secret` parameter is not strict Base32 (RFC 4648), or decodes to too few or too many bytes.
    case invalidSecret(String)
    /// A parameter is outside what vaultfile supports (algorithm, digits, period, type).
    case unsupportedParameter(String)
    /// The entry (`NAME`) holds no TOTP URI: no `totp` field, no `otp` field, no URI as its value.
    case noTOTP(String)
    /// The time asked for cannot give a code (before 1970).
    case invalidTime(Int64)

    public var description: String {
        switch self {
        case .malformedURI(let why): return "not a valid otpauth URI: \(why)"
        case .invalidSecret(let why): return "the TOTP secret is invalid: \(why)"
        case .unsupportedParameter(let why): return "unsupported TOTP parameter: \(why)"
        case .noTOTP(let name): return "the entry '\(name)' holds no TOTP URI (no 'totp' or 'otp' field, and its value is not an otpauth:// URI)"
        case .invalidTime(let time): return "no TOTP code for time \(time): it must be 0 or later (seconds since 1970)"
        }
    }

    /// A missing URI is not found; everything else is bad input.
    public var category: ErrorCategory {
        switch self {
        case .noTOTP: return .notFound
        case .invalidTime: return .invalidArgument
        case .malformedURI, .invalidSecret, .unsupportedParameter: return .invalidInput
        }
    }
}
