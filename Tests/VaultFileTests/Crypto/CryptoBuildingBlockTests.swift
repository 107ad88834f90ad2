import CSodium
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat

/// HKDF-SHA256, X25519 and the Ed25519 → X25519 map against published vectors.
@Suite struct CryptoBuildingBlockTests {
    // MARK: - HKDFSHA256

    /// RFC 5869 Appendix A, test cases 1-3 (SHA-256): IKM, salt, info, L, PRK, OKM.
    static let rfc5869: [(ikm: String, salt: String, info: String, length: Int, prk: String, okm: String)] = [
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c", "f0f1f2f3f4f5f6f7f8f9", 42,
         "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
         "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        (hexRange(0x00...0x4f), hexRange(0x60...0xaf), hexRange(0xb0...0xff), 82,
         "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
         "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        ("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "", 42,
         "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
         "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    static func hexRange(_ range: ClosedRange<UInt8>) -> String { Hex.encode(Array(range)) }

    @Test func test_deriveKey_matchesRFC5869TestCases1To3() throws {
        for (index, vector) in Self.rfc5869.enumerated() {
            let ikm = Hex.decode(vector.ikm)
            let prk = ikm.withUnsafeBytes { HKDFSHA256.extract(salt: Hex.decode(vector.salt), inputKeyMaterial: $0) }
            #expect(prk.withUnsafeBytes { Hex.encode(Array($0)) } == vector.prk, "case \(index + 1) PRK")
            let okm = try ikm.withUnsafeBytes {
                try HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: Hex.decode(vector.salt), info: Hex.decode(vector.info), outputLength: vector.length)
            }
            #expect(okm.withUnsafeBytes { Hex.encode(Array($0)) } == vector.okm, "case \(index + 1) OKM")
        }
    }

    @Test(.enabled(if: Wycheproof.available, "../shared/vectors is absent: Wycheproof HKDF-SHA256 vectors skipped"))
    func test_deriveKey_matchesEveryWycheproofVector() throws {
        let file = try Wycheproof.load("hkdf_sha256_test.json")
        var executed = 0
        for test in file.tests {
            let ikm = Hex.decode(test["ikm"] as! String), size = test["size"] as! Int
            let result = try? ikm.withUnsafeBytes {
                try HKDFSHA256.deriveKey(inputKeyMaterial: $0, salt: Hex.decode(test["salt"] as! String),
                                         info: Hex.decode(test["info"] as! String), outputLength: size)
            }
            if test["result"] as! String == "valid" {
                #expect(result?.withUnsafeBytes { Hex.encode(Array($0)) } == test["okm"] as? String, "tcId \(test["tcId"]!)")
            } else {
                #expect(result == nil, "tcId \(test["tcId"]!) must be refused")
            }
            executed += 1
        }
        #expect(executed == file.numberOfTests)
    }

    @Test func test_expand_refusesLengthsOutsideRFC5869() {
        let prk = [UInt8](repeating: 1, count: 32)
        #expect(throws: HKDFSHA256.Failure.invalidLength(0)) { _ = try prk.withUnsafeBytes { try HKDFSHA256.expand(pseudorandomKey: $0, info: [], outputLength: 0) } }
        #expect(throws: HKDFSHA256.Failure.invalidLength(8161)) { _ = try prk.withUnsafeBytes { try HKDFSHA256.expand(pseudorandomKey: $0, info: [], outputLength: 8161) } }
    }

    @Test func test_extract_keyLongerThanABlockIsHashedFirst() throws {
        // A 100-byte salt is longer than SHA-256's 64-byte block: HMAC hashes it (RFC 2104); the state API must too.
        let salt = [UInt8](repeating: 0xAA, count: 100), ikm = Array("input".utf8)
        let long = ikm.withUnsafeBytes { HKDFSHA256.extract(salt: salt, inputKeyMaterial: $0) }
        let viaOneShot = salt.withUnsafeBytes { HMACSHA256.authenticate(ikm[...], key: $0) }
        #expect(long.withUnsafeBytes { Array($0) } == viaOneShot)
    }

    // MARK: - X25519

    /// RFC 7748 §5.2's two single-multiplication vectors: scalar, u-coordinate, output.
    static let rfc7748Multiplications = [
        ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
         "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
         "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
        ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
         "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
         "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
    ]

    @Test func test_sharedSecret_matchesRFC7748Section5_2() throws {
        for (scalar, point, expected) in Self.rfc7748Multiplications {
            let shared = try X25519.sharedSecret(secretKey: SecureBytes(copying: Hex.decode(scalar)), publicKey: Hex.decode(point))
            #expect(shared.withUnsafeBytes { Hex.encode(Array($0)) } == expected)
        }
    }

