// MARK: - Why a copy is not trusted as written by the vault's members

/// Why this machine does not trust a copy of a vault as written by its members (docs/SECURITY.md,
/// "The members a machine trusts"; the judgement is `MemberTrust`'s, in the state folder). Declared
/// here, beside `VaultError`, whose `untrustedCopy` carries it. A copy not trusted is read with a
/// warning, written never (exit 7), handed to no program (`exec`, `inject`), and records nothing on
/// this machine, until `vaultfile trust` pins it or `--allow-untrusted` takes it for one command.
/// Fingerprints are the ones `vaultfile slot list` shows (`x25519:…`, `age1…`, `SHA256:…`).
public enum TrustFinding: Equatable, Sendable, CustomStringConvertible {
    /// The seal's signer (`fingerprint`) is neither pinned here nor traceable to a pinned member
    /// through the slots' attestations: an outsider, or someone nobody here vouched for.
    case unknownSigner(fingerprint: String)
    /// The seal's signer was removed from the vault (a tombstone, learned here or carried by the
    /// copy itself) at `generation`.
    case removedSigner(fingerprint: String, generation: UInt64)
    /// The seal's signer is a key that left the vault's slots here without a removal (a re-salt
    /// by `passwd`, `slot rm` or `rekey` replaced it): whoever knew the old secret can sign with it.
    case retiredSigner(fingerprint: String)
    /// Keyslot `slot` (fingerprint `fingerprint`) holds a key removed from the vault at `generation`.
    case removedKeyInside(slot: Int, fingerprint: String, generation: UInt64)
    /// Keyslot `slot` (fingerprint `fingerprint`) holds a key that left the vault's slots here without
    /// a removal (a re-salt replaced it, or it was the adder of a slot after it left): whoever knew
    /// the old secret could have put it back.
    case retiredKeyInside(slot: Int, fingerprint: String)
    /// Keyslot `slot` ('`label`', `fingerprint`) is neither pinned here nor added by a member this
    /// machine can trace; `previous` is the fingerprint pinned at that position (or label) when a
    /// pinned slot's key changed, nil for a slot nobody pinned.
    case untracedSlot(slot: Int, label: String, fingerprint: String, previous: String?)
    /// An unsigned copy of a vault this machine has seen signed (first at `firstSigned`): whoever
    /// knows a slot's public key can write one.
    case unsignedAfterSigned(firstSigned: UInt64)
    /// The copy's ancestor (or the copy itself) at `ancestorGeneration` is another header than the
    /// one this machine recorded at that generation: two copies were each changed from one.
    case diverged(ancestorGeneration: UInt64)
    /// The path last held vault `previousVaultID` (hex) on this machine, and holds another vault id
    /// now, seen here for the first time: it is not pinned silently.
    case vaultIDChangedAtPath(previousVaultID: String)

    /// Whether the finding names a signer or key that is no member's (removed, replaced, unknown):
    /// a planted copy, for which rekey or `--accept-rotation` would be wrong steps.
    public var namesAnOutsider: Bool {
        switch self {
        case .unknownSigner, .removedSigner, .retiredSigner, .removedKeyInside: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .unknownSigner(let fingerprint):
            return "it was signed by \(fingerprint), a key that is not a member pinned on this machine and that no pinned member added"
        case .removedSigner(let fingerprint, let generation):
            return "it was signed by \(fingerprint), a key removed from the vault at generation \(generation)"
        case .retiredSigner(let fingerprint):
            return "it was signed by \(fingerprint), a key a member replaced (passwd, slot rm or rekey): whoever knew the old secret can sign with it"
        case .removedKeyInside(let slot, let fingerprint, let generation):
            return "keyslot \(slot) holds \(fingerprint), a key removed from the vault at generation \(generation)"
        case .retiredKeyInside(let slot, let fingerprint):
            return "keyslot \(slot) holds \(fingerprint), a key that left the vault on this machine (a member replaced it with "
                + "passwd, slot rm or rekey): whoever knew the old secret could have put it back"
        case .untracedSlot(let slot, let label, let fingerprint, let previous):
            let named = label.isEmpty ? "" : " '\(label)'"
            if let previous {
                return "keyslot \(slot)\(named) now holds \(fingerprint) instead of the pinned \(previous), and no pinned member added it"
            }
            return "keyslot \(slot)\(named) (\(fingerprint)) is not pinned on this machine and no pinned member added it"
        case .unsignedAfterSigned(let firstSigned):
            return "it is unsigned, but this machine has seen the vault signed since generation \(firstSigned): whoever knows a keyslot's "
                + "public key can write an unsigned copy"
        case .diverged(let generation):
            return "its history has another version at generation \(generation) than the one seen here: two copies were each changed"
        case .vaultIDChangedAtPath(let previous):
            return "this path held another vault (id \(previous)) when this machine last saw it, and this vault id is new here"
        }
    }

    /// The reasons of `findings`, joined for one sentence.
    public static func joined(_ findings: [TrustFinding]) -> String {
        findings.map(\.description).joined(separator: "; ")
    }
}
