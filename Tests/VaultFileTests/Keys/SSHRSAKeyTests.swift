import Foundation
import SecureMemory
import TestSupport
import Testing
@testable import VaultFormat
@testable import VaultModel

/// ssh-rsa public keys and OpenSSH RSA private keys (`Keys/SSHRSAKey.swift`), with the keys
/// ssh-keygen made for `Fixtures/v1.4/`, and RSA-OAEP and RSA-PSS through libcrypto.
@Suite struct SSHRSAKeyTests {
    /// `string "ssh-rsa" ‖ string e ‖ string n`, the mpint bodies given as they are.
    static func wire(e: [UInt8], n: [UInt8]) -> [UInt8] { sshString(Array("ssh-rsa".utf8)) + sshString(e) + sshString(n) }

    /// A random odd modulus of exactly `bits` bits, as an mpint body (a public key libcrypto takes).
    static func modulus(bits: Int) -> [UInt8] {
        var bytes = randomBytes(count: (bits + 7) / 8)
        let top = bits % 8 == 0 ? 8 : bits % 8
        bytes[0] = bytes[0] & UInt8((1 << top) - 1) | UInt8(1 << (top - 1))
        bytes[bytes.count - 1] |= 1
        return mpintBytes(bytes)
    }

    static func keyText(_ bits: Int) throws -> [UInt8] {
        Array(try Data(contentsOf: RSAFixtureTests.folder.appendingPathComponent("ssh-rsa-\(bits).key")))
    }

    // MARK: - Public keys

    @Test func test_parsing_readsAnSSHKeygenLineAndGivesItsFingerprint() throws {
        let line = try String(contentsOf: RSAFixtureTests.folder.appendingPathComponent("ssh-rsa-2048.key.pub"), encoding: .utf8)
        let key = try SSHRSAPublicKey(parsing: line.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(key.bits == 2048 && key.modulusBytes == 256 && key.comment == "rsa2048@fixture")
        #expect(key.description + " rsa2048@fixture" == line.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try SSHRSAPublicKey(wire: key.wireBytes) == key)
        #expect(key.fingerprint.hasPrefix("SHA256:") && key.fingerprint.count == 50)
    }

    @Test(arguments: [2048, 2049, 3072, 8192])
    func test_wire_acceptsModuliFrom2048To8192Bits(bits: Int) throws {
        #expect(try SSHRSAPublicKey(wire: Self.wire(e: [1, 0, 1], n: Self.modulus(bits: bits))).bits == bits)
    }

    @Test(arguments: [(8, "8-bit"), (1024, "1,024-bit"), (2047, "2,047-bit"), (8193, "8,193-bit"), (16384, "16,384-bit")])
    func test_wire_refusesAModulusOutsideTheBoundsNamingItsSize(bits: Int, words: String) {
        #expect(throws: VaultError.malformedInput("the ssh-rsa key has a \(words) modulus; vaultfile takes RSA keys of 2,048 to 8,192 bits")) {
            _ = try SSHRSAPublicKey(wire: Self.wire(e: [1, 0, 1], n: Self.modulus(bits: bits)))
        }
    }

