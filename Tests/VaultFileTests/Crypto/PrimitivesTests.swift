import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// The AEAD and MAC wrappers against Wycheproof.
@Suite struct PrimitivesTests {
    // MARK: - XChaCha20Poly1305

    @Test(.enabled(if: Wycheproof.available, "../shared/vectors is absent: Wycheproof XChaCha20-Poly1305 vectors skipped"))
    func test_xchacha20poly1305_matchesEveryWycheproofVector() throws {
        let file = try Wycheproof.load("xchacha20_poly1305_test.json")
        var executed = 0, rejectedNonces = 0
        for test in file.tests {
            let key = Hex.decode(test["key"] as! String), nonce = Hex.decode(test["iv"] as! String)
            let aad = Hex.decode(test["aad"] as! String), message = Hex.decode(test["msg"] as! String)
            let ciphertext = Hex.decode(test["ct"] as! String) + Hex.decode(test["tag"] as! String)
            let valid = test["result"] as! String == "valid"
            let id = test["tcId"] as! Int
            defer { executed += 1 }
            if nonce.count != 24 {
                // libsodium's API takes a 24-byte nonce on trust: the wrapper must refuse other sizes.
                #expect(!valid, "tcId \(id)")
                #expect(throws: XChaCha20Poly1305.Failure.invalidNonceLength(nonce.count)) {
                    try key.withUnsafeBytes { try XChaCha20Poly1305.open(ciphertext, key: $0, nonce: nonce, associatedData: aad) }
                }
                rejectedNonces += 1
                continue
            }
            let opened = try? key.withUnsafeBytes { try XChaCha20Poly1305.open(ciphertext, key: $0, nonce: nonce, associatedData: aad) }
            if valid {
                #expect(opened?.withUnsafeBytes { Array($0) } == message, "tcId \(id)")
                let sealed = try key.withUnsafeBytes { try XChaCha20Poly1305.seal(message, key: $0, nonce: nonce, associatedData: aad) }
                #expect(sealed == ciphertext, "tcId \(id)")
            } else {
                #expect(opened == nil, "tcId \(id) must not open")
            }
        }
        #expect(executed == file.numberOfTests)
        #expect(executed == 315)
        #expect(rejectedNonces > 0)
    }

    @Test func test_xchacha20poly1305_rejectsWrongKeySize() {
        #expect(throws: XChaCha20Poly1305.Failure.invalidKeyLength(16)) {
            try [UInt8](repeating: 0, count: 16).withUnsafeBytes {
                try XChaCha20Poly1305.seal([1], key: $0, nonce: [UInt8](repeating: 0, count: 24), associatedData: [])
            }
        }
    }

    // MARK: - HMACSHA256

    @Test(.enabled(if: Wycheproof.available, "../shared/vectors is absent: Wycheproof HMAC-SHA256 vectors skipped"))
    func test_hmacSHA256_matchesEveryWycheproofVector() throws {
        let file = try Wycheproof.load("hmac_sha256_test.json")
        var executed = 0
        for test in file.tests {
            let key = Hex.decode(test["key"] as! String), message = Hex.decode(test["msg"] as! String)
            let tag = Hex.decode(test["tag"] as! String)
            let valid = test["result"] as! String == "valid"
            let verified = key.withUnsafeBytes { HMACSHA256.verify(tag, message: message[...], key: $0) }
            #expect(verified == valid, "tcId \(test["tcId"] ?? "?")")
            executed += 1
        }
        #expect(executed == file.numberOfTests)
    }

    // MARK: - SecretStream

    @Test func test_secretStream_pullsWhatWasPushedWithItsTags() {
        let key = SecureBytes(copying: randomBytes(count: 32))
        var encryptor = SecretStream.Encryptor(key: key)
        let chunks: [[UInt8]] = [[1, 2, 3], [4, 5]]
        let sealed = chunks.enumerated().map { index, chunk in
            var out = [UInt8](repeating: 0, count: chunk.count + SecretStream.overhead)
            chunk.withUnsafeBytes { plain in
                out.withUnsafeMutableBytes { encryptor.push(plain, final: index == chunks.count - 1, into: $0) }
            }
            return out
        }
        encryptor.wipe()
        guard var decryptor = SecretStream.Decryptor(key: key, header: encryptor.header) else {
            Issue.record("the header was refused")
            return
        }
        var opened: [[UInt8]] = [], tags: [SecretStream.Tag?] = []
        for chunk in sealed {
            var out = [UInt8](repeating: 0, count: chunk.count - SecretStream.overhead)
            tags.append(chunk.withUnsafeBytes { input in out.withUnsafeMutableBytes { decryptor.pull(input, into: $0.baseAddress!) } })
            opened.append(out)
        }
        #expect(opened == chunks && tags == [.message, .final])
    }

    @Test func test_secretStream_refusesAModifiedChunkAndAShortHeader() {
        let key = SecureBytes(copying: randomBytes(count: 32))
        var encryptor = SecretStream.Encryptor(key: key)
        var sealed = [UInt8](repeating: 0, count: 1 + SecretStream.overhead)
        [UInt8(7)].withUnsafeBytes { plain in sealed.withUnsafeMutableBytes { encryptor.push(plain, final: true, into: $0) } }
        sealed[sealed.count - 1] ^= 1
        var decryptor = SecretStream.Decryptor(key: key, header: encryptor.header)!
        var out: UInt8 = 0
        #expect(sealed.withUnsafeBytes { decryptor.pull($0, into: &out) } == nil)
        #expect(SecretStream.Decryptor(key: key, header: Array(encryptor.header.dropLast())) == nil)
    }

    // MARK: - Payload.paddedLength

    @Test func test_paddedLength_isPadmeWithAMinimum() {
        #expect(Payload.paddedLength(0) == 1024)
        #expect(Payload.paddedLength(1024) == 1024)
        #expect(Payload.paddedLength(1025) == 1088)
        for length in stride(from: 1, to: 5_000_000, by: 9_973) {
            let padded = Payload.paddedLength(length)
            #expect(padded >= length)
            #expect(Double(padded) <= Double(max(length, 1024)) * 1.12)
            #expect(Payload.paddedLength(padded) == padded, "padding is idempotent")
        }
    }
}
