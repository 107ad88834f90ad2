import CSodium
import SecureMemory

// MARK: - The Ed25519 key the agent signs with under a delegation

/// An Ed25519 key pair made for one delegation (docs/AGENT.md "Delegations"): `vaultfile unlock`
/// makes it, a slot signs a delegation naming its public key, and the agent keeps the secret in
/// guarded memory to sign seals (scheme 3) until the delegation expires or the vault is locked.
/// Only the 32-byte seed travels (in the agent's `add`); both ends derive the pair from it. An
/// ssh-ed25519 slot's seed signs through it too (`SlotSigningKey`).
public struct DelegatedSigningKey: Sendable {
    /// The bytes of a seed.
    public static let seedLength = 32
    /// The bytes of a public key.
    public static let publicKeyLength = 32

    /// The seed (`crypto_sign_seed_keypair`'s input), in guarded memory.
    public let seed: SecureBytes
    /// libsodium's 64-byte secret key (seed ‖ public key), in guarded memory.
    private let secret: SecureBytes
    /// The Ed25519 public key.
    public let publicKey: [UInt8]

    /// A fresh key pair from libsodium's random generator (seed made in guarded memory).
    public init() {
        ensureSodiumInitialised()
        let seed = SecureBytes(count: Self.seedLength)
        seed.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        self.init(seed: seed)!
    }

    /// The key pair of `seed`; nil when it is not `seedLength` bytes.
    public init?(seed: SecureBytes) {
        guard seed.count == Self.seedLength else { return nil }
        ensureSodiumInitialised()
        let secret = SecureBytes(count: Int(crypto_sign_secretkeybytes()))
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyLength)
        seed.withUnsafeBytes { seedBytes in
            secret.withUnsafeMutableBytes { secretBytes in
                _ = crypto_sign_seed_keypair(&publicKey, secretBytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                             seedBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        self.seed = seed
        self.secret = secret
        self.publicKey = publicKey
    }

    /// The Ed25519 signature (64 bytes, `crypto_sign_detached`) of `message`.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        secret.withUnsafeBytes { secretBytes in
            _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretBytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return signature
    }
}
