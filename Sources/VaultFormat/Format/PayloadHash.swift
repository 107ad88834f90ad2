import CSodium
import SecureMemory
import VaultModel

// MARK: - BLAKE2b-512 of the payload, as it goes by

/// An incremental BLAKE2b-512 (`crypto_generichash`, 64-byte output) of a signed seal's payload:
/// fed every ciphertext byte as it is written or read, so that no byte is read twice.
final class PayloadHasher {
    private let state: UnsafeMutableRawPointer
    private(set) var count = 0

    init() {
        ensureSodiumInitialised()
        state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        _ = crypto_generichash_init(OpaquePointer(state), nil, 0, 64)
    }

    deinit { state.deallocate() }

    /// Hashes `bytes`.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = crypto_generichash_update(OpaquePointer(state),
                                      base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        count += bytes.count
    }

    /// The 64-byte hash of everything hashed.
    func finish() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        _ = crypto_generichash_final(OpaquePointer(state), &out, 64)
        return out
    }
}

// MARK: - Sealing: hash what is written

/// Passes the payload on to `inner` and hashes it; the header goes to `inner` directly.
final class HashingOutput: SealedOutput {
    private let inner: any SealedOutput
    let hasher = PayloadHasher()

    init(_ inner: any SealedOutput) { self.inner = inner }

    func write(_ bytes: UnsafeRawBufferPointer) throws(VaultError) {
        hasher.update(bytes)
        try inner.write(bytes)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(VaultError) {
        try inner.write(bytes, at: offset)
    }
}

// MARK: - Opening: hash what is read

/// A ciphertext source that hashes each range as `Payload.open` reads it. It asks for the whole
/// payload (no entries-only skim, whose verify-only runs read out of order on two threads), so
/// that every byte is read once, in order; a read out of order marks the hash as unusable.
struct HashingCiphertext<Inner: CiphertextSource>: CiphertextSource {
    private var inner: Inner
    let hasher = PayloadHasher()
    private(set) var inOrder = true

    init(_ inner: Inner) { self.inner = inner }

    var count: Int { inner.count }
    var readsEntriesOnly: Bool { false }
    /// The hash is of the chunks in order: never read from two threads.
    var readsInAnyOrder: Bool { false }

    mutating func withBytes(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) throws(VaultError) {
        let hasher = hasher
        let expected = range.lowerBound == hasher.count
        if !expected { inOrder = false }
        try inner.withBytes(range) { bytes in
            if expected { hasher.update(bytes) }
            body(bytes)
        }
    }

    /// The payload hash, or nil when the payload was not read whole and in order.
    func finish() -> [UInt8]? {
        inOrder && hasher.count == count ? hasher.finish() : nil
    }
}
