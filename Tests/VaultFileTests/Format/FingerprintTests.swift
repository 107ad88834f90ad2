import KDF
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// The keyed fingerprints `git textconv` prints in place of values.
@Suite struct FingerprintTests {
    private func unlocked() throws -> UnlockedVault { try VaultCodec.create(Vault(), password: password("pw"), kdf: testKDF) }

    // MARK: - fingerprint: success

    @Test func test_fingerprint_isStableForTheSameValueInTheSamePlace() throws {
        let vault = try unlocked()
        let first = vault.fingerprint(entry: "db/password", field: nil, value: Array("hunter2".utf8))
        #expect(first.count == 16)
        #expect(vault.fingerprint(entry: "db/password", field: nil, value: Array("hunter2".utf8)) == first, "a revert shows as the same fingerprint")
        #expect(vault.fingerprint(entry: "db/password", field: nil, value: Array("hunter3".utf8)) != first)
    }

    // MARK: - fingerprint: what it must not link

    /// The finding: `db/password` and `other/pw` holding one secret had one fingerprint.
    @Test func test_fingerprint_equalValuesOfTwoEntriesOrFieldsDiffer() throws {
        let vault = try unlocked()
        let secret = Array("hunter2".utf8)
        let places: [(String, String?)] = [("db/password", nil), ("other/pw", nil), ("db/password", "old"), ("db/password", "new")]
        let prints = places.map { vault.fingerprint(entry: $0.0, field: $0.1, value: secret) }
        #expect(Set(prints).count == places.count)
    }

    @Test func test_fingerprint_inputIsUnambiguous() throws {
        let vault = try unlocked()
        // Moving bytes between the name, the field and the value changes the input.
        #expect(vault.fingerprint(entry: "a", field: "bc", value: [1]) != vault.fingerprint(entry: "ab", field: "c", value: [1]))
        #expect(vault.fingerprint(entry: "a", field: "", value: [1]) != vault.fingerprint(entry: "a", field: nil, value: [1]))
        #expect(vault.fingerprint(entry: "a", field: nil, value: [0, 1]) != vault.fingerprint(entry: "a\u{0}", field: nil, value: [1]))
    }

    @Test func test_fingerprint_dependsOnTheFileKey() throws {
        let one = try unlocked(), two = try unlocked()
        #expect(one.fingerprint(entry: "a", field: nil, value: [1]) != two.fingerprint(entry: "a", field: nil, value: [1]))
    }

    /// The tag of a head and a message, padded and compressed directly when short, against
    /// `HMACSHA256` of the two joined: every total length around the one- and two-block limits.
    @Test func test_prekeyedHMACOfTwoParts_agreesWithHMACSHA256() {
        var generator = SplitMix(seed: 37)
        for keyLength in [0, 32, 64] {
            let key = (0..<keyLength).map { _ in generator.nextByte() }
            let hmac = key.withUnsafeBytes { PrekeyedHMACSHA256(key: $0) }
            for length in Array(0...130) + [200, 1_000] {
                let message = (0..<length).map { _ in generator.nextByte() }
                let split = length == 0 ? 0 : Int(generator.nextByte()) % (length + 1)
                let expected = key.withUnsafeBytes { HMACSHA256.authenticate(message[...], key: $0) }
                var tag = [UInt8](repeating: 0, count: 32)
                Array(message[..<split]).withUnsafeBytes { head in
                    Array(message[split...]).withUnsafeBytes { rest in
                        tag.withUnsafeMutableBytes { hmac.authenticate(head, rest, into: $0) }
                    }
                }
                #expect(tag == expected, "key \(keyLength), message \(length) split at \(split)")
            }
        }
    }

    @Test func test_prekeyedHMAC_agreesWithHMACSHA256() {
        var generator = SplitMix(seed: 31)
        for keyLength in [0, 1, 32, 63, 64] {
            let key = (0..<keyLength).map { _ in generator.nextByte() }
            let hmac = key.withUnsafeBytes { PrekeyedHMACSHA256(key: $0) }
            for length in [0, 1, 55, 56, 63, 64, 65, 200] {
                let message = (0..<length).map { _ in generator.nextByte() }
                let expected = key.withUnsafeBytes { HMACSHA256.authenticate(message[...], key: $0) }
                #expect(message.withUnsafeBytes { hmac.authenticate($0) } == expected, "key \(keyLength), message \(length)")
            }
        }
    }

    // MARK: - The fingerprint of a keyslot's key (slot list, slot rm, rekey, passwd)

    /// docs/FORMAT.md §3.8's worked example: `x25519:` and the first 8 bytes (16 lower-case hex
    /// digits) of SHA-256 of the slot's 32-byte X25519 public key as the metadata stores it, for
    /// password, keyfile and recovery slots; recipients show as themselves.
    @Test func test_slotFingerprint_isX25519AndSixteenHexDigitsOfSHA256OfThePublicKey() throws {
        // RFC 7748 §6.1: Alice's secret key and its public key.
        let secret = SecureBytes(copying: Hex.decode("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let publicKey = try X25519.publicKey(of: secret)
        #expect(Hex.encode(publicKey) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let created = try VaultCodec.create(Vault(), slots: [(.password(password("pw"), testKDF), ""), (.recovery(RecoveryCode.generate(), testKDF), "")],
                                            now: 0)
        for (index, kind) in [(0, SlotKind.password), (1, .recovery)] {
            let metadata = SlotMetadata(type: kind.rawValue, label: "", publicKey: publicKey, added: 0)
            let described = UnlockedVault.describe(created.header.keyslots[index], index: index, metadata: metadata)
            #expect(described.fingerprint == "x25519:300c9c9603b92a4b", "\(kind)")
        }
        let recipient = try #require(AgeRecipient(publicKey: publicKey))
        let alice = try VaultCodec.create(Vault(), slots: [(.recipient(recipient), "")], now: 0)
        #expect(alice.slots[0].fingerprint == recipient.description, "a recipient is its own fingerprint")
    }
}
