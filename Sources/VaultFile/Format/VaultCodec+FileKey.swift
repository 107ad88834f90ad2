import KDF
import SecureMemory

// MARK: - Opening with a known file key

/// Opening a vault whose file key is already known (held by the agent, docs/AGENT.md): no keyslot
/// is tried and no KDF runs. The key is trusted only once the header MAC verifies under it.
extension VaultCodec {
    /// Whether `fileKey` is the file key of `header`: a 32-byte key under which the header MAC
    /// verifies (compared in constant time).
    ///
    /// A key of an older version of the vault (before a `passwd` rotated it) verifies only the
    /// headers sealed under it, so this also picks the right one among several keys of one vault id.
    public static func verifies(_ header: VaultHeader, fileKey: SecureBytes) -> Bool {
        guard fileKey.count == XChaCha20Poly1305.keyLength else { return false }
        return constantTimeEqual(headerMAC(header, fileKey: fileKey), header.mac)
    }

    /// Parses, authenticates and decrypts a whole vault file with its file key.
    ///
    /// Order: header structure and checksum; the header MAC under `fileKey` (another key is
    /// refused with `VaultError.fileKeyRejected` before anything is decrypted); every payload
    /// chunk; contents.
    public static func open(_ file: [UInt8], path: String, fileKey: SecureBytes) throws -> UnlockedVault {
        guard file.count <= VaultLimits.maxFileLength else {
            throw VaultError.limitExceeded("\(path) is \(file.count) bytes; the largest vault this build reads is \(VaultLimits.maxFileLength) bytes")
        }
        let (header, headerLength) = try VaultHeader.parse(file, path: path)
        var payload = CiphertextBytes(bytes: file[headerLength...])
        return try open(header: header, payload: &payload, fileKey: fileKey)
    }

    /// Authenticates a parsed header with `fileKey`, then (format 1.1) opens the keyslot metadata
    /// and decrypts the payload that follows it, as the credential path does once a keyslot has
    /// given the key. No slot is marked as the one that opened the vault: none did.
    static func open(header: VaultHeader, payload: inout some CiphertextSource, fileKey: SecureBytes) throws -> UnlockedVault {
        guard verifies(header, fileKey: fileKey) else { throw VaultError.fileKeyRejected }
        return try open(header: header, payload: &payload, authenticatedBy: fileKey, opened: nil)
    }

    /// Unwraps the file key of `header` with the first of `credentials` that opens a slot and
    /// checks the header MAC under it, without reading the payload (`vaultfile unlock` hands the
    /// key on and decrypts nothing).
    static func unlockFileKey(
        _ header: VaultHeader, credentials: [UnlockCredential], limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?
    ) throws -> SecureBytes {
        let fileKey = try unlock(header, credentials: credentials, limits: limits, willDeriveKey: willDeriveKey).fileKey
        guard verifies(header, fileKey: fileKey) else { throw VaultError.headerTampered }
        return fileKey
    }
}
