import KDF
import VaultFormat

// MARK: - Whether a merge would weaken the key derivation

extension KDFParameters {
    /// Whether settings `self` in place of `ours` make guessing the password cheaper.
    ///
    /// Lower means any of: below OWASP's minimum (`meetsRecommendedMinimum`) where ours met it;
    /// for Argon2id on both sides, less memory or less work (memory × iterations); for PBKDF2 on
    /// both sides, fewer iterations; another KDF, unless this one meets the minimum and ours did
    /// not (the costs of two KDFs do not compare, so a change of KDF counts as lower unless it
    /// lifts the vault to the minimum). Parallelism is not counted: it changes the time, not the work.
    func isLower(than ours: KDFParameters) -> Bool {
        if !meetsRecommendedMinimum && ours.meetsRecommendedMinimum { return true }
        switch (self, ours) {
        case (.argon2id(let new), .argon2id(let old)):
            return new.memoryKiB < old.memoryKiB
                || UInt64(new.memoryKiB) * UInt64(new.iterations) < UInt64(old.memoryKiB) * UInt64(old.iterations)
        case (.pbkdf2SHA256(let new), .pbkdf2SHA256(let old)):
            return new.iterations < old.iterations
        case (.argon2id, .pbkdf2SHA256), (.pbkdf2SHA256, .argon2id):
            return !(meetsRecommendedMinimum && !ours.meetsRecommendedMinimum)
        }
    }
}

extension VaultMerge {
    /// A keyslot their side brings whose key derivation is lower than ours: their settings and
    /// those of our password slots. Nil when taking their keyslots weakens nothing.
    ///
    /// A slot of theirs that ours holds byte for byte changes nothing. Any other password slot of
    /// theirs must be no lower (`isLower(than:)`) than at least one password slot of ours: a
    /// vault's guessing cost is that of its cheapest slot. (Today a vault has one slot, and this
    /// compares the two.)
    static func lowerKeyDerivation(theirs: [Keyslot], ours: [Keyslot]) -> (theirs: KDFParameters, ours: [KDFParameters])? {
        let oursKDFs = ours.compactMap(\.passwordKDF)
        guard !oursKDFs.isEmpty else { return nil }
        for slot in theirs where !ours.contains(slot) {
            guard let kdf = slot.passwordKDF else { continue }
            if oursKDFs.allSatisfy({ kdf.isLower(than: $0) }) { return (kdf, oursKDFs) }
        }
        return nil
    }
}

extension Keyslot {
    /// The KDF of a password slot (v1 or format 1.1); nil for other kinds.
    var passwordKDF: KDFParameters? {
        switch self {
        case .password(let password): return password.kdf
        case .x25519(let slot) where slot.kind == .password: return slot.kdf
        default: return nil
        }
    }
}
