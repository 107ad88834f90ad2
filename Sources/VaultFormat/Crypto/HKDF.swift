import CSodium
import SecureMemory

// MARK: - HKDF-SHA256 (RFC 5869)

/// HKDF with HMAC-SHA256, built on libsodium's HMAC-SHA256 *state* API.
///
/// libsodium 1.0.18 has no HKDF, and its one-shot `crypto_auth_hmacsha256` takes 32-byte keys
/// only; the state API (`crypto_auth_hmacsha256_init`) takes a key of any length, which HKDF
/// needs (the extract step keys HMAC with the salt). Checked against RFC 5869's test cases and
/// Wycheproof's HKDF-SHA256 vectors (`CryptoBuildingBlockTests`).
public enum HKDFSHA256 {
    /// The largest output: 255 blocks of 32 bytes (RFC 5869 §2.3).
    public static let maxOutputLength = 255 * 32

    /// Why HKDF refused.
    public enum Failure: CategorizedError, Equatable {
        /// The requested length is 0 or above `maxOutputLength`.
        case invalidLength(Int)

        public var description: String {
            switch self {
            case .invalidLength(let length): return "HKDF-SHA256 was asked for \(length) bytes; it gives 1 to \(maxOutputLength)"
            }
        }

        /// Only a caller asks for a length: its bug.
        public var category: ErrorCategory { .internalFailure }
    }

    /// `HKDF-Expand(HKDF-Extract(salt, ikm), info, length)` into guarded memory.
    public static func deriveKey(
        inputKeyMaterial: UnsafeRawBufferPointer, salt: [UInt8], info: [UInt8], outputLength: Int = 32
    ) throws(Failure) -> SecureBytes {
        let pseudorandomKey = extract(salt: salt, inputKeyMaterial: inputKeyMaterial)
        return try pseudorandomKey.withUnsafeBytes { (prk) throws(Failure) in try expand(pseudorandomKey: prk, info: info, outputLength: outputLength) }
    }

    /// `HKDF-Extract`: `HMAC-SHA256(key = salt, message = ikm)`, 32 bytes. An empty salt is
    /// HMAC's zero key (RFC 5869 §2.2: a string of HashLen zeros, which HMAC pads to the same block).
    public static func extract(salt: [UInt8], inputKeyMaterial: UnsafeRawBufferPointer) -> SecureBytes {
        let output = SecureBytes(count: 32)
        salt.withUnsafeBytes { key in
            var state = HMACState(key: key)
            state.update(inputKeyMaterial)
            output.withUnsafeMutableBytes { state.finish(into: $0) }
        }
        return output
    }

    /// `HKDF-Expand`: `T(i) = HMAC(prk, T(i-1) ‖ info ‖ i)`, concatenated and cut to `outputLength`.
    public static func expand(pseudorandomKey: UnsafeRawBufferPointer, info: [UInt8], outputLength: Int) throws(Failure) -> SecureBytes {
        guard outputLength > 0, outputLength <= maxOutputLength else { throw .invalidLength(outputLength) }
        let output = SecureBytes(count: outputLength)
        let block = SecureBytes(count: 32)
        var produced = 0
        var counter: UInt8 = 1
        while produced < outputLength {
            var state = HMACState(key: pseudorandomKey)
            if counter > 1 { block.withUnsafeBytes { state.update($0) } }
            info.withUnsafeBytes { state.update($0) }
            withUnsafeBytes(of: counter) { state.update($0) }
            block.withUnsafeMutableBytes { state.finish(into: $0) }
            let take = min(32, outputLength - produced)
            output.withUnsafeMutableBytes { out in
                block.withUnsafeBytes { out.baseAddress!.advanced(by: produced).copyMemory(from: $0.baseAddress!, byteCount: take) }
            }
            produced += take
            counter &+= 1
        }
        return output
    }
}

// MARK: - HMAC-SHA256 state

/// One HMAC-SHA256 computation over libsodium's state API, with a key of any length; the state
/// (which holds the padded key) is wiped when finished.
struct HMACState {
    private var state = crypto_auth_hmacsha256_state()

    /// Starts an HMAC under `key` (any length; an empty key is the zero key).
    init(key: UnsafeRawBufferPointer) {
        ensureSodiumInitialised()
        var empty: UInt8 = 0
        withUnsafePointer(to: &empty) { fallback in
            let pointer = key.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback
            _ = crypto_auth_hmacsha256_init(&state, pointer, key.count)
        }
    }

    /// Adds `bytes` to the message.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = crypto_auth_hmacsha256_update(&state, base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    /// Writes the 32-byte tag into `output` (at least 32 bytes) and wipes the state.
    mutating func finish(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= 32, "an HMAC-SHA256 tag is 32 bytes")
        _ = crypto_auth_hmacsha256_final(&state, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
        sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
    }
}
