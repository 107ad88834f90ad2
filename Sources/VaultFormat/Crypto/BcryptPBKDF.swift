import CBlowfish
import CSodium
import SecureMemory

// MARK: - bcrypt_pbkdf

/// bcrypt_pbkdf, the key derivation of passphrase-protected OpenSSH private keys, exactly as
/// OpenSSH defines it (`openbsd-compat/bcrypt_pbkdf.c`): PBKDF2's shape with SHA-512 of the
/// passphrase and salt fed to a bcrypt-like hash (`bcryptHash`) in place of HMAC, and the blocks
/// of output interleaved ("strided") into the key rather than concatenated.
///
/// Checked against the vectors of OpenSSH's and Go's x/crypto bcrypt_pbkdf tests and the Python
/// `bcrypt` package (`BcryptPBKDFTests`).
public enum BcryptPBKDF {
    /// The most rounds this build runs: 64 times what `ssh-keygen` writes (16). A key asking more is
    /// refused before any work, as a vault's KDF over its caps is (one round costs about 2 × 67,000
    /// Blowfish encipherments per 32 bytes of output).
    public static let maxRounds: UInt32 = 1_024
    /// The longest salt accepted (ssh-keygen writes 16 bytes).
    public static let maxSaltLength = 1_024
    /// The longest output OpenSSH's function makes: 32 blocks of 32 bytes.
    public static let maxOutputLength = 1_024
    /// The size of one bcrypt hash.
    static let hashLength = 32

    /// `outputLength` bytes derived from `password` and `salt` in `rounds` rounds, in guarded
    /// memory; nil for parameters OpenSSH refuses (an empty password or salt, no rounds, an
    /// output of 0 or more than 1,024 bytes) or this build's caps refuse (`maxRounds`, `maxSaltLength`).
    public static func deriveKey(password: SecureBytes, salt: [UInt8], rounds: UInt32, outputLength: Int) -> SecureBytes? {
        guard password.count > 0, !salt.isEmpty, salt.count <= maxSaltLength, (1...maxRounds).contains(rounds),
              (1...maxOutputLength).contains(outputLength) else { return nil }
        ensureSodiumInitialised()
        var passwordHash = password.withUnsafeBytes { sha512($0) }
        defer { wipe(&passwordHash) }
        let key = SecureBytes(count: outputLength)
        // Each block of 32 bytes supplies every `stride`-th byte of the key, starting at its own index.
        let stride = (outputLength + hashLength - 1) / hashLength
        let perBlock = (outputLength + stride - 1) / stride
        var written = 0
        for block in 1...stride {
            var sum = blockOutput(passwordHash: passwordHash, salt: salt, counter: UInt32(block), rounds: rounds)
            defer { wipe(&sum) }
            key.withUnsafeMutableBytes { out in
                for index in 0..<perBlock {
                    let destination = index * stride + block - 1
                    guard destination < outputLength else { break }
                    out[destination] = sum[index]
                    written += 1
                }
            }
        }
        precondition(written == outputLength, "bcrypt_pbkdf left a byte of its output unwritten")
        return key
    }

    /// One block: T = H(salt ‖ counter) ⊕ H(H(…)) ⊕ … over `rounds` hashes, where each hash is
    /// `bcryptHash(passwordHash, SHA-512(previous output))` and the first takes SHA-512 of the salt
    /// and the big-endian counter.
    private static func blockOutput(passwordHash: [UInt8], salt: [UInt8], counter: UInt32, rounds: UInt32) -> [UInt8] {
        let counterBytes = [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
        var saltHash = (salt + counterBytes).withUnsafeBytes { sha512($0) }
        var output = bcryptHash(passwordHash: passwordHash, saltHash: saltHash)
        var sum = output
        for _ in 1..<rounds {
            wipe(&saltHash)
            saltHash = output.withUnsafeBytes { sha512($0) }
            wipe(&output)
            output = bcryptHash(passwordHash: passwordHash, saltHash: saltHash)
            for index in 0..<hashLength { sum[index] ^= output[index] }
        }
        wipe(&saltHash)
        wipe(&output)
        return sum
    }

    // MARK: The bcrypt hash

    /// The 32 bytes bcrypt_pbkdf's hash makes of two SHA-512 digests: Blowfish keyed by the
    /// expensive key schedule (salted by `saltHash`, keyed by `passwordHash`, then 64 times
    /// re-keyed by each), then "OxychromaticBlowfishSwatDynamite" enciphered 64 times, its eight
    /// words written little-endian (OpenSSH's byte order, unlike bcrypt's). The loops are C
    /// (`CBlowfish`): see its header for why.
    static func bcryptHash(passwordHash: [UInt8], saltHash: [UInt8]) -> [UInt8] {
        precondition(passwordHash.count == 64 && saltHash.count == 64, "bcrypt_pbkdf hashes two SHA-512 digests")
        let state = BlowfishState()
        var output = [UInt8](repeating: 0, count: hashLength)
        // The state lives until the C call returns (its deinit zeroes and frees the words).
        withExtendedLifetime(state) {
            passwordHash.withUnsafeBufferPointer { password in
                saltHash.withUnsafeBufferPointer { salt in
                    magic.withUnsafeBufferPointer { magic in
                        output.withUnsafeMutableBufferPointer { out in
                            vaultfile_bcrypt_hash(state.words, password.baseAddress, salt.baseAddress, magic.baseAddress, out.baseAddress)
                        }
                    }
                }
            }
        }
        return output
    }

    /// The text bcrypt enciphers.
    private static let magic = Array("OxychromaticBlowfishSwatDynamite".utf8)

    /// SHA-512 of `bytes` (libsodium).
    private static func sha512(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        _ = crypto_hash_sha512(&digest, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        return digest
    }
}

// MARK: - Blowfish's state

/// Blowfish's state for one bcrypt hash: the P-array and four S-boxes, one run of 1,042 words as
/// `BlowfishConstants` lays them out, initialised to Blowfish's constants. It is derived from the
/// passphrase once the key schedule has run: zeroed when released.
private final class BlowfishState {
    /// P1…P18 at 0…17, then S-box 1…4 at 18…1041.
    let words: UnsafeMutablePointer<UInt32>
    private static let count = Int(VAULTFILE_BLOWFISH_WORDS)

    init() {
        precondition(BlowfishConstants.initialState.count == Self.count, "Blowfish's initial state is 1,042 words")
        words = .allocate(capacity: Self.count)
        BlowfishConstants.initialState.withUnsafeBufferPointer { words.initialize(from: $0.baseAddress!, count: Self.count) }
    }

    deinit {
        sodium_memzero(words, Self.count * MemoryLayout<UInt32>.size)
        words.deallocate()
    }
}