    @Test func test_sharedSecret_matchesRFC7748Section6_1() throws {
        let alice = SecureBytes(copying: Hex.decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = SecureBytes(copying: Hex.decode("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        let alicePublic = try X25519.publicKey(of: alice), bobPublic = try X25519.publicKey(of: bob)
        #expect(Hex.encode(alicePublic) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(Hex.encode(bobPublic) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let k1 = try X25519.sharedSecret(secretKey: alice, publicKey: bobPublic)
        let k2 = try X25519.sharedSecret(secretKey: bob, publicKey: alicePublic)
        #expect(k1.withUnsafeBytes { Hex.encode(Array($0)) } == "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(k1.constantTimeEquals(k2))
    }

    @Test func test_sharedSecret_refusesLowOrderPoints() {
        let secret = X25519.generateSecretKey()
        // The all-zero point and the point of order 8 from RFC 7748's discussion (and age's tests).
        let lowOrder = ["0000000000000000000000000000000000000000000000000000000000000000",
                        "0100000000000000000000000000000000000000000000000000000000000000",
                        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"]
        for point in lowOrder {
            #expect(throws: X25519.Failure.lowOrderPoint) { _ = try X25519.sharedSecret(secretKey: secret, publicKey: Hex.decode(point)) }
        }
    }

    /// Every encoding of a point of order 1, 2, 4 or 8 (curve and twist; libsodium's list, and
    /// each with the top bit set, which X25519 ignores).
    static let lowOrderPoints: [String] = {
        let points = ["0000000000000000000000000000000000000000000000000000000000000000",
                      "0100000000000000000000000000000000000000000000000000000000000000",
                      "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
                      "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
                      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                      "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
                      "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"]
        return points + points.map { String($0.dropLast(2)) + String(UInt8($0.suffix(2), radix: 16)! | 0x80, radix: 16) }
    }()

    @Test func test_isLowOrder_findsEveryLowOrderEncodingAndNoRealKey() throws {
        for point in Self.lowOrderPoints { #expect(X25519.isLowOrder(Hex.decode(point)), "\(point)") }
        for _ in 0..<200 { #expect(!X25519.isLowOrder(try X25519.publicKey(of: X25519.generateSecretKey()))) }
        // The base point and a key of the wrong length are not low-order points.
        #expect(!X25519.isLowOrder([9] + [UInt8](repeating: 0, count: 31)))
        #expect(!X25519.isLowOrder([UInt8](repeating: 0, count: 31)))
    }

    @Test func test_sharedSecret_refusesWrongLengths() {
        #expect(throws: X25519.Failure.invalidKeyLength(31)) {
            _ = try X25519.sharedSecret(secretKey: X25519.generateSecretKey(), publicKey: [UInt8](repeating: 9, count: 31))
        }
    }

    // MARK: - Ed25519

    @Test func test_ed25519_secretAndPublicMapsAgree() throws {
        // RFC 8032 §7.1 test 1: the seed and its public key.
        let seed = SecureBytes(copying: Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        let edPublic = try #require(Ed25519.publicKey(fromSeed: seed))
        #expect(Hex.encode(edPublic) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let xSecret = try #require(Ed25519.x25519SecretKey(fromSeed: seed))
        let xPublic = try #require(Ed25519.x25519PublicKey(edPublic))
        #expect(try X25519.publicKey(of: xSecret) == xPublic)
    }

    @Test func test_ed25519_x25519PublicKeyRefusesInvalidPoints() {
        // A y-coordinate with no point on the curve, and the identity point (small order).
        #expect(Ed25519.x25519PublicKey([UInt8](repeating: 0xFF, count: 31) + [0x7F]) == nil)
        #expect(Ed25519.x25519PublicKey([1] + [UInt8](repeating: 0, count: 31)) == nil)
        #expect(Ed25519.x25519PublicKey([1, 2, 3]) == nil)
    }

    // MARK: - SecretStream.Decryptor.verify

    /// A stream of `sizes` chunks pushed with `tags` under a random key: the header and each chunk.
    private static func stream(_ sizes: [Int], tags: [UInt8], generator: inout SplitMix) -> (key: SecureBytes, header: [UInt8], chunks: [[UInt8]]) {
        let key = SecureBytes(copying: (0..<32).map { _ in generator.nextByte() })
        var state = crypto_secretstream_xchacha20poly1305_state()
        var header = [UInt8](repeating: 0, count: SecretStream.headerLength)
        key.withUnsafeBytes { _ = crypto_secretstream_xchacha20poly1305_init_push(&state, &header, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        let chunks = zip(sizes, tags).map { size, tag -> [UInt8] in
            let plain = (0..<size).map { _ in generator.nextByte() }
            var out = [UInt8](repeating: 0, count: size + SecretStream.overhead)
            _ = crypto_secretstream_xchacha20poly1305_push(&state, &out, nil, plain, UInt64(size), nil, 0, tag)
            return out
        }
        return (key, header, chunks)
    }

    /// A stream of two MESSAGE chunks (`firstLength` and 40 bytes) and a decryptor at its start.
    private static func twoMessages(seed: UInt64, firstLength: Int) throws -> (SecretStream.Decryptor, [[UInt8]]) {
        var generator = SplitMix(seed: seed)
        let message = crypto_secretstream_xchacha20poly1305_tag_message()
        let (key, header, chunks) = stream([firstLength, 40], tags: [message, message], generator: &generator)
        return (try #require(SecretStream.Decryptor(key: key, header: header)), chunks)
    }

    @Test func test_secretStreamVerify_agreesWithPullOnEveryChunkAndTag() throws {
        var generator = SplitMix(seed: 11)
        let message = crypto_secretstream_xchacha20poly1305_tag_message(), final = crypto_secretstream_xchacha20poly1305_tag_final()
        let rekey = crypto_secretstream_xchacha20poly1305_tag_rekey(), push = crypto_secretstream_xchacha20poly1305_tag_push()
        // Sizes around the 16-byte Poly1305 block and the 64 KiB chunk; every tag, a REKEY in the middle.
        let sizes = [0, 1, 15, 16, 17, 47, 48, 49, 63, 64, 65, 65_536, 3, 100, 65_535, 7]
        let tags = [message, message, push, message, rekey, message, message, message, rekey, message, message, message, push, message, message, final]
        let (key, header, chunks) = Self.stream(sizes, tags: tags, generator: &generator)
        var pulling = try #require(SecretStream.Decryptor(key: key, header: header))
        var verifying = try #require(SecretStream.Decryptor(key: key, header: header))
        defer { pulling.wipe(); verifying.wipe() }
        var plain = [UInt8](repeating: 0, count: 65_536)
        for (index, chunk) in chunks.enumerated() {
            let pulled = chunk.withUnsafeBytes { input in plain.withUnsafeMutableBytes { pulling.pull(input, into: $0.baseAddress!) } }
            let verified = chunk.withUnsafeBytes { verifying.verify($0) }
            #expect(pulled != nil && verified == pulled, "chunk \(index): pull \(String(describing: pulled)), verify \(String(describing: verified))")
        }
    }

    @Test func test_secretStreamVerify_refusesWhatPullRefusesAndKeepsItsState() throws {
        let (decryptor, chunks) = try Self.twoMessages(seed: 12, firstLength: 100)
        var verifying = decryptor
        defer { verifying.wipe() }
        // Every single bit of the first chunk flipped, and the chunk cut short: refused, state unchanged.
        for position in chunks[0].indices {
            for bit in 0..<8 {
                var tampered = chunks[0]
                tampered[position] ^= 1 << bit
                #expect(tampered.withUnsafeBytes { verifying.verify($0) } == nil, "byte \(position) bit \(bit)")
            }
        }
        for length in [0, 1, 16, chunks[0].count - 1] {
            #expect(Array(chunks[0].prefix(length)).withUnsafeBytes { verifying.verify($0) } == nil, "cut to \(length)")
        }
        // The second chunk before the first (reordered): refused.
        #expect(chunks[1].withUnsafeBytes { verifying.verify($0) } == nil)
        // The state was left as it was: the true chunks still verify, in order.
        #expect(chunks[0].withUnsafeBytes { verifying.verify($0) } == .message)
        #expect(chunks[1].withUnsafeBytes { verifying.verify($0) } == .message)
        #expect(chunks[1].withUnsafeBytes { verifying.verify($0) } == nil, "a chunk replayed")
    }

    // MARK: - The OpenSSL keystream under secretstream, and age's payload AEAD (issue 41's speed)

    /// The bytes of a secretstream state, to compare two.
    private static func bytes(of state: crypto_secretstream_xchacha20poly1305_state) -> [UInt8] {
        withUnsafeBytes(of: state) { Array($0) }
    }

    @Test func test_secretStreamPull_matchesLibsodiumPullOnEveryChunkAndTag() throws {
        var generator = SplitMix(seed: 21)
        let message = crypto_secretstream_xchacha20poly1305_tag_message(), final = crypto_secretstream_xchacha20poly1305_tag_final()
        let rekey = crypto_secretstream_xchacha20poly1305_tag_rekey(), push = crypto_secretstream_xchacha20poly1305_tag_push()
        let sizes = [0, 1, 15, 16, 17, 63, 64, 65, 65_536, 3, 65_535, 100, 7]
        let tags = [message, message, push, message, rekey, message, message, message, message, rekey, message, message, final]
        let (key, header, chunks) = Self.stream(sizes, tags: tags, generator: &generator)
        var pulling = try #require(SecretStream.Decryptor(key: key, header: header))
        defer { pulling.wipe() }
        var libsodium = crypto_secretstream_xchacha20poly1305_state()
        let started = key.withUnsafeBytes { crypto_secretstream_xchacha20poly1305_init_pull(&libsodium, header, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        #expect(started == 0)
        for (index, chunk) in chunks.enumerated() {
            var ours = [UInt8](repeating: 0xAA, count: 65_536), theirs = [UInt8](repeating: 0x55, count: 65_536)
            let pulled = chunk.withUnsafeBytes { input in ours.withUnsafeMutableBytes { pulling.pull(input, into: $0.baseAddress!) } }
            var tag: UInt8 = 0
            let status = crypto_secretstream_xchacha20poly1305_pull(&libsodium, &theirs, nil, &tag, chunk, UInt64(chunk.count), nil, 0)
            let length = chunk.count - SecretStream.overhead
            let same = Array(ours[..<length]) == Array(theirs[..<length])
            #expect(status == 0 && pulled == SecretStream.Tag(tag) && same, "chunk \(index) of \(length) bytes")
        }
    }

    @Test func test_secretStreamPull_damagedChunkWritesNothingAndKeepsItsState() throws {
        let (decryptor, chunks) = try Self.twoMessages(seed: 22, firstLength: 1_000)
        var pulling = decryptor
        defer { pulling.wipe() }
        var tampered = chunks[0]
        tampered[500] ^= 0x01
        var output = [UInt8](repeating: 0xEE, count: 1_000)
        #expect(tampered.withUnsafeBytes { input in output.withUnsafeMutableBytes { pulling.pull(input, into: $0.baseAddress!) } } == nil)
        #expect(output.allSatisfy { $0 == 0xEE }, "nothing of a chunk that fails is written")
        #expect(chunks[0].withUnsafeBytes { input in output.withUnsafeMutableBytes { pulling.pull(input, into: $0.baseAddress!) } } == .message)
    }

    @Test func test_secretStreamPush_matchesLibsodiumPushByteForByteAndState() throws {
        var generator = SplitMix(seed: 23)
        let message = crypto_secretstream_xchacha20poly1305_tag_message(), final = crypto_secretstream_xchacha20poly1305_tag_final()
        let rekey = crypto_secretstream_xchacha20poly1305_tag_rekey(), push = crypto_secretstream_xchacha20poly1305_tag_push()
        let key = (0..<32).map { _ in generator.nextByte() }
        var libsodium = crypto_secretstream_xchacha20poly1305_state()
        var header = [UInt8](repeating: 0, count: SecretStream.headerLength)
        _ = crypto_secretstream_xchacha20poly1305_init_push(&libsodium, &header, key)
        var ours = libsodium
        let bulk = BulkChaCha(.keystream)
        let steps: [(Int, UInt8)] = [(0, message), (1, message), (15, push), (16, rekey), (17, message), (64, message),
                                     (65_536, message), (65_535, rekey), (100, message), (7, final)]
        for (size, tag) in steps {
            let plain = (0..<size).map { _ in generator.nextByte() }
            var theirs = [UInt8](repeating: 0, count: size + SecretStream.overhead)
            _ = crypto_secretstream_xchacha20poly1305_push(&libsodium, &theirs, nil, plain, UInt64(size), nil, 0, tag)
            var mine = [UInt8](repeating: 0, count: size + SecretStream.overhead)
            mine.withUnsafeMutableBytes { out in
                plain.withUnsafeBytes { input in
                    if size > 0 { SecretStream.keystream(&ours, bulk: bulk, into: out.baseAddress! + 1, input) }
                    vaultfile_secretstream_push_mac(&ours, out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(size), tag)
                }
            }
            #expect(mine == theirs, "\(size) bytes, tag \(tag)")
            #expect(Self.bytes(of: ours) == Self.bytes(of: libsodium), "the state after \(size) bytes, tag \(tag)")
        }
    }

    @Test func test_secretStreamPush_encryptorsChunksOpenWithLibsodiumPull() throws {
        var generator = SplitMix(seed: 24)
        let key = SecureBytes(copying: (0..<32).map { _ in generator.nextByte() })
        var pushing = SecretStream.Encryptor(key: key)
        defer { pushing.wipe() }
        var libsodium = crypto_secretstream_xchacha20poly1305_state()
        let started = key.withUnsafeBytes { crypto_secretstream_xchacha20poly1305_init_pull(&libsodium, pushing.header, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        #expect(started == 0)
        let sizes = [65_536, 65_536, 1, 0, 4_097]
        for (index, size) in sizes.enumerated() {
            let plain = (0..<size).map { _ in generator.nextByte() }
            var sealed = [UInt8](repeating: 0, count: size + SecretStream.overhead)
            let isFinal = index == sizes.count - 1
            plain.withUnsafeBytes { input in sealed.withUnsafeMutableBytes { pushing.push(input, final: isFinal, into: $0) } }
            var opened = [UInt8](repeating: 0, count: max(size, 1))
            var tag: UInt8 = 0
            let status = crypto_secretstream_xchacha20poly1305_pull(&libsodium, &opened, nil, &tag, sealed, UInt64(sealed.count), nil, 0)
            let expected = isFinal ? crypto_secretstream_xchacha20poly1305_tag_final() : crypto_secretstream_xchacha20poly1305_tag_message()
            #expect(status == 0 && tag == expected && Array(opened.prefix(size)) == plain, "chunk \(index)")
        }
    }

    @Test func test_bulkChaCha_forgetKeepsTheContextGivingLibsodiumsKeystream() throws {
        var generator = SplitMix(seed: 26)
        let bulk = BulkChaCha(.keystream)
        for round in 0..<3 {
            let key = (0..<32).map { _ in generator.nextByte() }, nonce = (0..<12).map { _ in generator.nextByte() }
            let plain = (0..<1_000).map { _ in generator.nextByte() }
            var theirs = [UInt8](repeating: 0, count: plain.count)
            _ = crypto_stream_chacha20_ietf_xor_ic(&theirs, plain, UInt64(plain.count), nonce, 2, key)
            var mine = [UInt8](repeating: 0, count: plain.count)
            let done = mine.withUnsafeMutableBytes { out in
                plain.withUnsafeBytes { input in key.withUnsafeBytes { k in nonce.withUnsafeBytes { n in
                    bulk.xor(into: out.baseAddress!, input, key: k.baseAddress!, nonce: n.baseAddress!, counter: 2)
                } } }
            }
            #expect(done && mine == theirs, "round \(round): the keystream after forget() is libsodium's")
            bulk.forget()
        }
    }

    /// `plain` sealed by libsodium's ChaCha20-Poly1305 (IETF, no associated data): the reference
    /// every bulk seal is compared with.
    static func libsodiumSeal(_ plain: [UInt8], nonce: [UInt8], key: [UInt8]) -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plain.count + 16)
        var written: UInt64 = 0
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(&sealed, &written, plain, UInt64(plain.count), nil, 0, nil, nonce, key)
        return sealed
    }

    @Test func test_bulkChaCha_aeadMatchesLibsodiumAndRefusesDamage() throws {
        var generator = SplitMix(seed: 25)
        let key = (0..<32).map { _ in generator.nextByte() }
        let sealing = BulkChaCha(.seal), opening = BulkChaCha(.open)
        for size in [0, 1, 15, 16, 17, 65_535, 65_536] {
            let plain = (0..<size).map { _ in generator.nextByte() }
            let nonce = (0..<12).map { _ in generator.nextByte() }
            let theirs = CryptoBuildingBlockTests.libsodiumSeal(plain, nonce: nonce, key: key)
            var mine = [UInt8](repeating: 0, count: size + 16)
            let sealed = mine.withUnsafeMutableBytes { out in plain.withUnsafeBytes { input in key.withUnsafeBytes { sealing.seal(into: out, input, key: $0, nonce: nonce) } } }
            #expect(sealed && mine == theirs, "\(size) bytes sealed")
            var opened = [UInt8](repeating: 0, count: size)
            let ok = opened.withUnsafeMutableBytes { out in theirs.withUnsafeBytes { input in key.withUnsafeBytes { opening.open(into: out, input, key: $0, nonce: nonce) } } }
            #expect(ok && opened == plain, "\(size) bytes opened")
            var damaged = theirs
            damaged[damaged.count / 2] ^= 0x80
            var refused = [UInt8](repeating: 0, count: size)
            let accepted = refused.withUnsafeMutableBytes { out in damaged.withUnsafeBytes { input in key.withUnsafeBytes { opening.open(into: out, input, key: $0, nonce: nonce) } } }
            #expect(!accepted && refused.allSatisfy { $0 == 0 }, "\(size) bytes damaged: refused, the output wiped")
        }
    }
}
