import CLibCrypto
import SecureMemory
import VaultModel

// MARK: - RSA keys in libcrypto

/// An RSA key held by libcrypto (an `EVP_PKEY`), public or private. Released with
/// `EVP_PKEY_free`, which clears the private numbers (`BN_clear_free`); nothing of them is ever
/// copied out. Read-only after creation, so it may be shared between threads (libcrypto's keys
/// are reference-counted and safe for concurrent use in operations).
final class RSAKeyHandle: @unchecked Sendable {
    /// The `EVP_PKEY *`.
    let pointer: OpaquePointer
    /// The modulus size in bytes: every OAEP ciphertext and PSS signature has this length.
    let modulusBytes: Int

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
        self.modulusBytes = Int(EVP_PKEY_get_size(pointer))
    }

    deinit { EVP_PKEY_free(pointer) }

    /// A public key from its modulus and exponent (big-endian magnitudes); nil when libcrypto refuses it.
    static func publicKey(n: [UInt8], e: [UInt8]) -> RSAKeyHandle? {
        vaultfile_rsa_key(n, n.count, e, e.count, nil, 0, nil, 0, nil, 0, nil, 0).map(RSAKeyHandle.init)
    }

    /// A private key from OpenSSH's parts (big-endian magnitudes); nil when libcrypto refuses them
    /// or they disagree (n ≠ p·q, a wrong iqmp, or d not e's inverse modulo p − 1 and q − 1).
    static func privateKey(n: [UInt8], e: [UInt8], d: [UInt8], iqmp: [UInt8], p: [UInt8], q: [UInt8]) -> RSAKeyHandle? {
        vaultfile_rsa_key(n, n.count, e, e.count, d, d.count, iqmp, iqmp.count, p, p.count, q, q.count).map(RSAKeyHandle.init)
    }
}

// MARK: - RSA-OAEP and RSA-PSS

/// RSA-OAEP with SHA-256 and MGF1-SHA-256, and RSA-PSS-SHA-256 (MGF1-SHA-256, salt 32 bytes),
/// through libcrypto's EVP_PKEY API. The label is the caller's: a keyslot binds its vault
/// (docs/FORMAT.md §3.10), an age file's ssh-rsa stanza uses age's own.
enum RSAPrimitives {
    /// The OAEP encryption of `plaintext` to `key` under `label`; nil when libcrypto fails (a
    /// plaintext too long for the key).
    static func oaepEncrypt(_ plaintext: UnsafeRawBufferPointer, key: RSAKeyHandle, label: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: key.modulusBytes)
        var length = output.count
        let ok = output.withUnsafeMutableBufferPointer { out in
            vaultfile_rsa_oaep(key.pointer, 1, label, label.count, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self),
                               plaintext.count, out.baseAddress, &length)
        }
        guard ok == 1, length == key.modulusBytes else { return nil }
        return output
    }

    /// The OAEP decryption of `ciphertext` with `key` under `label` into guarded memory; nil on
    /// any failure (a wrong key, another label, a ciphertext of the wrong length or damaged).
    static func oaepDecrypt(_ ciphertext: [UInt8], key: RSAKeyHandle, label: [UInt8]) -> SecureBytes? {
        guard ciphertext.count == key.modulusBytes else { return nil }
        let output = SecureBytes(count: key.modulusBytes)
        var length = key.modulusBytes
        let ok = output.withUnsafeMutableBytes { out in
            vaultfile_rsa_oaep(key.pointer, 0, label, label.count, ciphertext, ciphertext.count,
                               out.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
        }
        guard ok == 1, length <= key.modulusBytes else { return nil }
        return output.slice(0..<length)
    }

    /// The PSS signature of `message` by the private `key`; nil when libcrypto fails.
    static func pssSign(_ message: [UInt8], key: RSAKeyHandle) -> [UInt8]? {
        var signature = [UInt8](repeating: 0, count: key.modulusBytes)
        var length = signature.count
        let ok = vaultfile_rsa_pss(key.pointer, 1, message, message.count, &signature, &length)
        guard ok == 1, length == key.modulusBytes else { return nil }
        return signature
    }

    /// Whether `signature` is a PSS signature of `message` by `key` (exactly the modulus's length,
    /// salt exactly 32 bytes).
    static func pssVerifies(_ signature: [UInt8], message: [UInt8], key: RSAKeyHandle) -> Bool {
        guard signature.count == key.modulusBytes else { return false }
        var copy = signature
        var length = copy.count
        return vaultfile_rsa_pss(key.pointer, 0, message, message.count, &copy, &length) == 1
    }
}
