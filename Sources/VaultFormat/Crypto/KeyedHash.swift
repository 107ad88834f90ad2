import CSodium
import SecureMemory

// MARK: - Keyed BLAKE2b

/// BLAKE2b-256 under a key (`crypto_generichash`): the clipboard clearer keeps this of what it
/// copied, not the secret, and a random key makes the hash useless for guessing a short code.
public enum KeyedHash {
    /// The 32-byte keyed BLAKE2b hash of `bytes` under `key` (16 to 64 bytes).
    public static func blake2b256(_ bytes: UnsafeRawBufferPointer, key: SecureBytes) -> [UInt8] {
        ensureSodiumInitialised()
        var out = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { keyBytes in
            _ = crypto_generichash(&out, 32, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count),
                                   keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes.count)
        }
        return out
    }
}
