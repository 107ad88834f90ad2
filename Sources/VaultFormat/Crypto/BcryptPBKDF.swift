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
    /// words written little-endian (OpenSSH's byte order, unlike bcrypt's).
    static func bcryptHash(passwordHash: [UInt8], saltHash: [UInt8]) -> [UInt8] {
        let state = EksBlowfish()
        state.expand(key: passwordHash, data: saltHash)
        for _ in 0..<64 {
            state.expand(key: saltHash)
            state.expand(key: passwordHash)
        }
        var cursor = 0
        var words = (0..<8).map { _ in EksBlowfish.word(from: magic, at: &cursor) }
        for _ in 0..<64 {
            for pair in Swift.stride(from: 0, to: 8, by: 2) { (words[pair], words[pair + 1]) = state.encipher(words[pair], words[pair + 1]) }
        }
        let bytes = words.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8 & 0xFF), UInt8($0 >> 16 & 0xFF), UInt8($0 >> 24)] }
        for index in words.indices { words[index] = 0 }
        return bytes
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

// MARK: - Blowfish with the expensive key schedule

/// Blowfish's state (the P-array and four S-boxes, one run of 1,042 words, as `BlowfishConstants`
/// lays them out), its encipherment of one 64-bit block, and bcrypt's key expansion. The state is
/// derived from the passphrase: it is zeroed when released.
final class EksBlowfish {
    /// P1…P18 at 0…17, then S-box 1…4 at 18…1041.
    private let state: UnsafeMutablePointer<UInt32>
    private static let count = BlowfishConstants.pArrayCount + 4 * BlowfishConstants.sBoxCount
    /// S-box 1, S-boxes 2 to 4 after it (a stored pointer: the round function reads it 64 times a block).
    private let sBoxes: UnsafeMutablePointer<UInt32>

    /// Blowfish's initial state.
    init() {
        state = .allocate(capacity: Self.count)
        sBoxes = state + BlowfishConstants.pArrayCount
        precondition(BlowfishConstants.initialState.count == Self.count, "Blowfish's initial state is 1,042 words")
        BlowfishConstants.initialState.withUnsafeBufferPointer { state.initialize(from: $0.baseAddress!, count: Self.count) }
    }

    deinit {
        sodium_memzero(state, Self.count * MemoryLayout<UInt32>.size)
        state.deallocate()
    }

    /// Blowfish's round function: F(x) = ((S1[a] + S2[b]) ⊕ S3[c]) + S4[d], a…d the bytes of x, high first.
    @inline(__always) private func f(_ x: UInt32) -> UInt32 {
        let s = sBoxes
        return ((s[Int(x >> 24)] &+ s[256 + Int(x >> 16 & 0xFF)]) ^ s[512 + Int(x >> 8 & 0xFF)]) &+ s[768 + Int(x & 0xFF)]
    }

    /// The encipherment of the block (`left`, `right`): 16 Feistel rounds.
    func encipher(_ left: UInt32, _ right: UInt32) -> (UInt32, UInt32) {
        var l = left ^ state[0], r = right
        for round in Swift.stride(from: 1, through: 15, by: 2) {
            r ^= f(l) ^ state[round]
            l ^= f(r) ^ state[round + 1]
        }
        return (r ^ state[17], l)
    }

    /// The next big-endian word of `bytes` from `cursor`, wrapping to its start as bcrypt's key
    /// schedule reads keys and salts (`Blowfish_stream2word`).
    static func word(from bytes: [UInt8], at cursor: inout Int) -> UInt32 {
        var word: UInt32 = 0
        for _ in 0..<4 {
            if cursor >= bytes.count { cursor = 0 }
            word = word << 8 | UInt32(bytes[cursor])
            cursor += 1
        }
        return word
    }

    /// bcrypt's key expansion (`Blowfish_expandstate`, or `Blowfish_expand0state` when `data` is
    /// empty): the P-array XORed with `key`'s words, then every word of the state, two at a time,
    /// replaced by the encipherment of the previous pair XORed with the next two words of `data`.
    func expand(key: [UInt8], data: [UInt8] = []) {
        var cursor = 0
        for index in 0..<BlowfishConstants.pArrayCount { state[index] ^= Self.word(from: key, at: &cursor) }
        cursor = 0
        var left: UInt32 = 0, right: UInt32 = 0
        for index in Swift.stride(from: 0, to: Self.count, by: 2) {
            if !data.isEmpty {
                left ^= Self.word(from: data, at: &cursor)
                right ^= Self.word(from: data, at: &cursor)
            }
            (left, right) = encipher(left, right)
            state[index] = left
            state[index + 1] = right
        }
    }
}
