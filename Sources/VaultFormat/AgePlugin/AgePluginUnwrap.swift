import SecureMemory

// MARK: - Trial-unwrapping the stanzas of one file

/// What an X25519-backed plugin does with the stanzas of one file: every stanza of a kind it
/// knows is checked for shape first, and a file with one malformed is refused whole, before any
/// unwrap (age-plugin.md: "MUST NOT unwrap any stanzas with the same FILE_INDEX"); then X25519
/// stanzas are tried against each identity until one opens.
///
/// Known kinds: `X25519` (one argument, 32 bytes of canonical base64, and a 32-byte body) and age
/// 1.3's `mlkem768x25519` (one argument of 1,120 bytes and a 32-byte body), which vaultfile
/// cannot open yet: a well-formed one is passed over as a stanza for someone else. Every other
/// type is ignored, as the spec requires.
public enum AgePluginUnwrap {
    /// The bytes of an `mlkem768x25519` stanza's argument: the ML-KEM-768 ciphertext (1,088) and
    /// the X25519 share (32).
    public static let mlkemShareLength = 1120

    /// What came of one file.
    public enum Outcome: Sendable {
        /// A stanza opened: the file key (16 bytes).
        case fileKey(SecureBytes)
        /// A stanza of a known kind is malformed: the file is refused and nothing was unwrapped.
        case refused
        /// No stanza is for these identities.
        case none
    }

    /// Whether every stanza of a known kind in `stanzas` has its exact shape.
    public static func isWellFormed(_ stanzas: [AgeStanza]) -> Bool {
        stanzas.allSatisfy { stanza in
            switch stanza.type {
            case "X25519": return hasShape(stanza, argumentLength: X25519.keyLength)
            case "mlkem768x25519": return hasShape(stanza, argumentLength: mlkemShareLength)
            default: return true
            }
        }
    }

    /// Whether some stanza is one these identities may open (an X25519 stanza).
    public static func hasCandidates(_ stanzas: [AgeStanza]) -> Bool { stanzas.contains { $0.type == "X25519" } }

    /// The file key of the file of `stanzas` under one of `identities`, or why not. A low-order
    /// share (which age refuses) refuses the file as a malformed stanza does.
    public static func unwrap(_ stanzas: [AgeStanza], with identities: [AgeIdentity]) -> Outcome {
        guard isWellFormed(stanzas) else { return .refused }
        for stanza in stanzas where stanza.type == "X25519" {
            for identity in identities {
                do {
                    if let key = try identity.unwrap(stanza) { return .fileKey(key) }
                } catch {
                    return .refused
                }
            }
        }
        return .none
    }

    /// One argument of canonical base64 decoding to `argumentLength` bytes, and a body of a
    /// wrapped 16-byte key (32 bytes), as age.md requires of both kinds.
    private static func hasShape(_ stanza: AgeStanza, argumentLength: Int) -> Bool {
        guard stanza.arguments.count == 1, stanza.body.count == AgeCrypto.wrappedKeyLength,
              stanza.arguments[0].utf8.count == (argumentLength * 4 + 2) / 3,
              let decoded = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8Slice) else { return false }
        return decoded.count == argumentLength
    }
}
