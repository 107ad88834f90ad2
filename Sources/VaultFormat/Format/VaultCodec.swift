import KDF
import SecureMemory
import VaultModel

// MARK: - Creating

/// Creates and opens vaults in memory (the one way in: `open(header:payload:with:)`, Unlocker.swift); the storage layer moves the bytes.
public enum VaultCodec {
    /// Creates a new vault holding `vault`, protected by `password` with `kdf`.
    ///
    /// Does not check the creation floor; callers do (`checkCreationFloor`).
    public static func create(_ vault: Vault, password: SecureBytes, kdf: KDFParameters) throws -> UnlockedVault {
        try kdf.validate()
        let fileKey = SecureBytes(copying: randomBytes(count: 32))
        let vaultID = randomBytes(count: 16)
        let slot = try makePasswordSlot(password: password, kdf: kdf, fileKey: fileKey, vaultID: vaultID)
        let header = VaultHeader(vaultID: vaultID, generation: 0, streamHeader: [UInt8](repeating: 0, count: 24),
                                 keyslots: [.password(slot)])
        let unlocked = UnlockedVault(vault: vault, header: header, fileKey: fileKey)
        return unlocked
    }

    // MARK: Keyslots

    static func makePasswordSlot(password: SecureBytes, kdf: KDFParameters, fileKey: SecureBytes, vaultID: [UInt8]) throws -> PasswordSlot {
        let salt = randomBytes(count: KDFParameters.saltLength)
        let nonce = randomBytes(count: XChaCha20Poly1305.nonceLength)
        let unlimited = KDFLimits(maxMemoryBytes: .max, maxArgon2WorkKiB: .max, maxPBKDF2Iterations: .max)
        let slotKey = try kdf.deriveKey(password: password, salt: salt, limits: unlimited)
        var slot = PasswordSlot(kdf: kdf, salt: salt, nonce: nonce, wrappedKey: [])
        let plainKey = fileKey.withUnsafeBytes { Array($0) }
        var keyCopy = plainKey
        defer { wipe(&keyCopy) }
        slot.wrappedKey = try slotKey.withUnsafeBytes { key in
            try XChaCha20Poly1305.seal(keyCopy, key: key, nonce: nonce, associatedData: slot.associatedData(vaultID: vaultID))
        }
        return slot
    }

    /// The keyslots a password may open, in the order to try them: by kind (the kinds made for a
    /// password first), then in file order. v1 and 1.1 password slots rank alike, so this is file order.
    static func passwordOrder(_ keyslots: [Keyslot]) -> [Keyslot] {
        passwordOrderIndices(keyslots).map { keyslots[$0] }
    }

    static func headerMAC(_ header: VaultHeader, fileKey: SecureBytes) -> [UInt8] {
        let macKey = Subkey.derive(from: fileKey, Subkey.headerMAC)
        return macKey.withUnsafeBytes { HMACSHA256.authenticate(header.authenticatedBytes()[...], key: $0) }
    }
}

// MARK: - Which slots a password tries

extension Keyslot {
    /// Where this kind of slot comes when a password unlocks: lower first; nil when a password
    /// cannot open it. (A future kind a password also opens, such as a recovery code, ranks after 0.)
    var passwordRank: Int? {
        switch self {
        case .password: return 0
        case .x25519(let slot): return slot.kind == .password ? 0 : nil
        case .sshRSA, .mlkem768x25519, .plugin, .unknown: return nil
        }
    }
}