    @Test(arguments: [([3] as [UInt8], "3"), ([1, 0, 0, 1], "16,777,217"), ([1, 0, 3], "65,539")])
    func test_wire_refusesAnyExponentBut65537(exponent: [UInt8], shown: String) {
        #expect(throws: VaultError.malformedInput("the ssh-rsa key's public exponent is \(shown); vaultfile takes only 65,537")) {
            _ = try SSHRSAPublicKey(wire: Self.wire(e: exponent, n: Self.modulus(bits: 2048)))
        }
    }

    @Test func test_wire_refusesNonCanonicalNegativeEvenAndTrailing() {
        let n = Self.modulus(bits: 2048)
        var even = n
        even[even.count - 1] &= 0xFE
        for bad in [Self.wire(e: [0, 1, 0, 1], n: n), Self.wire(e: [1, 0, 1], n: [0] + n), Self.wire(e: [1, 0, 1], n: Array(n.dropFirst())),
                    Self.wire(e: [1, 0, 1], n: even), Self.wire(e: [1, 0, 1], n: n) + [0], Self.wire(e: [1, 0, 1], n: []),
                    Array(Self.wire(e: [1, 0, 1], n: n).dropLast()), sshString(Array("ssh-ed25519".utf8)) + sshString([1, 0, 1])] {
            #expect(throws: VaultError.self) { _ = try SSHRSAPublicKey(wire: bad) }
        }
    }

    // MARK: - Private keys

    @Test(arguments: [2048, 4096])
    func test_parse_readsSSHKeygenKeysAndTheirPublicHalf(bits: Int) throws {
        let bytes = try Self.keyText(bits)
        #expect(SSHRSAIdentity.holdsRSAKey(bytes))
        let identity = try SSHRSAIdentity.parse(bytes, source: "k")
        #expect(identity.publicKey.bits == bits && identity.publicKey.comment == "rsa\(bits)@fixture")
    }

    @Test func test_oaep_roundTripsUnderItsLabelOnly() throws {
        let identity = try SSHRSAIdentity.parse(try Self.keyText(2048), source: "k")
        let secret = SecureBytes(copying: randomBytes(count: 32))
        let sealed = try identity.publicKey.oaepEncrypt(secret, label: Array("label A".utf8))
        #expect(sealed.count == 256)
        #expect(identity.oaepDecrypt(sealed, label: Array("label A".utf8))?.constantTimeEquals(secret) == true)
        #expect(identity.oaepDecrypt(sealed, label: Array("label B".utf8)) == nil)
        #expect(identity.oaepDecrypt(sealed, label: []) == nil)
        var flipped = sealed
        flipped[100] ^= 1
        #expect(identity.oaepDecrypt(flipped, label: Array("label A".utf8)) == nil)
        #expect(identity.oaepDecrypt(Array(sealed.dropLast()), label: Array("label A".utf8)) == nil)
        // Fresh randomness: two encryptions of one secret differ.
        #expect(try identity.publicKey.oaepEncrypt(secret, label: Array("label A".utf8)) != sealed)
    }

    @Test func test_pss_verifiesItsOwnSignatureOnly() throws {
        let identity = try SSHRSAIdentity.parse(try Self.keyText(2048), source: "k")
        let other = try SSHRSAIdentity.parse(try Self.keyText(4096), source: "k")
        let message = Array("seal transcript".utf8)
        let signature = try #require(identity.pssSign(message))
        #expect(signature.count == 256 && identity.publicKey.pssVerifies(signature, message: message))
        #expect(!identity.publicKey.pssVerifies(signature, message: message + [0]))
        #expect(!other.publicKey.pssVerifies(signature, message: message))
        var flipped = signature
        flipped[7] ^= 0x40
        #expect(!identity.publicKey.pssVerifies(flipped, message: message))
        #expect(!identity.publicKey.pssVerifies(Array(signature.dropLast()), message: message))
    }

    @Test func test_parse_refusesAnEncryptedKeySayingSo() throws {
        guard SSHKeygen.path != nil else { print("skipped: needs ssh-keygen (apt-get install openssh-client)"); return }
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let key = folder.path("enc")
        try SSHKeygen.make("rsa", bits: 2048, passphrase: "a passphrase", at: key)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: key)))
        #expect(SSHRSAIdentity.holdsRSAKey(bytes))
        #expect(throws: VaultError.malformedInput("k: the key is encrypted (protected by a passphrase); vaultfile reads only unencrypted OpenSSH keys")) {
            _ = try SSHRSAIdentity.parse(bytes, source: "k")
        }
    }

    @Test func test_parse_refusesAPrivateSectionThatDisagrees() throws {
        let identity = try SSHRSAIdentity.parse(try Self.keyText(2048), source: "k")
        let wire = identity.publicKey.wireBytes
        let good = try RSAKeyCorpus.privateSection(of: try Self.keyText(2048))
        #expect(throws: Never.self) { _ = try SSHRSAIdentity.parse(publicWire: wire, privateSection: good, source: "k") }
        for (edit, message) in RSAKeyCorpus.privateSectionEdits {
            var section = good
            edit(&section)
            #expect(throws: VaultError.self, "\(message)") { _ = try SSHRSAIdentity.parse(publicWire: wire, privateSection: section, source: "k") }
            do { _ = try SSHRSAIdentity.parse(publicWire: wire, privateSection: section, source: "k") } catch {
                #expect("\(error)".contains(message), "\(error) lacks \(message)")
            }
        }
    }

    @Test func test_holdsRSAKey_isFalseForOtherKeysAndText() throws {
        let ed = Array(try Data(contentsOf: KeyslotFixtureTests.folder.appendingPathComponent("ssh-ed25519.key")))
        #expect(!SSHRSAIdentity.holdsRSAKey(ed))
        #expect(!SSHRSAIdentity.holdsRSAKey(Array("AGE-SECRET-KEY-1…".utf8)))
        #expect(!SSHRSAIdentity.holdsRSAKey([]))
    }
}
