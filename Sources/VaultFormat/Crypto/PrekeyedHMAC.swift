import CLibCrypto
import CSodium
import SecureMemory

// MARK: - HMAC-SHA256 under one key, many messages

/// HMAC-SHA256 (RFC 2104) under one key of at most 64 bytes for many short messages: the keyed
/// inner and outer SHA-256 states are computed once and copied for each message, which then
/// costs two compressions instead of four, in OpenSSL's SHA-256 (SHA-NI where the processor has
/// it). `git textconv` fingerprints every value of a vault with one subkey; through libsodium's
/// portable SHA-256, re-keyed each time, the HMACs were 60 % of its instructions.
///
/// The two states are key material: they live in guarded memory (`SecureBytes`), and each
/// message's working copy is wiped. Same output as `HMACSHA256.authenticate`
/// (`FingerprintTests`).
final class PrekeyedHMACSHA256: @unchecked Sendable {
    // @unchecked: the states are only read after init; each call works on its own copy.
    private let states = SecureBytes(count: 2 * MemoryLayout<SHA256_CTX>.size)
    /// Where the inner and outer states lie in `states`, which this object keeps for its whole life
    /// (guarded memory never moves): `authenticate(_:_:into:)`, run twice per entry by `git textconv`,
    /// reads them without a generic call into SecureMemory each time.
    private let inner: UnsafePointer<SHA256_CTX>
    private let outer: UnsafePointer<SHA256_CTX>

    /// Keys the two states; `key` is at most one SHA-256 block (64 bytes).
    init(key: UnsafeRawBufferPointer) {
        precondition(key.count <= 64, "a pre-keyed HMAC key fits one block")
        var block = [UInt8](repeating: 0, count: 64)
        defer { wipe(&block) }
        states.withUnsafeMutableBytes { raw in
            let contexts = raw.bindMemory(to: SHA256_CTX.self)
            for (index, pad) in [UInt8(0x36), 0x5C].enumerated() {
                for position in 0..<64 { block[position] = (position < key.count ? key[position] : 0) ^ pad }
                SHA256_Init(&contexts[index])
                SHA256_Update(&contexts[index], block, 64)
            }
        }
        let base = states.withUnsafeBytes { $0.baseAddress!.assumingMemoryBound(to: SHA256_CTX.self) }
        inner = base
        outer = base + 1
    }

    /// Writes the 32-byte tag of `head ‖ message` into `tag`, without joining the two: a fingerprint's
    /// value is hashed where it lies rather than copied after its name and lengths. Short messages
    /// are padded and compressed directly (`vaultfile_hmac_sha256_parts` in the CLibCrypto shim).
    func authenticate(_ head: UnsafeRawBufferPointer, _ message: UnsafeRawBufferPointer, into tag: UnsafeMutableRawBufferPointer) {
        precondition(tag.count == 32, "an HMAC-SHA256 tag is 32 bytes")
        withExtendedLifetime(states) {
            vaultfile_hmac_sha256_parts(inner, outer, head.baseAddress?.assumingMemoryBound(to: UInt8.self), head.count,
                                        message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count,
                                        tag.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// The 32-byte tag of `message`.
    func authenticate(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: 32)
        var state = SHA256_CTX()
        defer { sodium_memzero(&state, MemoryLayout<SHA256_CTX>.size) }
        states.withUnsafeBytes { raw in
            let contexts = raw.bindMemory(to: SHA256_CTX.self)
            state = contexts[0]
            SHA256_Update(&state, message.baseAddress, message.count)
            SHA256_Final(&tag, &state)
            state = contexts[1]
            SHA256_Update(&state, tag, 32)
            SHA256_Final(&tag, &state)
        }
        return tag
    }
}
