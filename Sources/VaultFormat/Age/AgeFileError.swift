import KDF
import SecureMemory

// MARK: - Errors of age files

/// Everything that can go wrong reading or writing an age v1 file (age-encryption.org/v1).
///
/// Messages say what is wrong and where (a line of the header, a chunk of the payload), never a
/// key, a passphrase or a byte of the plaintext. A file that fails is refused whole: nothing of
/// its plaintext is returned.
public enum AgeFileError: CategorizedError, Equatable {
    /// The bytes are neither an age file nor an armored one (no `age-encryption.org/` line).
    case notAnAgeFile
    /// The file is an age file of a version other than v1 (the version text, cut short).
    case unsupportedVersion(String)
    /// The header breaks the v1 grammar; `line` is 1-based.
    case headerMalformed(line: Int, why: String)
    /// The header is longer than `limit` bytes, or holds more than the stanza limit.
    case headerTooLarge(limit: Int)
    /// A stanza addressed to a known kind has the wrong arguments or body.
    case stanzaMalformed(kind: String, why: String)
    /// An scrypt stanza is not the header's only stanza (age's rule: a passphrase file is
    /// authenticated by the passphrase alone).
    case scryptNotAlone
    /// The header MAC does not verify under the file key: the header was changed.
    case headerMACFailed
    /// No identity given opens any stanza; `kinds` names the stanzas' kinds, in file order.
    case noIdentityMatches(kinds: [String])
    /// The file is for a passphrase and none was given.
    case passphraseRequired
    /// The file was made for identities, and only a passphrase was given.
    case passphraseNotUsable
    /// The scrypt stanza opens with no passphrase given.
    case wrongPassphrase
    /// The scrypt work factor asks for more memory than the cap (both in bytes), refused before any work.
    case workFactorOverCap(logN: Int, asked: UInt64, cap: UInt64)
    /// libsodium's scrypt failed at work factor 2^`logN` (out of memory).
    case scryptFailed(logN: Int)
    /// The file ends before the payload's 16-byte nonce.
    case missingNonce
    /// The payload is damaged, truncated or extended at chunk `chunk` (0-based).
    case payloadDamaged(chunk: Int, why: String)
    /// The plaintext would pass `limit` bytes.
    case plaintextTooLarge(limit: Int)
    /// The ASCII armor breaks the strict PEM rules age follows.
    case armorMalformed(String)
    /// What was asked to write is not an age file (no recipient, a passphrase mixed with recipients).
    case invalidRecipients(String)
    /// An age plugin run for a recipient or an identity failed.
    case plugin(AgePluginClientError)

    public var description: String {
        switch self {
        case .notAnAgeFile: return "the file is not an age file (it does not start with age-encryption.org/ or an armor line)"
        case .unsupportedVersion(let version): return "the age file is of version '\(version)'; vaultfile reads age-encryption.org/v1"
        case .headerMalformed(let line, let why): return "the age header is malformed at line \(line): \(why)"
        case .headerTooLarge(let limit): return "the age header is larger than \(limit) bytes or holds too many stanzas"
        case .stanzaMalformed(let kind, let why): return "the age file's \(kind) stanza is malformed: \(why)"
        case .scryptNotAlone: return "the age file holds a passphrase (scrypt) stanza beside other stanzas, which age forbids"
        case .headerMACFailed: return "the age header fails authentication (its MAC): it was modified"
        case .noIdentityMatches(let kinds):
            return "no identity tried opens the age file (its stanzas: \(kinds.isEmpty ? "none" : kinds.joined(separator: ", ")))"
        case .passphraseRequired: return "the age file is encrypted with a passphrase and none was given"
        case .passphraseNotUsable: return "the age file is encrypted to recipients, not with a passphrase; a passphrase cannot open it"
        case .wrongPassphrase: return "wrong passphrase: the age file's scrypt stanza does not open with it"
        case .workFactorOverCap(let logN, let asked, let cap):
            let (askedText, capText) = ByteSize.formatDistinct(asked, cap)
            return "the age file's scrypt work factor 2^\(logN) asks for \(askedText) of memory; the limit is \(capText)"
        case .scryptFailed(let logN): return "scrypt at work factor 2^\(logN) failed (out of memory)"
        case .missingNonce: return "the age file ends before its payload's 16-byte nonce (truncated)"
        case .payloadDamaged(let chunk, let why): return "the age payload is damaged at chunk \(chunk): \(why)"
        case .plaintextTooLarge(let limit): return "the age file's contents are larger than \(limit) bytes"
        case .armorMalformed(let why): return "the age file's armor is malformed: \(why)"
        case .invalidRecipients(let why): return why
        case .plugin(let error): return error.description
        }
    }

    /// Hostile or damaged input is `damaged`; a missing or wrong secret is `wrongPassword`; caps
    /// are `overLimit`; a file of another version is `unsupported`.
    public var category: ErrorCategory {
        switch self {
        case .notAnAgeFile, .headerMalformed, .headerTooLarge, .stanzaMalformed, .scryptNotAlone, .headerMACFailed,
             .missingNonce, .payloadDamaged, .armorMalformed:
            return .damaged
        case .unsupportedVersion: return .unsupported
        case .noIdentityMatches, .passphraseRequired, .passphraseNotUsable, .wrongPassphrase: return .wrongPassword
        case .workFactorOverCap, .plaintextTooLarge: return .overLimit
        case .invalidRecipients: return .invalidArgument
        case .scryptFailed: return .internalFailure
        case .plugin(let error): return error.category
        }
    }
}
