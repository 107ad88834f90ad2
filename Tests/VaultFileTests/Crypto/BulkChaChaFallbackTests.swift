import CSodium
import TestSupport
import Testing
@testable import VaultFormat

/// When OpenSSL refuses a context, `SecretStream` and `AgeCrypto` fall back to libsodium: the
/// same bytes, the same refusal of damage.
@Suite struct BulkChaChaFallbackTests {
    // MARK: - SecretStream.keystream

    @Test func test_keystream_refusedContextGivesLibsodiumsKeystream() throws {
        var generator = SplitMix(seed: 27)
        let refused = BulkChaCha(refused: .keystream), working = BulkChaCha(.keystream)
        for size in [1, 63, 64, 65, 65_536] {
            var state = crypto_secretstream_xchacha20poly1305_state()
            let key = (0..<32).map { _ in generator.nextByte() }
            var header = [UInt8](repeating: 0, count: SecretStream.headerLength)
            _ = crypto_secretstream_xchacha20poly1305_init_push(&state, &header, key)
            let plain = (0..<size).map { _ in generator.nextByte() }
            var fallback = [UInt8](repeating: 0, count: size), fast = [UInt8](repeating: 0, count: size)
            var copy = state
            fallback.withUnsafeMutableBytes { out in plain.withUnsafeBytes { SecretStream.keystream(&state, bulk: refused, into: out.baseAddress!, $0) } }
            fast.withUnsafeMutableBytes { out in plain.withUnsafeBytes { SecretStream.keystream(&copy, bulk: working, into: out.baseAddress!, $0) } }
            var expected = [UInt8](repeating: 0, count: size)
            withUnsafeBytes(of: &copy.k) { k in
                withUnsafeBytes(of: &copy.nonce) { n in
                    _ = crypto_stream_chacha20_ietf_xor_ic(&expected, plain, UInt64(size), n.baseAddress!.assumingMemoryBound(to: UInt8.self), 2,
                                                          k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            #expect(fallback == expected && fast == expected && fallback != plain, "\(size) bytes")
        }
    }

    // MARK: - AgeCrypto.seal and open

    @Test func test_ageSealAndOpen_refusedContextMatchesLibsodiumAndRefusesDamage() throws {
        var generator = SplitMix(seed: 28)
        let key = (0..<32).map { _ in generator.nextByte() }
        let sealing = BulkChaCha(refused: .seal), opening = BulkChaCha(refused: .open)
        for size in [0, 1, 16, 65_536] {
            let plain = (0..<size).map { _ in generator.nextByte() }
            let nonce = (0..<12).map { _ in generator.nextByte() }
            let theirs = CryptoBuildingBlockTests.libsodiumSeal(plain, nonce: nonce, key: key)
            var mine = [UInt8](repeating: 0, count: size + 16)
            mine.withUnsafeMutableBytes { out in
                plain.withUnsafeBytes { input in key.withUnsafeBytes { AgeCrypto.seal(into: out, input, key: $0, nonce: nonce, bulk: sealing) } }
            }
            #expect(mine == theirs, "\(size) bytes sealed by libsodium")
            var opened = [UInt8](repeating: 0, count: size)
            let ok = opened.withUnsafeMutableBytes { out in
                theirs.withUnsafeBytes { input in key.withUnsafeBytes { AgeCrypto.open(into: out, input, key: $0, nonce: nonce, bulk: opening) } }
            }
            #expect(ok && opened == plain, "\(size) bytes opened by libsodium")
            var damaged = theirs
            damaged[damaged.count - 1] ^= 0x01
            var refused = [UInt8](repeating: 0, count: size)
            let accepted = refused.withUnsafeMutableBytes { out in
                damaged.withUnsafeBytes { input in key.withUnsafeBytes { AgeCrypto.open(into: out, input, key: $0, nonce: nonce, bulk: opening) } }
            }
            #expect(!accepted, "\(size) bytes damaged: refused")
        }
    }
}
