import KDF
import SecureMemory

// MARK: - Creating and opening

/// Creates and opens format-v1 vaults in memory; the storage layer moves the bytes.
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

    /// Parses, unlocks, authenticates and decrypts a whole vault file.
    ///
    /// Order: header structure and checksum; keyslots, each checked against the KDF caps
    /// before its KDF runs (wrong password, or over a limit); header MAC (tampering); every
    /// payload chunk (damage); contents. Nothing decrypted is returned before
    /// all of it has authenticated.
    ///
    /// `willDeriveKey` is called before each KDF run, so a caller can tell the user what is happening.
    public static func open(
        _ file: [UInt8], path: String, password: SecureBytes, limits: KDFLimits,
        willDeriveKey: ((KDFParameters) -> Void)? = nil
    ) throws -> UnlockedVault {
        guard file.count <= VaultLimits.maxFileLength else {
            throw VaultError.limitExceeded("\(path) is \(file.count) bytes; the largest vault this build reads is \(VaultLimits.maxFileLength) bytes")
        }
        let (header, headerLength) = try VaultHeader.parse(file, path: path)
        var payload = CiphertextBytes(bytes: file[headerLength...])
        return try open(header: header, payload: &payload, password: password, limits: limits, willDeriveKey: willDeriveKey)
    }

    /// Unlocks a parsed header, then authenticates and decrypts the payload that follows it.
    static func open(
        header: VaultHeader, payload: inout some CiphertextSource, password: SecureBytes, limits: KDFLimits,
        willDeriveKey: ((KDFParameters) -> Void)?
    ) throws -> UnlockedVault {
        let fileKey = try unwrapFileKey(header, password: password, limits: limits, willDeriveKey: willDeriveKey)
        guard constantTimeEqual(headerMAC(header, fileKey: fileKey), header.mac) else { throw VaultError.headerTampered }
        let streamKey = Subkey.derive(from: fileKey, Subkey.payloadStream)
        let (plaintext, content) = try Payload.open(&payload, streamHeader: header.streamHeader, key: streamKey)
        let vault = try EntryCodec.decode(plaintext, content: content)
        return UnlockedVault(vault: vault, header: header, fileKey: fileKey)
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

    /// Tries the keyslots a password may open, in `passwordOrder`, until one unwraps the file key.
    ///
    /// Before each slot's KDF runs, its parameters are counted against `limits` (`KDFBudget`):
    /// memory per slot, Argon2id work and PBKDF2 iterations as sums over the slots tried. A slot
    /// that would pass a cap is skipped; when no slot opens and one was skipped, the first cap
    /// error is thrown (over a limit), else `wrongPassword`.
    static func unwrapFileKey(
        _ header: VaultHeader, password: SecureBytes, limits: KDFLimits, willDeriveKey: ((KDFParameters) -> Void)?
    ) throws -> SecureBytes {
        let candidates = passwordOrder(header.keyslots)
        guard !candidates.isEmpty else {
            let types = header.keyslots.compactMap { slot -> String? in
                if case .unknown(let type, _) = slot { return String(type) }
                return nil
            }
            throw VaultError.unsupportedFeature("keyslots of type \(types.joined(separator: ", ")) and no password slot")
        }
        var budget = KDFBudget(limits)
        var capError: KDFError? = nil
        for candidate in candidates {
            switch candidate {
            case .password(let slot):
                do { try budget.spend(on: slot.kdf) } catch { capError = capError ?? error; continue }
                willDeriveKey?(slot.kdf)
                let slotKey = try slot.kdf.deriveKey(password: password, salt: slot.salt, limits: limits)
                let opened = try? slotKey.withUnsafeBytes { key in
                    try XChaCha20Poly1305.open(slot.wrappedKey, key: key, nonce: slot.nonce,
                                               associatedData: slot.associatedData(vaultID: header.vaultID))
                }
                if let opened, opened.count == 32 { return opened }
            case .unknown:
                continue  // `passwordOrder` leaves these out
            }
        }
        if let capError { throw capError }
        throw VaultError.wrongPassword
    }

    /// The keyslots a password may open, in the order to try them: by kind (the kinds made for a
    /// password first), then in file order. Today only password slots qualify, so this is file order.
    static func passwordOrder(_ keyslots: [Keyslot]) -> [Keyslot] {
        keyslots.enumerated()
            .compactMap { index, slot in slot.passwordRank.map { (rank: $0, index: index, slot: slot) } }
            .sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }
            .map(\.slot)
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
        case .unknown: return nil
        }
    }
}
