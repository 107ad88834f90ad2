import SecureMemory
import VaultModel

// MARK: - The encrypted container of a protected OpenSSH key

/// The parts of a passphrase-protected `openssh-key-v1` file (PROTOCOL.key), of any key type:
/// kdf "bcrypt" with its salt and rounds, cipher aes256-ctr or aes256-gcm@openssh.com, the public
/// blob (in the clear) and the encrypted private section with its tag. `OpenSSHProtectedKey` (an
/// ssh-ed25519 identity) and `SSHKeyFile` (every kept ssh key type) read it and decrypt through it.
struct OpenSSHSealedSection: Sendable {
    /// The cipher of the private section.
    let cipher: OpenSSHProtectedKey.Cipher
    /// bcrypt_pbkdf's salt.
    let salt: [UInt8]
    /// bcrypt_pbkdf's rounds (at most `BcryptPBKDF.maxRounds`).
    let rounds: UInt32
    /// The public key's wire blob.
    let publicWire: [UInt8]
    private let encrypted: [UInt8]
    private let tag: [UInt8]

    /// The container in `bytes`, or nil when they are not an OpenSSH key whose cipher is other
    /// than "none". Everything is checked before any passphrase is asked for: the cipher and KDF
    /// names, the rounds against `BcryptPBKDF.maxRounds` (`VaultError.identityWorkOverCap`), the
    /// salt's and private section's lengths, one key, the GCM tag's length, nothing trailing;
    /// `checkKey` sees the public blob where the key's type is judged (its refusal stands).
    static func parseIfProtected(_ bytes: [UInt8], source: String,
                                 checkKey: (ArraySlice<UInt8>) throws(VaultError) -> Void) throws(VaultError) -> OpenSSHSealedSection? {
        func refuse(_ why: String) -> VaultError { .malformedInput("\(source): \(why)") }
        let lines = SSHEd25519Identity.armorLines(bytes)
        guard lines.count >= 3, lines[0].elementsEqual(SSHEd25519Identity.begin.utf8), lines[lines.count - 1].elementsEqual(SSHEd25519Identity.end.utf8),
              let blob = base64Decode(Array(lines[1..<(lines.count - 1)].joined())), blob.starts(with: SSHEd25519Identity.magic) else { return nil }
        var reader = SSHReader(blob[SSHEd25519Identity.magic.count...])
        guard let cipherName = reader.string(), !cipherName.elementsEqual("none".utf8) else { return nil }
        guard let kdfName = reader.string(), let kdfOptions = reader.string(), let count = reader.uint32() else {
            throw refuse("the encrypted key is truncated")
        }
        guard let cipher = OpenSSHProtectedKey.Cipher(rawValue: String(decoding: cipherName, as: UTF8.self)) else {
            throw refuse("the key is encrypted with \(printableName(cipherName)), which vaultfile does not read (it reads aes256-ctr and "
                         + "aes256-gcm@openssh.com, as ssh-keygen writes them)")
        }
        guard kdfName.elementsEqual("bcrypt".utf8) else { throw refuse("the encrypted key's KDF is \(printableName(kdfName)), not bcrypt") }
        var options = SSHReader(kdfOptions)
        guard let salt = options.string(), let rounds = options.uint32(), options.isAtEnd else {
            throw refuse("the encrypted key's bcrypt options are malformed (a salt and a number of rounds)")
        }
        guard rounds <= BcryptPBKDF.maxRounds else {
            throw .identityWorkOverCap(source: source, unit: "bcrypt-pbkdf rounds", asked: UInt64(rounds), limit: UInt64(BcryptPBKDF.maxRounds))
        }
        guard rounds > 0 else { throw refuse("the encrypted key asks for 0 bcrypt-pbkdf rounds") }
        guard (1...BcryptPBKDF.maxSaltLength).contains(salt.count) else {
            throw refuse("the encrypted key's salt is \(salt.count) bytes; vaultfile reads 1 to \(BcryptPBKDF.maxSaltLength)")
        }
        guard count == 1 else { throw refuse("the file holds \(count) keys; vaultfile reads files of one key") }
        guard let publicWire = reader.string(), let length = reader.uint32() else { throw refuse("the encrypted key is truncated") }
        try checkKey(publicWire)
        let maximum = OpenSSHProtectedKey.maxPrivateSectionLength
        guard Int(length) <= maximum else {
            throw refuse("the encrypted private section is \(length) bytes; vaultfile reads at most \(maximum)")
        }
        guard length >= cipher.blockSize, Int(length) % cipher.blockSize == 0 else {
            throw refuse("the encrypted private section (\(length) bytes) is not a whole number of \(cipher.blockSize)-byte blocks")
        }
        let rest = reader.rest
        guard rest.count >= Int(length) + cipher.tagLength else { throw refuse("the encrypted key is truncated") }
        guard rest.count == Int(length) + cipher.tagLength else { throw refuse("the encrypted key has bytes after its key") }
        return OpenSSHSealedSection(cipher: cipher, salt: Array(salt), rounds: rounds, publicWire: Array(publicWire),
                                    encrypted: Array(rest.prefix(Int(length))), tag: Array(rest.suffix(cipher.tagLength)))
    }

    /// The decrypted private section under `passphrase` (to wipe), or nil when the GCM tag fails
    /// or the passphrase is empty (bcrypt_pbkdf takes none; ssh-keygen writes such keys unencrypted).
    func decryptedSection(passphrase: SecureBytes) -> [UInt8]? {
        guard let derived = BcryptPBKDF.deriveKey(password: passphrase, salt: salt, rounds: rounds, outputLength: 32 + cipher.ivLength) else {
            return nil
        }
        let plain: SecureBytes? = derived.withUnsafeBytes { material in
            let key = UnsafeRawBufferPointer(rebasing: material[0..<32])
            let iv = UnsafeRawBufferPointer(rebasing: material[32...])
            switch cipher {
            case .aes256CTR:
                return AES256CTR.decrypt(encrypted[...], key: key, iv: iv)
            case .aes256GCM:
                var nonce = Array(iv)
                defer { wipe(&nonce) }
                return AES256GCM.open(encrypted, tag: tag, key: key, iv: nonce, associatedData: [])
            }
        }
        return plain?.withUnsafeBytes { Array($0) }
    }
}
