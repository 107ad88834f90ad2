import KDF
import SecureMemory
import VaultModel

// MARK: - Protected identities in the unlock loop

extension VaultCodec {
    /// Tries a protected identity on `header`: nothing (and no passphrase asked) unless the vault
    /// has a keyslot of its kind; else the identities inside, decrypted now (`ProtectedIdentity.open`),
    /// each tried as an identity given unprotected would be. The slot that opens is credited to the
    /// decrypted identity under the protected one's source, so rotations and signing see an
    /// ordinary identity. Nil when none opens a slot.
    /// Only the slots `choice` allows are tried (the passphrase is asked once however often this runs).
    static func openProtected(_ protected: ProtectedIdentity, header: VaultHeader, limits: KDFLimits, choice: SlotChoice = .all) throws -> (SecureBytes, OpenedSlot)? {
        guard protected.mayOpen(header) else { return nil }
        let inside = try protected.open(limits: limits).map { UnlockCredential($0, source: protected.source) }
        // A skippable identity passed over opens nothing (and an empty list would read as "wrong password").
        guard !inside.isEmpty else { return nil }
        do {
            // The identities inside run no KDF: the caps and the budget are not touched.
            return try unlock(header, credentials: inside, limits: limits, willDeriveKey: nil, choice: choice)
        } catch VaultError.noKeyslotOpens {
            return nil
        }
    }
}
