import CSodium
import KDF
import SecureMemory

// MARK: - scrypt: a passphrase

/// Age's scrypt stanza, `-> scrypt SALT LOG2N` and the file key wrapped under
/// `scrypt(N = 2^LOG2N, r = 8, p = 1, S = "age-encryption.org/v1/scrypt" ‖ salt, P = passphrase)`.
///
/// Runs libsodium's `crypto_pwhash_scryptsalsa208sha256_ll`. scrypt takes 128 · r · N bytes;
/// the work factor is refused when that passes the memory cap (`KDFLimits.maxMemoryBytes`),
/// before anything is allocated.
public struct AgeScryptPassphrase: AgeFileRecipient, AgeFileIdentity {
    static let label = "age-encryption.org/v1/scrypt"
    static let saltLength = 16
    /// scrypt's block size parameter, fixed by age.
    static let blockSize: UInt64 = 8
    /// The work factor age writes by default (2^18: 256 MiB).
    public static let defaultLogN = 18

    /// The passphrase.
    let passphrase: SecureBytes
    /// The memory cap, in bytes.
    let maxMemoryBytes: UInt64
    /// The work factor written by `wrap`.
    let logN: Int

    /// A passphrase recipient (to write) and identity (to read). `limits` caps the work factor
    /// read; `logN` is the one written (it must itself be within the cap).
    public init(passphrase: SecureBytes, limits: KDFLimits, logN: Int = AgeScryptPassphrase.defaultLogN) {
        self.passphrase = passphrase
        self.maxMemoryBytes = limits.maxMemoryBytes
        self.logN = logN
    }

    /// The memory scrypt takes at work factor 2^`logN`: 128 · r · N bytes.
    static func memoryBytes(logN: Int) -> UInt64 {
        logN >= 54 ? .max : 128 * blockSize << UInt64(logN)
    }

    /// A passphrase is alone in its file.
    public var mustBeAlone: Bool { true }

    /// `-> scrypt SALT LOG2N` with a fresh salt.
    public func wrap(_ fileKey: SecureBytes) throws(AgeFileError) -> [AgeStanza] {
        let salt = AgeCrypto.randomBytes(count: Self.saltLength)
        let key = try derive(salt: salt, logN: logN)
        return [AgeStanza(type: "scrypt", arguments: [String(decoding: AgeBase64.encodeUnpadded(salt), as: UTF8.self), String(logN)],
                          body: AgeCrypto.wrap(fileKey, key: key))]
    }

    /// Opens the `scrypt` stanza; nil when the passphrase is wrong. (That the stanza is alone is
    /// checked for the whole header by `AgeFile`.)
    public func unwrap(_ stanza: AgeStanza) throws(AgeFileError) -> SecureBytes? {
        guard stanza.kind == .scrypt else { return nil }
        guard stanza.arguments.count == 2 else {
            throw .stanzaMalformed(kind: "scrypt", why: "it has \(stanza.arguments.count) arguments after its type, not 2")
        }
        guard let salt = AgeBase64.decodeUnpadded(stanza.arguments[0].utf8Slice), salt.count == Self.saltLength else {
            throw .stanzaMalformed(kind: "scrypt", why: "its salt is not 16 bytes of canonical base64")
        }
        let logN = try Self.workFactor(stanza.arguments[1])
        guard stanza.body.count == AgeCrypto.wrappedKeyLength else {
            throw .stanzaMalformed(kind: "scrypt", why: "its body is \(stanza.body.count) bytes, not the 32 of a wrapped 16-byte file key")
        }
        let key = try derive(salt: salt, logN: logN)
        guard let fileKey = AgeCrypto.unwrap(stanza.body, key: key) else { throw .wrongPassphrase }
        return fileKey
    }

    /// The work factor's base-two logarithm: decimal digits without a leading zero (`^[1-9][0-9]*$`), at most 2 digits.
    static func workFactor(_ text: String) throws(AgeFileError) -> Int {
        let digits = Array(text.utf8)
        guard (1...2).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }), digits[0] != 0x30,
              let value = Int(text) else {
            throw .stanzaMalformed(kind: "scrypt", why: "its work factor is not a decimal number from 1 without leading zeros")
        }
        return value
    }

    /// The 32-byte wrap key, after the work factor passes the memory cap.
    private func derive(salt: [UInt8], logN: Int) throws(AgeFileError) -> SecureBytes {
        let memory = Self.memoryBytes(logN: logN)
        guard memory <= maxMemoryBytes else { throw .workFactorOverCap(logN: logN, asked: memory, cap: maxMemoryBytes) }
        ensureSodiumInitialised()
        let fullSalt = Array(Self.label.utf8) + salt
        let key = SecureBytes(count: 32)
        let status = key.withUnsafeMutableBytes { out in
            passphrase.withUnsafeBytes { password in
                var empty: UInt8 = 0
                return withUnsafePointer(to: &empty) { fallback in
                    crypto_pwhash_scryptsalsa208sha256_ll(
                        password.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, password.count,
                        fullSalt, fullSalt.count, UInt64(1) << UInt64(logN), UInt32(Self.blockSize), 1,
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
                }
            }
        }
        guard status == 0 else { throw .scryptFailed(logN: logN) }
        return key
    }
}
